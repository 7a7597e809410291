# MaLoRA's input functions and wildcard constraints (Python only; the rules are in
# malora.smk).

MALORA_FIGURES = ["margins", "tradeoff", "alignment", "landscape", "table", "ablations"]


def malora_config():
    return paper_config("malora")


def malora_seeds():
    return malora_config().get("seeds", [])


def malora_full():
    return malora_config().get("full_scale", {})


def malora_full_backbones():
    return list(malora_full().get("backbones", {}))


def malora_full_methods():
    return list(malora_full().get("methods", []))


def malora_backbone(backbone):
    return malora_full()["backbones"][backbone]


def malora_is_nli(backbone):
    return malora_backbone(backbone).get("kind", "clip") == "nli"


def malora_full_tasks():
    """Every task name of the full-scale backbones (the tokenise and pixels rules' wildcard)."""
    return {t for b in malora_full_backbones() for t in malora_backbone(b)["tasks"]}


MALORA_WILDCARDS = dict(
    seed=r"\d+",
    backbone=one_of(malora_full_backbones()),
    method=one_of(malora_full_methods()),
    task=one_of(malora_full_tasks()),
)

MALORA_PIXEL_PARTS = ["validation.npy", "test.npy", "meta.json"]


def malora_section(wildcards=None):
    """The parts of papers.malora the embedded steps read (deterministic params)."""
    section = malora_config()
    return {k: section[k] for k in ("seeds", "merge_rules", "linear", "digits")}


def malora_per_seed(kind):
    return [f"results/malora/metrics/{kind}/seed{s}.json" for s in malora_seeds()]


def malora_full_outputs():
    """The full-scale summary the claims read (none in the embedded default)."""
    if not malora_full():
        return []
    return ["results/malora/full/summary.json"]


def malora_full_resource(name):
    """A GPU job's resource, looked up when the job runs (absent from embedded configs):
    the backbone's own ``resources`` first, then ``full_scale.resources.merge``."""

    def resource(wildcards):
        own = malora_backbone(wildcards.backbone).get("resources", {})
        return own.get(name, malora_full()["resources"]["merge"][name])

    return resource


def malora_full_settings(wildcards):
    """What every full-scale job reads of the config (deterministic params)."""
    full = malora_full()
    keys = ("seeds", "calibration_per_task", "margin", "batch_size", "test_limit")
    return {k: full[k] for k in keys if k in full}


def malora_full_files(backbone):
    """Local paths of one backbone's inputs. CLIP: the model's downloaded files and per task
    its adapter (config, weights) and data (calibration, test shards). NLI: the local model
    folder, per task its adapter and tokenised data (malora_full_tokenise)."""
    spec = malora_backbone(backbone)
    adapters = {
        t: [download_path(n) for n in s["adapter"]] for t, s in spec["tasks"].items()
    }
    if malora_is_nli(backbone):
        extra = {k: spec[k] for k in ("dtype", "batch_size") if k in spec}
        return {
            "kind": "nli",
            "model_dir": spec["model_dir"],
            **extra,
            "tasks": {
                t: {
                    "adapter": adapters[t],
                    "data": f"results/malora/full/{backbone}/data/{t}.json",
                }
                for t in spec["tasks"]
            },
        }
    return {
        "model": [download_path(n) for n in spec["model_files"]],
        "tasks": {
            task: {
                "adapter": adapters[task],
                "pixels": malora_pixels_dir(backbone, task),
                "templates": t["templates"],
            }
            for task, t in spec["tasks"].items()
        },
    }


def malora_pixels_dir(backbone, task):
    return f"results/malora/full/{backbone}/pixels/{task}"


def malora_full_inputs(wildcards):
    """Every file a full-scale job of this backbone reads (for the DAG)."""
    files = malora_full_files(wildcards.backbone)
    paths = list(files.get("model", []))
    for task in files["tasks"].values():
        paths += task["adapter"]
        paths += [task["data"]] if "data" in task else []
        if "pixels" in task:
            paths += [f"{task['pixels']}/{part}" for part in MALORA_PIXEL_PARTS]
    return paths


def malora_pixel_spec(wildcards):
    """What the pixels step reads of one vision task: every test shard, the split's size,
    KnOTS's holdout (its shuffled indices, a download, or a seeded shuffle)."""
    task = malora_backbone(wildcards.backbone)["tasks"][wildcards.task]
    holdout = dict(task["holdout"])
    indices = holdout.pop("indices", None)
    return {
        "test": [download_path(n) for n in task["test"]],
        "rows": task["rows"],
        "holdout": holdout,
        "indices": download_path(indices) if indices else None,
    }


def malora_pixel_model_files(wildcards):
    return [
        download_path(n) for n in malora_backbone(wildcards.backbone)["model_files"]
    ]


def malora_pixel_inputs(wildcards):
    spec = malora_pixel_spec(wildcards)
    extra = [spec["indices"]] if spec["indices"] else []
    return spec["test"] + extra + malora_pixel_model_files(wildcards)


def malora_nli_task_spec(wildcards):
    """What the tokenise step reads of one NLI task: its files and how to read them."""
    backbone = malora_backbone(wildcards.backbone)
    task = backbone["tasks"][wildcards.task]
    keys = ("columns", "label_column", "labels", "holdout")
    return {
        "calibration": [download_path(n) for n in task["calibration"]],
        "test": [download_path(n) for n in task["test"]],
        "max_length": backbone.get("max_length"),
        **{k: task[k] for k in keys if k in task},
    }


def malora_nli_task_inputs(wildcards):
    spec = malora_nli_task_spec(wildcards)
    return sorted(set(spec["calibration"] + spec["test"]))


def malora_full_results():
    return [
        f"results/malora/full/{b}/{m}.json"
        for b in malora_full_backbones()
        for m in malora_full_methods()
    ]


def malora_products():
    """Every file MaLoRA's rules make (its target asks for all: paper_products)."""
    backbones = malora_full_backbones()
    full = [
        *[
            p
            for b in backbones
            for p in malora_full_inputs(wildcards_of(backbone=b))
            if p.startswith("results/malora/")  # tokenised data, pixels (not downloads)
        ],
        *[f"results/malora/full/{b}/individual.json" for b in backbones],
        *malora_full_results(),
        *malora_full_outputs(),
    ]
    return [
        *malora_per_seed("sweep"),
        *malora_per_seed("linear"),
        "results/malora/metrics/digits.json",
        "results/malora/metrics/summary.json",
        *full,
        *figure_files("malora", MALORA_FIGURES),
        "results/malora/claims.json",
    ]
