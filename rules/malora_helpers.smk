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


MALORA_WILDCARDS = dict(
    seed=r"\d+",
    figure=one_of(MALORA_FIGURES),
    backbone=one_of(malora_full_backbones()),
    method=one_of(malora_full_methods()),
)


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
    """A GPU job's resource, looked up when the job runs (absent from embedded configs)."""
    return lambda wildcards: malora_full()["resources"]["merge"][name]


def malora_full_settings(wildcards):
    """What every full-scale job reads of the config (deterministic params)."""
    full = malora_full()
    keys = ("seeds", "calibration_per_task", "margin", "batch_size", "test_limit")
    return {k: full[k] for k in keys if k in full}


def malora_full_files(backbone):
    """Local paths of one backbone's downloads: model files, and per task its adapter
    (config, weights) and data (calibration, test shards)."""
    spec = malora_full()["backbones"][backbone]
    return {
        "model": [download_path(n) for n in spec["model_files"]],
        "tasks": {
            task: {
                "adapter": [download_path(n) for n in t["adapter"]],
                "calibration": [download_path(n) for n in t["calibration"]],
                "test": [download_path(n) for n in t["test"]],
                "templates": t["templates"],
            }
            for task, t in spec["tasks"].items()
        },
    }


def malora_full_inputs(wildcards):
    """Every downloaded file a full-scale job of this backbone reads (for the DAG)."""
    files = malora_full_files(wildcards.backbone)
    paths = list(files["model"])
    for task in files["tasks"].values():
        paths += task["adapter"] + task["calibration"] + task["test"]
    return paths


def malora_full_results():
    return [
        f"results/malora/full/{b}/{m}.json"
        for b in malora_full_backbones()
        for m in malora_full_methods()
    ]
