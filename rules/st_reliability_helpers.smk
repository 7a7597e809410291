# ST reliability's input functions and wildcard constraints (Python only; the rules are in
# st_reliability.smk).


def st_reliability_config():
    return paper_config("st_reliability")


def st_reliability_datasets():
    return list(st_reliability_config().get("datasets", {}))


def st_reliability_seeds():
    return st_reliability_config().get("seeds", [])


def st_reliability_swap_control_seeds():
    """The swap controls' own seeds, else the paper's."""
    control = st_reliability_config().get("swap_control", {})
    return control.get("seeds", st_reliability_seeds())


def st_reliability_parts(dataset):
    """The dataset's models in training jobs of ``train_batch`` models each (one process
    imports arc-state once per job: seconds, more than a tiny model's training)."""
    models = st_reliability_config()["datasets"][dataset]["models"]
    return split_into_parts(models, st_reliability_config()["train_batch"])


ST_RELIABILITY_WILDCARDS = dict(
    dataset=one_of(st_reliability_datasets()), seed=r"\d+", part=r"\d+"
)


def st_reliability_dataset(wildcards):
    return st_reliability_config()["datasets"][wildcards.dataset]


def st_reliability_prepare_resource(name):
    """resources.prepare_lines for the CRISPRi lines (the raw files streamed, the output table
    held), resources.prepare for a simulated data set."""

    def value(wildcards):
        crispri = st_reliability_dataset(wildcards).get("source") == "crispri"
        step = "prepare_lines" if crispri else "prepare"
        return st_reliability_config()["resources"][step][name]

    return value


def st_reliability_raw(wildcards):
    """The downloaded files of a full-scale data set, one per line (none for the simulator)."""
    spec = st_reliability_dataset(wildcards)
    lines = spec.get("lines", {})
    inputs = {name: download_path(line["download"]) for name, line in lines.items()}
    if spec.get("families_download"):
        inputs["families"] = download_path(spec["families_download"])
    return inputs


def st_reliability_se_datasets():
    """The data sets embedded with SE-600M (full scale; none without a se600m section)."""
    return st_reliability_config().get("se600m", {}).get("datasets", [])


def st_reliability_se_inputs(wildcards):
    """The raw lines of the data set and the SE-600M release files (downloads)."""
    se = st_reliability_config()["se600m"]
    inputs = st_reliability_raw(wildcards)
    for part in ("checkpoint", "protein_embeddings", "config"):
        if se.get(part):
            inputs[part] = download_path(se[part])
    return inputs


def st_reliability_se_embeddings():
    return expand(
        "results/st_reliability/data/{dataset}/se600m.npy",
        dataset=st_reliability_se_datasets(),
    )


def st_reliability_reads_se(models):
    """Whether one of ``models`` reads SE-600M embeddings (encoder se600m)."""
    specs = st_reliability_config()["models"]
    return any(specs[m].get("encoder") == "se600m" for m in models)


def st_reliability_se_files(dataset, models):
    """se_embed's files of the data set, when one of ``models`` reads them; else none (the
    other encoders' jobs keep their inputs)."""
    if not st_reliability_reads_se(models):
        return {}
    base = f"results/st_reliability/data/{dataset}/se600m"
    return {"se_embeddings": f"{base}.npy", "se_record": f"{base}.json"}


def st_reliability_train_se(wildcards):
    names = st_reliability_parts(wildcards.dataset)[int(wildcards.part)]
    return st_reliability_se_files(wildcards.dataset, names)


def st_reliability_evaluate_se(wildcards):
    names = st_reliability_dataset(wildcards)["models"]
    return st_reliability_se_files(wildcards.dataset, names)


def st_reliability_model_spec(name):
    """A model's spec; an se600m model's carries the SE decoder's config (se600m.decoder),
    here rather than in a rule param, so the other models' jobs keep their params."""
    spec = st_reliability_config()["models"][name]
    if spec.get("encoder") != "se600m":
        return spec
    return {**spec, "se_decoder": st_reliability_config()["se600m"].get("decoder", {})}


