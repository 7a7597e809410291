include: "st_reliability_helpers.smk"


# ST-decoder reliability: State's transition model audited on two simulated settings (or the
# four CRISPRi lines at full scale). prepare (simulator / renormalised lines) -> train every
# model of a data set per seed (jobs of train_batch models) -> evaluate per seed (quality,
# signals, attention audit; models with encoder se600m also read the se_embed step's
# embeddings) -> summarize per data set -> figures (metrics only) -> claims;
# the controls of C1's attention swap (planted models, no data) -> claims.


rule st_reliability_prepare:
    input:
        unpack(st_reliability_raw),
    output:
        cells="results/st_reliability/data/{dataset}/cells.h5ad",
        programs="results/st_reliability/data/{dataset}/programs.tsv",
        record="results/st_reliability/data/{dataset}/prepare.json",
    log:
        "logs/st_reliability/prepare/{dataset}.log",
    wildcard_constraints:
        **ST_RELIABILITY_WILDCARDS,
    conda:
        "../envs/st_reliability.yaml"
    resources:
        mem_mb=st_reliability_prepare_resource("mem_mb"),
        runtime=st_reliability_prepare_resource("runtime"),
    params:
        dataset=st_reliability_dataset,
        simulator=lookup(dpath="papers/st_reliability/simulator", within=config),
        self_check=lookup(dpath="papers/st_reliability/self_check", within=config),
        split=lookup(dpath="papers/st_reliability/split", within=config),
    script:
        "../scripts/st_reliability_prepare.py"


# Full scale: SE-600M embeddings of the prepared CRISPRi cells (the brief's third encoder),
# from each line's raw file with all its genes, through arc-state's own inference code.
rule st_reliability_se_embed:
    input:
        unpack(st_reliability_se_inputs),
        cells="results/st_reliability/data/{dataset}/cells.h5ad",
    output:
        embeddings="results/st_reliability/data/{dataset}/se600m.npy",
        record="results/st_reliability/data/{dataset}/se600m.json",
    log:
        "logs/st_reliability/se_embed/{dataset}.log",
    benchmark:
        "results/st_reliability/benchmarks/se_embed/{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(st_reliability_se_datasets()),
    conda:
        "../envs/st_reliability.yaml"
    threads: config["threads"]
    resources:
        gpu=st_reliability_resource("se_embed", "gpu"),
        mem_mb=st_reliability_resource("se_embed", "mem_mb"),
        runtime=st_reliability_resource("se_embed", "runtime"),
    params:
        dataset=st_reliability_dataset,
        se600m=lookup(dpath="papers/st_reliability/se600m", within=config, default={}),
        device=rule_device,
    script:
        "../scripts/st_reliability_se_embed.py"


rule st_reliability_train:
    input:
        unpack(st_reliability_train_se),
        cells="results/st_reliability/data/{dataset}/cells.h5ad",
    output:
        models=directory(
            "results/st_reliability/models/{dataset}/seed{seed}/part{part}"
        ),
    log:
        "logs/st_reliability/train/{dataset}/seed{seed}/part{part}.log",
    benchmark:
        "results/st_reliability/benchmarks/train/{dataset}/seed{seed}/part{part}.tsv"
    wildcard_constraints:
        **ST_RELIABILITY_WILDCARDS,
    priority: st_reliability_train_priority
    conda:
        "../envs/st_reliability.yaml"
    threads: config["threads"]
    resources:
        gpu=st_reliability_resource("train", "gpu"),
        mem_mb=st_reliability_resource("train", "mem_mb"),
        runtime=st_reliability_resource("train", "runtime"),
    params:
        models=st_reliability_part_models,
        architecture=lookup(dpath="papers/st_reliability/architecture", within=config),
        training=lookup(dpath="papers/st_reliability/training", within=config),
        device=rule_device,
    script:
        "../scripts/st_reliability_train.py"


rule st_reliability_evaluate:
    input:
        unpack(st_reliability_evaluate_se),
        cells="results/st_reliability/data/{dataset}/cells.h5ad",
        models=st_reliability_model_dirs,
    output:
        metrics="results/st_reliability/eval/{dataset}/seed{seed}.json",
    log:
        "logs/st_reliability/evaluate/{dataset}/seed{seed}.log",
    benchmark:
        "results/st_reliability/benchmarks/evaluate/{dataset}/seed{seed}.tsv"
    wildcard_constraints:
        **ST_RELIABILITY_WILDCARDS,
    priority: st_reliability_evaluate_priority
    conda:
        "../envs/st_reliability.yaml"
    threads: config["threads"]
    resources:
        gpu=st_reliability_resource("evaluate", "gpu"),
        mem_mb=st_reliability_resource("evaluate", "mem_mb"),
        runtime=st_reliability_resource("evaluate", "runtime"),
    params:
        checkpoints=st_reliability_checkpoints,
        evaluation=st_reliability_evaluation,
        device=rule_device,
    script:
        "../scripts/st_reliability_evaluate.py"


