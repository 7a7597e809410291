# SBD: signed biclique decomposition and its factorised SpMM.
# Per graph: prepare the matrix -> decompose it with each method -> evaluate (CF, exactness,
# recovery, SVD at equal budget, SpMM timings). Studies (one job per method where methods are
# compared on the same planted graphs): recovery vs noise, signed vs unsigned by cause, time
# vs edges.
# Figures read metrics only; claims compare them with criteria from the config.


include: "sbd_helpers.smk"


rule sbd_prepare:
    input:
        unpack(sbd_raw_input),
    output:
        data="results/sbd/data/{dataset}.npz",
    log:
        "logs/sbd/prepare/{dataset}.log",
    wildcard_constraints:
        **SBD_WILDCARDS,
    conda:
        "../envs/sbd.yaml"
    params:
        spec=lambda wildcards: sbd_config()["datasets"][wildcards.dataset],
    script:
        "../scripts/sbd_prepare.py"


rule sbd_decompose:
    input:
        data="results/sbd/data/{dataset}.npz",
    output:
        factors="results/sbd/decompositions/{dataset}/{method}.npz",
        info="results/sbd/decompositions/{dataset}/{method}.json",
    log:
        "logs/sbd/decompose/{dataset}/{method}.log",
    benchmark:
        "results/sbd/benchmarks/decompose/{dataset}/{method}.tsv"
    wildcard_constraints:
        **SBD_WILDCARDS,
    conda:
        "../envs/sbd.yaml"
    resources:
        mem_mb=lookup(dpath="papers/sbd/resources/decompose/mem_mb", within=config),
        runtime=lookup(dpath="papers/sbd/resources/decompose/runtime", within=config),
    params:
        method=lambda wildcards: sbd_config()["methods"][wildcards.method],
        greedy=lookup(dpath="papers/sbd/greedy", within=config),
    script:
        "../scripts/sbd_decompose.py"


rule sbd_evaluate:
    input:
        data="results/sbd/data/{dataset}.npz",
        factors=sbd_decompositions("npz"),
        info=sbd_decompositions("json"),
    output:
        metrics="results/sbd/metrics/{dataset}.json",
    log:
        "logs/sbd/evaluate/{dataset}.log",
    benchmark:
        "results/sbd/benchmarks/evaluate/{dataset}.tsv"
    wildcard_constraints:
        **SBD_WILDCARDS,
    conda:
        "../envs/sbd.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/sbd/resources/evaluate/gpu", within=config),
        mem_mb=lookup(dpath="papers/sbd/resources/evaluate/mem_mb", within=config),
        runtime=lookup(dpath="papers/sbd/resources/evaluate/runtime", within=config),
    params:
        methods=lambda wildcards: sbd_dataset_methods(wildcards.dataset),
        evaluation=lookup(dpath="papers/sbd/evaluation", within=config),
        device=rule_device,
    script:
        "../scripts/sbd_evaluate.py"


rule sbd_noise_study:
    output:
        metrics="results/sbd/metrics/noise_study/{method}.json",
    log:
        "logs/sbd/noise_study/{method}.log",
    benchmark:
        "results/sbd/benchmarks/noise_study/{method}.tsv"
    wildcard_constraints:
        **SBD_WILDCARDS,
    conda:
        "../envs/sbd.yaml"
    params:
        study="noise_study",
        cfg=lookup(dpath="papers/sbd/noise_study", within=config, default={}),
        methods=lookup(dpath="papers/sbd/methods", within=config, default={}),
        greedy=lookup(dpath="papers/sbd/greedy", within=config),
        only=lambda wildcards: wildcards.method,
    script:
        "../scripts/sbd_study.py"


# The noise study's oracles (the planted truth and its thinned copy) on the same graphs: the
# recovery claims' controls.
use rule sbd_noise_study as sbd_noise_oracles with:
    output:
        metrics="results/sbd/metrics/noise_study/oracles.json",
    log:
        "logs/sbd/noise_study/oracles.log",
    benchmark:
        "results/sbd/benchmarks/noise_study/oracles.tsv"
    params:
        study="noise_oracles",
        cfg=lookup(dpath="papers/sbd/noise_study", within=config, default={}),
        methods={},
        greedy={},
        only=None,


use rule sbd_noise_study as sbd_sign_study with:
    output:
        metrics="results/sbd/metrics/sign_study/{method}.json",
    log:
        "logs/sbd/sign_study/{method}.log",
    benchmark:
        "results/sbd/benchmarks/sign_study/{method}.tsv"
    params:
        study="sign_study",
        cfg=lookup(dpath="papers/sbd/sign_study", within=config, default={}),
        methods=lookup(dpath="papers/sbd/methods", within=config, default={}),
        greedy=lookup(dpath="papers/sbd/greedy", within=config),
        only=lambda wildcards: wildcards.method,


