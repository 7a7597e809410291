# QSurv's input functions and wildcard constraints (Python only; the rules are in qsurv.smk).


def qsurv_config():
    return paper_config("qsurv")


def qsurv_synthetic():
    return list(qsurv_config().get("synthetic", {}).get("scenarios", []))


def qsurv_datasets():
    return qsurv_synthetic() + list(qsurv_config().get("real_datasets", {}))


QSURV_WILDCARDS = dict(dataset=one_of(qsurv_datasets()), part=r"\d+")


def qsurv_methods(dataset):
    key = "synthetic_methods" if dataset in qsurv_synthetic() else "real_methods"
    return qsurv_config()[key]


def qsurv_training(wildcards):
    """The shared training keys; on a real data set, papers.qsurv.real_training over them."""
    q = qsurv_config()
    if wildcards.dataset in qsurv_synthetic():
        return q["training"]
    return {**q["training"], **q.get("real_training", {})}


def qsurv_source(dataset):
    if dataset in qsurv_synthetic():
        return "synthetic"
    return qsurv_config()["real_datasets"][dataset]["source"]


def qsurv_raw_input(wildcards):
    spec = qsurv_config()["real_datasets"].get(wildcards.dataset, {})
    return [download_path(spec["download"])] if "download" in spec else []


def qsurv_prepare_params(wildcards):
    q = qsurv_config()
    real = q.get("real_datasets", {}).get(wildcards.dataset, {})
    return {
        "dataset": wildcards.dataset,
        "source": qsurv_source(wildcards.dataset),
        "seeds": real.get("seeds", q["seeds"]),
        "fractions": q["split"],
        "n_samples": q["synthetic"]["n_samples"],
        "censoring_rate": q["synthetic"]["censoring_rate"],
        "prediction_grid_points": q["evaluation"]["prediction_grid_points"],
        "truth_grid_points": q["evaluation"]["truth_grid_points"],
        "truth_quantile": q["evaluation"]["truth_quantile"],
    }


def qsurv_parts(dataset):
    """The data set's methods in training jobs of ``methods_per_job`` each, in the order of
    qsurv_methods (null: all of them in one job)."""
    return split_into_parts(qsurv_methods(dataset), qsurv_config()["methods_per_job"])


def qsurv_part_methods(wildcards):
    return qsurv_parts(wildcards.dataset)[int(wildcards.part)]


def qsurv_method_specs(wildcards):
    """Method name -> config ``methods.<name>``, for the methods of one training job."""
    methods = qsurv_config()["methods"]
    return {m: methods[m] for m in qsurv_part_methods(wildcards)}


def qsurv_run_dir(dataset, part):
    return f"results/qsurv/runs/{dataset}/part{part}"


def qsurv_run_dirs(wildcards):
    """Every training job's output folder of a data set."""
    parts = range(len(qsurv_parts(wildcards.dataset)))
    return [qsurv_run_dir(wildcards.dataset, p) for p in parts]


def qsurv_method_run_dirs(wildcards):
    """Method name -> the folder its training job wrote its files to (repro.qsurv.runs)."""
    parts = qsurv_parts(wildcards.dataset)
    return {
        m: qsurv_run_dir(wildcards.dataset, part_of(parts, m))
        for m in qsurv_methods(wildcards.dataset)
    }


def qsurv_train_runtime(wildcards):
    """Minutes for a training job: ``resources.train.runtime`` is per method, and the job
    trains its methods one after another."""
    per_method = qsurv_config()["resources"]["train"]["runtime"]
    return per_method * len(qsurv_part_methods(wildcards))


def qsurv_metrics(datasets):
    return [f"results/qsurv/metrics/{d}.json" for d in datasets]


def qsurv_hazard_figure_methods(wildcards):
    """The hazard-curves figure's methods: `figures.hazard_methods`, then every method and
    baseline of a hazard-L1 claim on this scenario, so that the figure draws what they judge.
    """
    q = qsurv_config()
    names = list(q["figures"]["hazard_methods"])
    for claim in q.get("claims", {}).values():
        if (
            claim.get("dataset") == wildcards.dataset
            and claim.get("metric") == "hazard_l1"
        ):
            names += [claim["method"], *claim["baselines"]]
    trained = set(q.get("synthetic_methods", []))
    return [m for m in dict.fromkeys(names) if m in trained]


def qsurv_figures():
    hazards = [f"hazard_curves_{d}" for d in qsurv_synthetic()]
    ablation = ["ablation"] if qsurv_synthetic() else []
    return ["quadrature_error", "metrics_table", "training_time", *hazards, *ablation]


def qsurv_products():
    """Every file QSurv's rules make (its target asks for all: paper_products)."""
    datasets = qsurv_datasets()
    return [
        *[f"results/qsurv/data/{d}.npz" for d in datasets],
        *[r for d in datasets for r in qsurv_run_dirs(wildcards_of(dataset=d))],
        "results/qsurv/metrics/quadrature.json",
        *qsurv_metrics(datasets),
        *figure_files("qsurv", qsurv_figures()),
        *table_files("qsurv", ["metrics_table"]),
        "results/qsurv/claims.json",
    ]
