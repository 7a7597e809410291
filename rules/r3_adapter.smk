# 3R-Adapter: relational PEFT for two-view 3D reconstruction under a low-light shift.
# Embedded: scene sets per seed -> one backbone pretrained on clean scenes -> every method
# adapted on the same few-shot shifted set (same steps, same learning-rate grid) and
# evaluated on every test domain (one job per method) -> figures (from metrics only) ->
# claims. Full scale (papers.r3_adapter.full_scale): the second half of this file.


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
    priority: R3_ADAPTER_PRETRAIN_PRIORITY
    conda:
        "../envs/r3_adapter.yaml"
    # the job sets the configured threads itself (they change its weights); with fewer cores
    # Snakemake runs it on what there is
    threads: lookup(dpath="papers/r3_adapter/pretraining/threads", within=config)
    resources:
        gpu=r3_adapter_resource("train", "gpu"),
        mem_mb=r3_adapter_resource("train", "mem_mb"),
        runtime=r3_adapter_resource("train", "runtime"),
    params:
        scene=lookup(dpath="papers/r3_adapter/scene", within=config),
        low_light=lookup(dpath="papers/r3_adapter/low_light", within=config),
        model=lookup(dpath="papers/r3_adapter/model", within=config),
        pretraining=lookup(dpath="papers/r3_adapter/pretraining", within=config),
        device=rule_device,
    script:
        "../scripts/r3_adapter_pretrain.py"


# Adaptation and evaluation of one method in one job (every seed): one Python start-up and
# one backbone load per method instead of two.
rule r3_adapter_train:
    input:
        data=r3_adapter_data(),
        backbone="results/r3_adapter/backbone/backbone.pt",
    output:
        states="results/r3_adapter/models/{method}.pt",
        record="results/r3_adapter/runs/{method}.json",
        metrics="results/r3_adapter/metrics/{method}.json",
        ply="results/r3_adapter/pointclouds/{method}.ply",
    log:
        "logs/r3_adapter/train/{method}.log",
    benchmark:
        "results/r3_adapter/benchmarks/train/{method}.tsv"
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    priority: r3_adapter_train_priority
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
        ply_severity=lookup(
            dpath="papers/r3_adapter/splits/adapt_severity", within=config
        ),
        device=rule_device,
    script:
        "../scripts/r3_adapter_train.py"


# One rule per figure: Snakemake does not fill wildcards into a report caption's path,
# and each figure has its own caption.
for _figure in R3_ADAPTER_FIGURES:

    rule:
        name:
            f"r3_adapter_figure_{_figure}"
        input:
            metrics=r3_adapter_metrics(),
        output:
            # a table is in the report as HTML (r3_adapter_table), its image is for the paper
            png=(
                report(
                    f"results/r3_adapter/figures/{_figure}.png",
                    caption=f"../workflow/report/r3_adapter_{_figure}.rst",
                    category="3R-Adapter",
                )
                if _figure != "table"
                else f"results/r3_adapter/figures/{_figure}.png"
            ),
            pdf=f"results/r3_adapter/figures/{_figure}.pdf",
        log:
            f"logs/r3_adapter/figure_{_figure}.log",
        conda:
            "../envs/r3_adapter.yaml"
        params:
            figure=_figure,
            roles=r3_adapter_roles,
            severity=lookup(
                dpath="papers/r3_adapter/splits/adapt_severity", within=config
            ),
            # what the efficiency plot's differences are judged against (the other
            # figures do not read it, so a claim's edit does not redraw them)
            claims=(
                lookup(dpath="papers/r3_adapter/claims", within=config)
                if _figure == "efficiency"
                else {}
            ),
        script:
            "../scripts/r3_adapter_figure.py"


rule r3_adapter_table:
    input:
        docs=r3_adapter_metrics(),
    output:
        csv="results/r3_adapter/tables/table.csv",
        html=report(
            "results/r3_adapter/tables/table.html",
            caption="../workflow/report/r3_adapter_table.rst",
            category="3R-Adapter",
        ),
    log:
        "logs/r3_adapter/table.log",
    conda:
        "../envs/r3_adapter.yaml"
    params:
        paper="r3_adapter",
        options=lambda wildcards: {
            "severity": int(config["papers"]["r3_adapter"]["splits"]["adapt_severity"])
        },
    script:
        "../scripts/table.py"


