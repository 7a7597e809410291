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