rule st_reliability_summarize:
    input:
        cells="results/st_reliability/data/{dataset}/cells.h5ad",
        evals=st_reliability_evals,
    output:
        metrics="results/st_reliability/metrics/{dataset}.json",
    log:
        "logs/st_reliability/summarize/{dataset}.log",
    wildcard_constraints:
        **ST_RELIABILITY_WILDCARDS,
    priority: ST_RELIABILITY_SUMMARIZE_PRIORITY
    conda:
        "../envs/st_reliability.yaml"
    params:
        analysis=lookup(dpath="papers/st_reliability/analysis", within=config),
        audited=lookup(dpath="papers/st_reliability/audited", within=config),
        c4_designs=lookup(dpath="papers/st_reliability/c4_designs", within=config),
        models=lambda wildcards: st_reliability_dataset(wildcards)["models"],
        cell_set_len=lookup(
            dpath="papers/st_reliability/architecture/cell_set_len", within=config
        ),
        shrink_fraction=lookup(
            dpath="papers/st_reliability/training/shrink_fraction",
            within=config,
            default=0.5,
        ),
    script:
        "../scripts/st_reliability_summarize.py"


rule st_reliability_figure_spectrum:
    input:
        metrics=st_reliability_metrics(),
    output:
        png=report(
            "results/st_reliability/figures/spectrum_vs_nulls.png",
            caption="../workflow/report/st_reliability_spectrum_vs_nulls.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/spectrum_vs_nulls.pdf",
    log:
        "logs/st_reliability/figure_spectrum_vs_nulls.log",
    conda:
        "../envs/st_reliability.yaml"
    params:
        figure="spectrum_vs_nulls",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),
    script:
        "../scripts/st_reliability_figure.py"


use rule st_reliability_figure_spectrum as st_reliability_figure_gene_map with:
    output:
        png=report(
            "results/st_reliability/figures/gene_map.png",
            caption="../workflow/report/st_reliability_gene_map.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/gene_map.pdf",
    log:
        "logs/st_reliability/figure_gene_map.log",
    params:
        figure="gene_map",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),


use rule st_reliability_figure_spectrum as st_reliability_figure_quality with:
    output:
        png=report(
            "results/st_reliability/figures/quality_vs_distance.png",
            caption="../workflow/report/st_reliability_quality_vs_distance.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/quality_vs_distance.pdf",
    log:
        "logs/st_reliability/figure_quality_vs_distance.log",
    params:
        figure="quality_vs_distance",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),


use rule st_reliability_figure_spectrum as st_reliability_figure_rho with:
    output:
        png=report(
            "results/st_reliability/figures/rho_table.png",
            caption="../workflow/report/st_reliability_rho_table.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/rho_table.pdf",
    log:
        "logs/st_reliability/figure_rho_table.log",
    params:
        figure="rho_table",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),


use rule st_reliability_figure_spectrum as st_reliability_figure_loo with:
    output:
        png=report(
            "results/st_reliability/figures/loo_transfer.png",
            caption="../workflow/report/st_reliability_loo_transfer.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/loo_transfer.pdf",
    log:
        "logs/st_reliability/figure_loo_transfer.log",
    params:
        figure="loo_transfer",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),


use rule st_reliability_figure_spectrum as st_reliability_figure_family with:
    output:
        png=report(
            "results/st_reliability/figures/family_vs_pool.png",
            caption="../workflow/report/st_reliability_family_vs_pool.rst",
            category="ST reliability",
        ),
        pdf="results/st_reliability/figures/family_vs_pool.pdf",
    log:
        "logs/st_reliability/figure_family_vs_pool.log",
    params:
        figure="family_vs_pool",
        datasets=st_reliability_datasets(),
        figures=lookup(dpath="papers/st_reliability/figures", within=config),
        claims=lookup(dpath="papers/st_reliability/claims", within=config, default={}),


rule st_reliability_swap_control:
    output:
        control="results/st_reliability/swap_control.json",
    log:
        "logs/st_reliability/swap_control.log",
    benchmark:
        "results/st_reliability/benchmarks/swap_control.tsv"
    conda:
        "../envs/st_reliability.yaml"
    threads: 1
    params:
        seeds=st_reliability_swap_control_seeds(),
        architecture=lookup(dpath="papers/st_reliability/architecture", within=config),
        swap_control=lookup(
            dpath="papers/st_reliability/swap_control", within=config, default={}
        ),
    script:
        "../scripts/st_reliability_swap_control.py"


rule st_reliability_claims:
    input:
        metrics=st_reliability_metrics(),
        swap_control="results/st_reliability/swap_control.json",
        prepared=st_reliability_prepared(),
        # the figures come with the claims, so the default target (results/claims.md) draws them
        figures=expand(
            "results/st_reliability/figures/{name}.png", name=ST_RELIABILITY_FIGURES
        ),
    output:
        claims="results/st_reliability/claims.json",
    log:
        "logs/st_reliability/claims.log",
    conda:
        "../envs/st_reliability.yaml"
    params:
        datasets=st_reliability_datasets(),
        claims=lookup(dpath="papers/st_reliability/claims", within=config, default={}),
        checks=lookup(dpath="papers/st_reliability/checks", within=config, default={}),
    script:
        "../scripts/st_reliability_claims.py"


rule st_reliability:
    input:
        paper_target("st_reliability"),
