# SBD's input functions and wildcard constraints (Python only; the rules are in sbd.smk).


def sbd_config():
    return paper_config("sbd")


def sbd_datasets():
    return list(sbd_config().get("datasets", {}))


def sbd_methods():
    return list(sbd_config().get("methods", {}))


SBD_WILDCARDS = dict(dataset=one_of(sbd_datasets()), method=one_of(sbd_methods()))


def sbd_raw_input(wildcards):
    """The downloaded file of a full-scale graph; nothing for planted or bundled ones."""
    spec = sbd_config()["datasets"][wildcards.dataset]
    if spec["kind"] != "download":
        return {}
    return {"raw": download_path(spec["download"])}


def sbd_dataset_methods(dataset):
    """The methods run on a data set: its own `methods`, or every method."""
    return list(sbd_config()["datasets"][dataset].get("methods", sbd_methods()))


def sbd_decompositions(suffix):
    """One file per method of the data set, in its order (the script zips them)."""
    return lambda wildcards: [
        f"results/sbd/decompositions/{wildcards.dataset}/{m}.{suffix}"
        for m in sbd_dataset_methods(wildcards.dataset)
    ]


def sbd_metrics():
    return [f"results/sbd/metrics/{d}.json" for d in sbd_datasets()]


def sbd_study_metrics(study):
    """The per-method files of a study (noise_study, sign_study), in its methods' order."""
    methods = sbd_config().get(study, {}).get("methods", [])
    return [f"results/sbd/metrics/{study}/{m}.json" for m in methods]


SBD_FIGURES = [
    "compression_speedup",
    "speedup_vs_cf",
    "greedy_trace",
    "recovery_heatmap",
    "sign_study",
    "time_vs_edges",
]


def sbd_products():
    """Every file SBD's rules make (its target asks for all: paper_products)."""
    datasets = sbd_datasets()
    return [
        *[f"results/sbd/data/{d}.npz" for d in datasets],
        *[
            f"results/sbd/decompositions/{d}/{m}.{ext}"
            for d in datasets
            for m in sbd_dataset_methods(d)
            for ext in ("npz", "json")
        ],
        *sbd_metrics(),
        *sbd_study_metrics("noise_study"),
        "results/sbd/metrics/noise_study/oracles.json",
        *sbd_study_metrics("sign_study"),
        "results/sbd/metrics/scaling_study.json",
        *figure_files("sbd", SBD_FIGURES),
        *table_files("sbd", ["per_dataset"]),
        "results/sbd/claims.json",
    ]
