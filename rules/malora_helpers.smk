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
    """The full-scale summaries the claims read (none in the embedded default)."""
    if not malora_full():
        return []
    return ["results/malora/full/summary.json"]


def malora_full_resource(step, name):
    return lambda wildcards: malora_full()["resources"][step][name]


def malora_full_downloads(backbone):
    """Every downloaded file one backbone's merges read: the base model's files, each task's
    LoRA adapter files and its test/validation data, by role."""
    spec = malora_full()["backbones"][backbone]
    return {
        "model": [download_path(n) for n in spec["model_files"]],
        "adapters": [
            download_path(n) for t in spec["tasks"].values() for n in t["adapter"]
        ],
        "data": [download_path(n) for t in spec["tasks"].values() for n in t["data"]],
    }