def st_reliability_part_models(wildcards):
    """{model name: spec} of one training job."""
    names = st_reliability_parts(wildcards.dataset)[int(wildcards.part)]
    return {m: st_reliability_model_spec(m) for m in names}


def st_reliability_model_dirs(wildcards):
    parts = range(len(st_reliability_parts(wildcards.dataset)))
    base = f"results/st_reliability/models/{wildcards.dataset}/seed{wildcards.seed}"
    return [f"{base}/part{p}" for p in parts]


def st_reliability_checkpoints(wildcards):
    """{model name: checkpoint path} of every model of a data set and seed."""
    dirs = st_reliability_model_dirs(wildcards)
    parts = st_reliability_parts(wildcards.dataset)
    return {m: f"{d}/{m}.pt" for d, names in zip(dirs, parts) for m in names}


def st_reliability_evaluation(wildcards):
    """The evaluation keys of a data set: C1's planted control only where C1 is judged
    (its ``dataset``), so the other data sets' evaluations do not pay for it."""
    evaluation = dict(st_reliability_config().get("evaluation", {}))
    planted = evaluation.pop("planted", None)
    if planted and planted["dataset"] == wildcards.dataset:
        evaluation["planted"] = {k: v for k, v in planted.items() if k != "dataset"}
    return evaluation


def st_reliability_evals(wildcards):
    return expand(
        "results/st_reliability/eval/{dataset}/seed{seed}.json",
        dataset=wildcards.dataset,
        seed=st_reliability_seeds(),
    )


def st_reliability_metrics():
    return expand(
        "results/st_reliability/metrics/{dataset}.json",
        dataset=st_reliability_datasets(),
    )


def st_reliability_prepared():
    return expand(
        "results/st_reliability/data/{dataset}/prepare.json",
        dataset=st_reliability_datasets(),
    )


# Scheduling (Snakemake starts the ready jobs of highest priority first): a job's priority is
# its number of models, trained (twice the weight: a model's training costs more than its
# evaluation) or evaluated, so the long training jobs start first and do not end the run
# alone on one core; the summary of a data set, on the run's last stretch, goes next.
ST_RELIABILITY_SUMMARIZE_PRIORITY = 100


def st_reliability_train_priority(wildcards):
    return 2 * len(st_reliability_parts(wildcards.dataset)[int(wildcards.part)])


def st_reliability_evaluate_priority(wildcards):
    return len(st_reliability_dataset(wildcards)["models"])


def st_reliability_resource(step, name):
    return lambda wildcards: st_reliability_config()["resources"][step][name]


ST_RELIABILITY_FIGURES = [
    "spectrum_vs_nulls",
    "gene_map",
    "quality_vs_distance",
    "rho_table",
    "loo_transfer",
    "family_vs_pool",
]


def st_reliability_products():
    """Every file ST reliability's rules make (its target asks for all: paper_products)."""
    datasets, seeds = st_reliability_datasets(), st_reliability_seeds()
    return [
        *[
            f"results/st_reliability/data/{d}/{name}"
            for d in datasets
            for name in ("cells.h5ad", "programs.tsv", "prepare.json")
        ],
        *[
            f"results/st_reliability/data/{d}/se600m.{ext}"
            for d in st_reliability_se_datasets()
            for ext in ("npy", "json")
        ],
        *[
            path
            for d in datasets
            for s in seeds
            for path in st_reliability_model_dirs(wildcards_of(dataset=d, seed=s))
        ],
        *[p for d in datasets for p in st_reliability_evals(wildcards_of(dataset=d))],
        *st_reliability_metrics(),
        "results/st_reliability/swap_control.json",
        *figure_files("st_reliability", ST_RELIABILITY_FIGURES),
        "results/st_reliability/claims.json",
    ]