use rule sbd_noise_study as sbd_scaling_study with:
    output:
        metrics="results/sbd/metrics/scaling_study.json",
    log:
        "logs/sbd/scaling_study.log",
    benchmark:
        "results/sbd/benchmarks/scaling_study.tsv"
    params:
        study="scaling_study",
        cfg=lookup(dpath="papers/sbd/scaling_study", within=config, default={}),
        methods=lookup(dpath="papers/sbd/methods", within=config, default={}),
        greedy=lookup(dpath="papers/sbd/greedy", within=config),
        only=None,


rule sbd_figure_compression:
    input:
        metrics=sbd_metrics(),
    output:
        png=report(
            "results/sbd/figures/compression_speedup.png",
            caption="../workflow/report/sbd_compression_speedup.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/compression_speedup.pdf",
    log:
        "logs/sbd/figure_compression.log",
    conda:
        "../envs/sbd.yaml"
    params:
        figure="compression_speedup",
        per_graph=True,
    script:
        "../scripts/sbd_figure.py"


rule sbd_table:
    input:
        docs=sbd_metrics(),
    output:
        csv="results/sbd/tables/per_dataset.csv",
        html=report(
            "results/sbd/tables/per_dataset.html",
            caption="../workflow/report/sbd_per_dataset.rst",
            category="SBD",
        ),
    log:
        "logs/sbd/table.log",
    conda:
        "../envs/sbd.yaml"
    params:
        paper="sbd",
        options={},
    script:
        "../scripts/table.py"


use rule sbd_figure_compression as sbd_figure_bound with:
    output:
        png=report(
            "results/sbd/figures/speedup_vs_cf.png",
            caption="../workflow/report/sbd_speedup_vs_cf.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/speedup_vs_cf.pdf",
    log:
        "logs/sbd/figure_bound.log",
    params:
        figure="speedup_vs_cf",
        per_graph=True,


use rule sbd_figure_compression as sbd_figure_trace with:
    output:
        png=report(
            "results/sbd/figures/greedy_trace.png",
            caption="../workflow/report/sbd_greedy_trace.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/greedy_trace.pdf",
    log:
        "logs/sbd/figure_trace.log",
    params:
        figure="greedy_trace",
        per_graph=True,


use rule sbd_figure_compression as sbd_figure_noise with:
    input:
        metrics=sbd_study_metrics("noise_study"),
    output:
        png=report(
            "results/sbd/figures/recovery_heatmap.png",
            caption="../workflow/report/sbd_recovery_heatmap.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/recovery_heatmap.pdf",
    log:
        "logs/sbd/figure_noise.log",
    params:
        figure="recovery_heatmap",
        per_graph=False,


use rule sbd_figure_compression as sbd_figure_sign with:
    input:
        metrics=sbd_study_metrics("sign_study"),
    output:
        png=report(
            "results/sbd/figures/sign_study.png",
            caption="../workflow/report/sbd_sign_study.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/sign_study.pdf",
    log:
        "logs/sbd/figure_sign.log",
    params:
        figure="sign_study",
        per_graph=False,


use rule sbd_figure_compression as sbd_figure_scaling with:
    input:
        metrics="results/sbd/metrics/scaling_study.json",
    output:
        png=report(
            "results/sbd/figures/time_vs_edges.png",
            caption="../workflow/report/sbd_time_vs_edges.rst",
            category="SBD",
        ),
        pdf="results/sbd/figures/time_vs_edges.pdf",
    log:
        "logs/sbd/figure_scaling.log",
    params:
        figure="time_vs_edges",
        per_graph=False,


rule sbd_claims:
    input:
        metrics=sbd_metrics(),
        noise=sbd_study_metrics("noise_study"),
        oracles="results/sbd/metrics/noise_study/oracles.json",
        sign=sbd_study_metrics("sign_study"),
        figures=[f"results/sbd/figures/{name}.png" for name in SBD_FIGURES],
    output:
        claims="results/sbd/claims.json",
    log:
        "logs/sbd/claims.log",
    conda:
        "../envs/sbd.yaml"
    params:
        claims=lookup(dpath="papers/sbd/claims", within=config, default={}),
        checks=lookup(dpath="papers/sbd/checks", within=config, default={}),
        datasets=sbd_datasets(),
    script:
        "../scripts/sbd_claims.py"


rule sbd:
    input:
        paper_target("sbd"),
