# PLSA's input functions and wildcard constraints (Python only; the rules are in plsa.smk).


def plsa_config():
    return paper_config("plsa")


def plsa_datasets():
    return list(plsa_config().get("end_to_end", {}).get("datasets", {}))


def plsa_methods():
    return list(plsa_config().get("end_to_end", {}).get("methods", []))


PLSA_WILDCARDS = dict(dataset=one_of(plsa_datasets()), part=r"\d+")


def plsa_dataset(name):
    return plsa_config()["end_to_end"]["datasets"][name]


def plsa_dataset_methods(name):
    """The methods trained on one data set: its own `methods`, else all, in config order."""
    chosen = plsa_dataset(name).get("methods", plsa_methods())
    return [m for m in plsa_methods() if m in chosen]


def plsa_parts(dataset):
    """The data set's methods in training jobs of ``end_to_end.methods_per_job`` each, in
    config order (null: all of them in one job)."""
    per_job = plsa_config()["end_to_end"].get("methods_per_job")
    return split_into_parts(plsa_dataset_methods(dataset), per_job)


def plsa_part_methods(wildcards):
    return plsa_parts(wildcards.dataset)[int(wildcards.part)]


def plsa_run_dirs(dataset):
    """Every training job's output folder of a data set."""
    return [
        f"results/plsa/runs/{dataset}/part{p}" for p in range(len(plsa_parts(dataset)))
    ]


def plsa_method_runs(wildcards):
    """Method name -> the run file its training job wrote."""
    parts = plsa_parts(wildcards.dataset)
    return {
        m: f"results/plsa/runs/{wildcards.dataset}/part{part_of(parts, m)}/{m}.json"
        for m in plsa_dataset_methods(wildcards.dataset)
    }


def plsa_train_runtime(wildcards):
    """Minutes for a training job: ``resources.train.runtime`` is per method, and the job
    trains its methods one after another."""
    per_method = plsa_config()["resources"]["train"]["runtime"]
    return per_method * len(plsa_part_methods(wildcards))


def plsa_raw_inputs(wildcards):
    """Downloaded source and target graphs of a real pair; nothing for CSBM settings."""
    spec = plsa_dataset(wildcards.dataset)
    if "source" not in spec:
        return {}
    return {
        "source": download_path(spec["source"]),
        "target": download_path(spec["target"]),
    }


def plsa_metrics():
    return [f"results/plsa/metrics/{d}.json" for d in plsa_datasets()]


def plsa_figures():
    table = ["accuracy_table"] if plsa_datasets() else []
    return ["error_vs_edges", "runtime_vs_edges", "error_vs_shift", *table]


def plsa_products():
    """Every file PLSA's rules make (its target asks for all: paper_products)."""
    datasets = plsa_datasets()
    return [
        *[f"results/plsa/data/{d}.npz" for d in datasets],
        *[run for d in datasets for run in plsa_run_dirs(d)],
        "results/plsa/metrics/estimator_rate.json",
        "results/plsa/metrics/estimator_shift.json",
        *plsa_metrics(),
        *figure_files("plsa", plsa_figures()),
        "results/plsa/claims.json",
    ]
