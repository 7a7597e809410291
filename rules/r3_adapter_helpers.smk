# 3R-Adapter's input functions and wildcard constraints (Python only; the rules are in
# r3_adapter.smk).

R3_ADAPTER_FIGURES = [
    "collapse",
    "attention",
    "table",
    "ablation",
    "efficiency",
    "pointcloud",
]


def r3_adapter_config():
    return paper_config("r3_adapter")


def r3_adapter_methods():
    return list(r3_adapter_config().get("methods", {}))


def r3_adapter_seeds():
    return r3_adapter_config().get("seeds", [])


def r3_adapter_full():
    return r3_adapter_config().get("full_scale", {})


def r3_adapter_full_backbones():
    return list(r3_adapter_full().get("backbones", {}))


def r3_adapter_full_datasets():
    return list(r3_adapter_full().get("datasets", {}))


R3_ADAPTER_WILDCARDS = dict(
    method=one_of(r3_adapter_methods()),
    backbone=one_of(r3_adapter_full_backbones()),
    dataset=one_of(r3_adapter_full_datasets()),
    seed=r"\d+",
)


def r3_adapter_data(wildcards=None):
    return [f"results/r3_adapter/data/seed{s}.npz" for s in r3_adapter_seeds()]


def r3_adapter_metrics(wildcards=None):
    return [f"results/r3_adapter/metrics/{m}.json" for m in r3_adapter_methods()]


def r3_adapter_runs(wildcards=None):
    return [f"results/r3_adapter/runs/{m}.json" for m in r3_adapter_methods()]


def r3_adapter_figures():
    return [f"results/r3_adapter/figures/{f}.png" for f in R3_ADAPTER_FIGURES]


def r3_adapter_method(wildcards):
    return r3_adapter_config()["methods"][wildcards.method]


# Scheduling (Snakemake starts the ready jobs of highest priority first): the pretraining,
# which every training job waits for, then the longest training jobs, so that the short ones
# fill the last stretch on both cores. Measured per job (whole run, 2026-12-06): relational
# adapters 46-52 s, the other adapters and full fine-tuning 30-42 s, the dustbin bias 19 s,
# the frozen model (evaluation only) 9 s.
R3_ADAPTER_PRETRAIN_PRIORITY = 4


def r3_adapter_train_priority(wildcards):
    spec = r3_adapter_method(wildcards)
    adapters, train = spec.get("adapters", {}), spec.get("train", "none")
    if "relational" in adapters:
        return 3
    if adapters or train == "all":
        return 2
    return 0 if train == "none" else 1


def r3_adapter_roles(wildcards=None):
    return r3_adapter_config()["roles"]


def r3_adapter_resource(step, name):
    """An embedded resource (train) looked up when a job needs it."""
    return lambda wildcards: r3_adapter_config()["resources"][step][name]


# --- full scale (papers.r3_adapter.full_scale) -------------------------------------------
def r3_adapter_full_param(*keys):
    """A value under full_scale, keys formatted with the job's wildcards ("{backbone}")."""

    def get(wildcards):
        node = r3_adapter_full()
        for key in keys:
            node = node[key.format(**dict(wildcards.items()))]
        return node

    return get


def r3_adapter_full_resource(step, name):
    return lambda wildcards: r3_adapter_full()["resources"][step][name]


def r3_adapter_code(wildcards):
    """The backbone's code archive and its submodule archives (downloaded files)."""
    subs = r3_adapter_code_submodules(wildcards)
    spec = r3_adapter_full()["backbones"][wildcards.backbone]
    return {"archive": download_path(spec["code"])} | {
        f"sub_{p}": f for p, f in subs.items()
    }


def r3_adapter_code_submodules(wildcards):
    spec = r3_adapter_full()["backbones"][wildcards.backbone]
    return {
        path: download_path(key) for path, key in spec.get("submodules", {}).items()
    }


def r3_adapter_checkpoint(wildcards):
    return download_path(
        r3_adapter_full()["backbones"][wildcards.backbone]["checkpoint"]
    )


def r3_adapter_checkpoint_key(wildcards):
    """The checkpoint's name under downloads (its sha256, pinned or locked, is checked again
    before it is unpickled)."""
    return r3_adapter_full()["backbones"][wildcards.backbone]["checkpoint"]


def r3_adapter_dataset_files(wildcards):
    spec = r3_adapter_full()["datasets"][wildcards.dataset]
    return [download_path(key) for key in spec.get("downloads", [])]


def r3_adapter_full_grid():
    """(backbone, dataset, method) of the full-scale grid that the claims read. A
    licence-gated data set (BEDLAM) is opt-in: it joins once its ``path`` is set (the user
    has the data); until then its jobs are not inputs, so the claims never wait on a job that
    can only fail."""
    full = r3_adapter_full()
    datasets = [
        d
        for d, spec in full.get("datasets", {}).items()
        if spec.get("format") != "gated" or spec.get("path")
    ]
    return [
        (b, d, m)
        for b in full.get("backbones", {})
        for d in datasets
        for m in full.get("methods", [])
    ]


def r3_adapter_full_runs():
    """The summary of every (backbone, dataset, method) of the full-scale grid."""
    return [
        f"results/r3_adapter/full/metrics/{b}/{d}/{m}.json"
        for b, d, m in r3_adapter_full_grid()
    ]


def r3_adapter_full_seed_runs(wildcards):
    return [
        f"results/r3_adapter/full/runs/{wildcards.backbone}/{wildcards.dataset}/"
        f"{wildcards.method}/seed{s}.json"
        for s in r3_adapter_full().get("seeds", [])
    ]


def r3_adapter_products():
    """Every file 3R-Adapter's rules make (its target asks for all: paper_products)."""
    grid = r3_adapter_full_grid()
    runs = [
        run
        for b, d, m in grid
        for run in r3_adapter_full_seed_runs(
            wildcards_of(backbone=b, dataset=d, method=m)
        )
    ]
    per_method = [
        ("models", "pt"),
        ("runs", "json"),
        ("metrics", "json"),
        ("pointclouds", "ply"),
    ]
    return [
        *r3_adapter_data(),
        "results/r3_adapter/backbone/backbone.pt",
        "results/r3_adapter/backbone/backbone.json",
        *[
            f"results/r3_adapter/{kind}/{m}.{ext}"
            for m in r3_adapter_methods()
            for kind, ext in per_method
        ],
        *[f"results/r3_adapter/full/code/{b}" for b in r3_adapter_full_backbones()],
        *sorted({f"results/r3_adapter/full/pairs/{b}/{d}.npz" for b, d, _ in grid}),
        *runs,
        *r3_adapter_full_runs(),
        *figure_files("r3_adapter", R3_ADAPTER_FIGURES),
        "results/r3_adapter/claims.json",
    ]
