# QSurv: continuous-time survival by Gauss-Legendre quadrature with time-conditioned LoRA.
# prepare -> train (per data set, jobs of methods_per_job methods, all seeds; embedded: one
# job per data set) -> evaluate (per data set) -> figures (from metrics only) -> claims.


include: "qsurv_helpers.smk"


rule qsurv_quadrature:
    output:
        metrics="results/qsurv/metrics/quadrature.json",
    log:
        "logs/qsurv/quadrature.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        cfg=lookup(dpath="papers/qsurv/quadrature", within=config),
    script:
        "../scripts/qsurv_quadrature.py"


rule qsurv_prepare:
    input:
        raw=qsurv_raw_input,
    output:
        data="results/qsurv/data/{dataset}.npz",
    log:
        "logs/qsurv/prepare/{dataset}.log",
    wildcard_constraints:
        **QSURV_WILDCARDS,
    conda:
        "../envs/qsurv.yaml"
    params:
        cfg=qsurv_prepare_params,
    script:
        "../scripts/qsurv_prepare.py"


rule qsurv_train:
    input:
        data="results/qsurv/data/{dataset}.npz",
    output:
        runs=directory("results/qsurv/runs/{dataset}/part{part}"),
    log:
        "logs/qsurv/train/{dataset}/part{part}.log",
    benchmark:
        "results/qsurv/benchmarks/train/{dataset}/part{part}.tsv"
    wildcard_constraints:
        **QSURV_WILDCARDS,
    conda:
        "../envs/qsurv.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/qsurv/resources/train/gpu", within=config),
        mem_mb=lookup(dpath="papers/qsurv/resources/train/mem_mb", within=config),
        runtime=qsurv_train_runtime,
    params:
        methods=qsurv_method_specs,
        training=qsurv_training,
        device=rule_device,
        checkpoints=lambda wildcards: f"results/qsurv/checkpoints/{wildcards.dataset}",
    script:
        "../scripts/qsurv_train.py"


rule qsurv_evaluate:
    input:
        data="results/qsurv/data/{dataset}.npz",
        runs=qsurv_run_dirs,
    output:
        metrics="results/qsurv/metrics/{dataset}.json",
    log:
        "logs/qsurv/evaluate/{dataset}.log",
    benchmark:
        "results/qsurv/benchmarks/evaluate/{dataset}.tsv"
    wildcard_constraints:
        **QSURV_WILDCARDS,
    conda:
        "../envs/qsurv.yaml"
    params:
        methods=lambda wildcards: qsurv_methods(wildcards.dataset),
        run_dirs=qsurv_method_run_dirs,
        metric_grid_points=lookup(
            dpath="papers/qsurv/evaluation/metric_grid_points", within=config
        ),
    script:
        "../scripts/qsurv_evaluate.py"


rule qsurv_figure_quadrature:
    input:
        metrics="results/qsurv/metrics/quadrature.json",
    output:
        png=report(
            "results/qsurv/figures/quadrature_error.png",
            caption="../workflow/report/qsurv_quadrature_error.rst",
            category="QSurv",
        ),
        pdf="results/qsurv/figures/quadrature_error.pdf",
    log:
        "logs/qsurv/figure_quadrature.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        figure="quadrature_error",
    script:
        "../scripts/qsurv_figure.py"


rule qsurv_figure_hazards:
    input:
        metrics="results/qsurv/metrics/{dataset}.json",
    output:
        png=report(
            "results/qsurv/figures/hazard_curves_{dataset}.png",
            caption="../workflow/report/qsurv_hazard_curves.rst",
            category="QSurv",
        ),
        pdf="results/qsurv/figures/hazard_curves_{dataset}.pdf",
    log:
        "logs/qsurv/figure_hazards/{dataset}.log",
    wildcard_constraints:
        **QSURV_WILDCARDS,
    conda:
        "../envs/qsurv.yaml"
    params:
        figure="hazard_curves",
        methods=qsurv_hazard_figure_methods,
    script:
        "../scripts/qsurv_figure.py"


rule qsurv_figure_metrics:
    input:
        metrics=qsurv_metrics(qsurv_datasets()),
    output:
        # for the paper: the report shows the table as HTML (qsurv_table_metrics)
        png="results/qsurv/figures/metrics_table.png",
        pdf="results/qsurv/figures/metrics_table.pdf",
    log:
        "logs/qsurv/figure_metrics.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        figure="metrics_table",
        metrics=lookup(dpath="papers/qsurv/figures/table_metrics", within=config),
    script:
        "../scripts/qsurv_figure.py"


rule qsurv_figure_training_time:
    input:
        metrics=qsurv_metrics(qsurv_datasets()),
    output:
        png=report(
            "results/qsurv/figures/training_time.png",
            caption="../workflow/report/qsurv_training_time.rst",
            category="QSurv",
        ),
        pdf="results/qsurv/figures/training_time.pdf",
    log:
        "logs/qsurv/figure_training_time.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        figure="training_time",
    script:
        "../scripts/qsurv_figure.py"


rule qsurv_table_metrics:
    input:
        docs=qsurv_metrics(qsurv_datasets()),
    output:
        csv="results/qsurv/tables/metrics_table.csv",
        html=report(
            "results/qsurv/tables/metrics_table.html",
            caption="../workflow/report/qsurv_metrics_table.rst",
            category="QSurv",
        ),
    log:
        "logs/qsurv/table_metrics.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        paper="qsurv",
        options=lambda wildcards: {
            "metrics": list(config["papers"]["qsurv"]["figures"]["table_metrics"])
        },
    script:
        "../scripts/table.py"


rule qsurv_figure_ablation:
    input:
        metrics=qsurv_metrics(qsurv_synthetic()),
    output:
        png=report(
            "results/qsurv/figures/ablation.png",
            caption="../workflow/report/qsurv_ablation.rst",
            category="QSurv",
        ),
        pdf="results/qsurv/figures/ablation.pdf",
    log:
        "logs/qsurv/figure_ablation.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        figure="ablation",
        methods=lookup(dpath="papers/qsurv/figures/ablation_methods", within=config),
    script:
        "../scripts/qsurv_figure.py"


rule qsurv_claims:
    input:
        quadrature="results/qsurv/metrics/quadrature.json",
        metrics=qsurv_metrics(qsurv_datasets()),
        figures=[f"results/qsurv/figures/{name}.png" for name in qsurv_figures()],
    output:
        claims="results/qsurv/claims.json",
    log:
        "logs/qsurv/claims.log",
    conda:
        "../envs/qsurv.yaml"
    params:
        claims=lookup(dpath="papers/qsurv/claims", within=config),
        checks=lookup(dpath="papers/qsurv/checks", within=config, default={}),
        sanity=lookup(dpath="papers/qsurv/sanity", within=config),
        datasets=qsurv_datasets(),
    script:
        "../scripts/qsurv_claims.py"


rule qsurv:
    input:
        paper_target("qsurv"),
