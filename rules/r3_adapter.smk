# 3R-Adapter: relational PEFT for two-view 3D reconstruction under a low-light shift.
# Embedded: scene sets per seed -> one backbone pretrained on clean scenes -> every method
# adapted on the same few-shot shifted set (same steps, same learning-rate grid) -> every
# test domain evaluated -> figures (from metrics only) -> claims. Full scale
# (papers.r3_adapter.full_scale): the second half of this file.


include: "r3_adapter_helpers.smk"


rule r3_adapter_prepare:
    output:
        data=expand("results/r3_adapter/data/seed{seed}.npz", seed=r3_adapter_seeds()),
    log:
        "logs/r3_adapter/prepare.log",
    conda:
        "../envs/r3_adapter.yaml"
    params:
        seeds=lookup(dpath="papers/r3_adapter/seeds", within=config),
        scene=lookup(dpath="papers/r3_adapter/scene", within=config),
        low_light=lookup(dpath="papers/r3_adapter/low_light", within=config),
        splits=lookup(dpath="papers/r3_adapter/splits", within=config),
    script:
        "../scripts/r3_adapter_prepare.py"


rule r3_adapter_pretrain:
    output:
        model="results/r3_adapter/backbone/backbone.pt",
        record="results/r3_adapter/backbone/backbone.json",
    log:
        "logs/r3_adapter/pretrain.log",
    benchmark:
        "results/r3_adapter/benchmarks/pretrain.tsv"
    conda:
        "../envs/r3_adapter.yaml"
    threads: config["threads"]
    resources:
        gpu=r3_adapter_resource("train", "gpu"),
        mem_mb=r3_adapter_resource("train", "mem_mb"),
        runtime=r3_adapter_resource("train", "runtime"),
    params:
        scene=lookup(dpath="papers/r3_adapter/scene", within=config),
        low_light=lookup(dpath="papers/r3_adapter/low_light", within=config),
        model=lookup(dpath="papers/r3_adapter/model", within=config),
        pretraining=lookup(dpath="papers/r3_adapter/pretraining", within=config),
        device=config["device"],
    script:
        "../scripts/r3_adapter_pretrain.py"


rule r3_adapter_train:
    input:
        data=r3_adapter_data(),
        backbone="results/r3_adapter/backbone/backbone.pt",
    output:
        states="results/r3_adapter/models/{method}.pt",
        record="results/r3_adapter/runs/{method}.json",
    log:
        "logs/r3_adapter/train/{method}.log",
    benchmark:
        "results/r3_adapter/benchmarks/train/{method}.tsv"
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    conda:
        "../envs/r3_adapter.yaml"
    threads: config["threads"]
    resources:
        gpu=r3_adapter_resource("train", "gpu"),
        mem_mb=r3_adapter_resource("train", "mem_mb"),
        runtime=r3_adapter_resource("train", "runtime"),
    params:
        method=r3_adapter_method,
        seeds=lookup(dpath="papers/r3_adapter/seeds", within=config),
        scene=lookup(dpath="papers/r3_adapter/scene", within=config),
        model=lookup(dpath="papers/r3_adapter/model", within=config),
        adaptation=lookup(dpath="papers/r3_adapter/adaptation", within=config),
        device=config["device"],
    script:
        "../scripts/r3_adapter_train.py"


rule r3_adapter_evaluate:
    input:
        data=r3_adapter_data(),
        backbone="results/r3_adapter/backbone/backbone.pt",
        states="results/r3_adapter/models/{method}.pt",
    output:
        metrics="results/r3_adapter/metrics/{method}.json",
        ply="results/r3_adapter/pointclouds/{method}.ply",
    log:
        "logs/r3_adapter/evaluate/{method}.log",
    benchmark:
        "results/r3_adapter/benchmarks/evaluate/{method}.tsv"
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    conda:
        "../envs/r3_adapter.yaml"
    threads: config["threads"]
    params:
        method=r3_adapter_method,
        seeds=lookup(dpath="papers/r3_adapter/seeds", within=config),
        scene=lookup(dpath="papers/r3_adapter/scene", within=config),
        model=lookup(dpath="papers/r3_adapter/model", within=config),
        ply_severity=lookup(dpath="papers/r3_adapter/splits/adapt_severity", within=config),
        device=config["device"],
    script:
        "../scripts/r3_adapter_evaluate.py"


rule r3_adapter_figure:
    input:
        metrics=r3_adapter_metrics(),
    output:
        png=report(
            "results/r3_adapter/figures/{figure}.png",
            caption="../workflow/report/r3_adapter_{figure}.rst",
            category="3R-Adapter",
        ),
        pdf="results/r3_adapter/figures/{figure}.pdf",
    log:
        "logs/r3_adapter/figure_{figure}.log",
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    conda:
        "../envs/r3_adapter.yaml"
    params:
        roles=r3_adapter_roles,
        severity=lookup(dpath="papers/r3_adapter/splits/adapt_severity", within=config),
    script:
        "../scripts/r3_adapter_figure.py"


rule r3_adapter_claims:
    input:
        metrics=r3_adapter_metrics(),
        runs=r3_adapter_runs(),
    output:
        claims="results/r3_adapter/claims.json",
    log:
        "logs/r3_adapter/claims.log",
    conda:
        "../envs/r3_adapter.yaml"
    params:
        claims=lookup(dpath="papers/r3_adapter/claims", within=config),
        checks=lookup(dpath="papers/r3_adapter/checks", within=config),
    script:
        "../scripts/r3_adapter_claims.py"


rule r3_adapter:
    input:
        claims="results/r3_adapter/claims.json",
        figures=r3_adapter_figures(),
        pointclouds=expand(
            "results/r3_adapter/pointclouds/{method}.ply", method=r3_adapter_methods()
        ),