rule r3_adapter_claims:
    input:
        metrics=r3_adapter_metrics(),
        runs=r3_adapter_runs(),
        full=r3_adapter_full_runs(),
        # not read: so that `snakemake` (rule all -> claims.json) also draws every figure
        figures=r3_adapter_figures(),
        pointclouds=expand(
            "results/r3_adapter/pointclouds/{method}.ply", method=r3_adapter_methods()
        ),
    output:
        claims="results/r3_adapter/claims.json",
    log:
        "logs/r3_adapter/claims.log",
    conda:
        "../envs/r3_adapter.yaml"
    params:
        claims=lookup(dpath="papers/r3_adapter/claims", within=config, default={}),
        checks=lookup(dpath="papers/r3_adapter/checks", within=config, default={}),
        sanity=lookup(dpath="papers/r3_adapter/sanity", within=config, default={}),
    script:
        "../scripts/r3_adapter_claims.py"


rule r3_adapter:
    input:
        paper_target("r3_adapter"),


# --- full scale: real backbones on real image pairs (papers.r3_adapter.full_scale) -------
# code archive (+ submodules) -> source tree; scene archives -> pairs at the backbone's
# resolution; one GPU job per (backbone, data set, method, seed): rate search, adaptation,
# evaluation at every severity; a summary per (backbone, data set, method) for the claims.


rule r3_adapter_full_code:
    input:
        unpack(r3_adapter_code),
    output:
        code=directory("results/r3_adapter/full/code/{backbone}"),
    log:
        "logs/r3_adapter/full/code_{backbone}.log",
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    localrule: True
    conda:
        "../envs/r3_adapter.yaml"
    params:
        submodules=r3_adapter_code_submodules,
    script:
        "../scripts/r3_adapter_full_code.py"


rule r3_adapter_full_pairs:
    input:
        archives=r3_adapter_dataset_files,
    output:
        pairs="results/r3_adapter/full/pairs/{backbone}/{dataset}.npz",
    log:
        "logs/r3_adapter/full/pairs_{backbone}_{dataset}.log",
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    conda:
        "../envs/r3_adapter.yaml"
    params:
        dataset=r3_adapter_full_param("datasets", "{dataset}"),
        resolution=r3_adapter_full_param("backbones", "{backbone}", "resolution"),
    script:
        "../scripts/r3_adapter_full_pairs.py"


rule r3_adapter_full_run:
    input:
        code="results/r3_adapter/full/code/{backbone}",
        checkpoint=r3_adapter_checkpoint,
        pairs="results/r3_adapter/full/pairs/{backbone}/{dataset}.npz",
    output:
        run="results/r3_adapter/full/runs/{backbone}/{dataset}/{method}/seed{seed}.json",
    log:
        "logs/r3_adapter/full/run_{backbone}_{dataset}_{method}_seed{seed}.log",
    benchmark:
        "results/r3_adapter/benchmarks/full/{backbone}_{dataset}_{method}_seed{seed}.tsv"
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    conda:
        "../envs/r3_adapter.yaml"
    threads: config["threads"]
    resources:
        gpu=r3_adapter_full_resource("train", "gpu"),
        mem_mb=r3_adapter_full_resource("train", "mem_mb"),
        runtime=r3_adapter_full_resource("train", "runtime"),
    params:
        method=r3_adapter_method,
        adaptation=r3_adapter_full_param("adaptation"),
        low_light=r3_adapter_full_param("low_light"),
        severities=r3_adapter_full_param("severities"),
        resolution=r3_adapter_full_param("backbones", "{backbone}", "resolution"),
        checkpoint_key=r3_adapter_checkpoint_key,
        device=rule_device,
    script:
        "../scripts/r3_adapter_full_run.py"


rule r3_adapter_full_summary:
    input:
        runs=r3_adapter_full_seed_runs,
    output:
        metrics="results/r3_adapter/full/metrics/{backbone}/{dataset}/{method}.json",
    log:
        "logs/r3_adapter/full/summary_{backbone}_{dataset}_{method}.log",
    wildcard_constraints:
        **R3_ADAPTER_WILDCARDS,
    localrule: True
    conda:
        "../envs/r3_adapter.yaml"
    script:
        "../scripts/r3_adapter_full_summary.py"
