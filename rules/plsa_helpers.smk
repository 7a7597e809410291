# PLSA's input functions and wildcard constraints (Python only; the rules are in plsa.smk).


def plsa_config():
    return paper_config("plsa")


def plsa_datasets():
    return list(plsa_config().get("end_to_end", {}).get("datasets", {}))


def plsa_methods():
    return list(plsa_config().get("end_to_end", {}).get("methods", []))


PLSA_WILDCARDS = dict(dataset=one_of(plsa_datasets()))  # one job trains every method


def plsa_dataset(name):
    return plsa_config()["end_to_end"]["datasets"][name]


def plsa_dataset_methods(name):
    """The methods trained on one data set: its own `methods`, else all, in config order."""
    chosen = plsa_dataset(name).get("methods", plsa_methods())
    return [m for m in plsa_methods() if m in chosen]


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
        *[f"results/plsa/runs/{d}" for d in datasets],
        "results/plsa/metrics/estimator_rate.json",
        "results/plsa/metrics/estimator_shift.json",
        *plsa_metrics(),
        *figure_files("plsa", plsa_figures()),
        "results/plsa/claims.json",
    ]
