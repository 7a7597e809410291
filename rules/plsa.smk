# PLSA: graph domain adaptation under conditional structure shift.
# Estimator studies (no training): error of the target edge class-pair distribution vs
# edges and vs shift type. End to end: prepare CSBM graphs -> train a GNN per method and
# seed (one job per data set) -> evaluate per data set -> figures (from metrics) -> claims.


include: "plsa_helpers.smk"


# Both estimator studies in one job: each is a second or two of work after several seconds
# of Python start-up.
rule plsa_estimator_study:
    output:
        rate="results/plsa/metrics/estimator_rate.json",
        shift="results/plsa/metrics/estimator_shift.json",
    log:
        "logs/plsa/estimator_study.log",
    benchmark:
        "results/plsa/benchmarks/estimator_study.tsv"
    conda:
        "../envs/plsa.yaml"
    params:
        rate=lookup(dpath="papers/plsa/estimator_study", within=config),
        shift=lookup(dpath="papers/plsa/shift_study", within=config),
    script:
        "../scripts/plsa_estimator_study.py"


rule plsa_prepare:
    input:
        unpack(plsa_raw_inputs),
    output:
        data="results/plsa/data/{dataset}.npz",
    log:
        "logs/plsa/prepare/{dataset}.log",
    wildcard_constraints:
        **PLSA_WILDCARDS,
    conda:
        "../envs/plsa.yaml"
    params:
        spec=lambda wildcards: {
            k: v for k, v in plsa_dataset(wildcards.dataset).items() if k != "methods"
        },
        seeds=lookup(dpath="papers/plsa/end_to_end/seeds", within=config),
    script:
        "../scripts/plsa_prepare.py"


rule plsa_train:
    input:
        data="results/plsa/data/{dataset}.npz",
    output:
        runs=directory("results/plsa/runs/{dataset}"),
    log:
        "logs/plsa/train/{dataset}.log",
    benchmark:
        "results/plsa/benchmarks/train/{dataset}.tsv"
    wildcard_constraints:
        **PLSA_WILDCARDS,
    conda:
        "../envs/plsa.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/plsa/resources/train/gpu", within=config),
        mem_mb=lookup(dpath="papers/plsa/resources/train/mem_mb", within=config),
        runtime=lookup(dpath="papers/plsa/resources/train/runtime", within=config),
    params:
        methods=lambda wildcards: plsa_dataset_methods(wildcards.dataset),
        training=lookup(dpath="papers/plsa/end_to_end/training", within=config),
        device=rule_device,
    script:
        "../scripts/plsa_train.py"


rule plsa_evaluate:
    input:
        runs="results/plsa/runs/{dataset}",
    output:
        metrics="results/plsa/metrics/{dataset}.json",
    log:
        "logs/plsa/evaluate/{dataset}.log",
    wildcard_constraints:
        **PLSA_WILDCARDS,
    conda:
        "../envs/plsa.yaml"
    params:
        methods=lambda wildcards: plsa_dataset_methods(wildcards.dataset),
    script:
        "../scripts/plsa_evaluate.py"


rule plsa_figure_rate:
    input:
        metrics="results/plsa/metrics/estimator_rate.json",
    output:
        png=report(
            "results/plsa/figures/error_vs_edges.png",
            caption="../workflow/report/plsa_error_vs_edges.rst",
            category="PLSA",
        ),
        pdf="results/plsa/figures/error_vs_edges.pdf",
    log:
        "logs/plsa/figure_rate.log",
    conda:
        "../envs/plsa.yaml"
    params:
        figure="error_vs_edges",
    script:
        "../scripts/plsa_figure.py"


use rule plsa_figure_rate as plsa_figure_runtime with:
    output:
        png=report(
            "results/plsa/figures/runtime_vs_edges.png",
            caption="../workflow/report/plsa_runtime_vs_edges.rst",
            category="PLSA",
        ),
        pdf="results/plsa/figures/runtime_vs_edges.pdf",
    log:
        "logs/plsa/figure_runtime.log",
    params:
        figure="runtime_vs_edges",


use rule plsa_figure_rate as plsa_figure_shift with:
    input:
        metrics="results/plsa/metrics/estimator_shift.json",
    output:
        png=report(
            "results/plsa/figures/error_vs_shift.png",
            caption="../workflow/report/plsa_error_vs_shift.rst",
            category="PLSA",
        ),
        pdf="results/plsa/figures/error_vs_shift.pdf",
    log:
        "logs/plsa/figure_shift.log",
    params:
        figure="error_vs_shift",


use rule plsa_figure_rate as plsa_figure_accuracy with:
    input:
        metrics=plsa_metrics(),
    output:
        png=report(
            "results/plsa/figures/accuracy_table.png",
            caption="../workflow/report/plsa_accuracy_table.rst",
            category="PLSA",
        ),
        pdf="results/plsa/figures/accuracy_table.pdf",
    log:
        "logs/plsa/figure_accuracy.log",
    params:
        figure="accuracy_table",
        metrics=lookup(dpath="papers/plsa/figures/table_metrics", within=config),


rule plsa_claims:
    input:
        rate="results/plsa/metrics/estimator_rate.json",
        shift="results/plsa/metrics/estimator_shift.json",
        metrics=plsa_metrics(),
        figures=[f"results/plsa/figures/{name}.png" for name in plsa_figures()],
    output:
        claims="results/plsa/claims.json",
    log:
        "logs/plsa/claims.log",
    conda:
        "../envs/plsa.yaml"
    params:
        claims=lookup(dpath="papers/plsa/claims", within=config),
        checks=lookup(dpath="papers/plsa/checks", within=config, default={}),
        sanity=lookup(dpath="papers/plsa/end_to_end/sanity", within=config),
        datasets=plsa_datasets(),
    script:
        "../scripts/plsa_claims.py"


rule plsa:
    input:
        paper_target("plsa"),
