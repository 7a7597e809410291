# δ-Mem: an 8×8 delta-rule memory steering a frozen attention backbone.
# Embedded: pretrain a tiny backbone per seed -> train δ-Mem variants and the LoRA baseline
# on it (frozen) -> evaluate every history condition -> figures (from metrics only) ->
# claims. Full scale (papers.delta_mem.full_scale): see the second half of this file.


include: "delta_mem_helpers.smk"


rule delta_mem_backbone:
    output:
        model="results/delta_mem/backbone/seed{seed}.pt",
        record="results/delta_mem/backbone/seed{seed}.json",
    log:
        "logs/delta_mem/backbone/seed{seed}.log",
    benchmark:
        "results/delta_mem/benchmarks/backbone/seed{seed}.tsv"
    wildcard_constraints:
        seed=r"\d+",
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/delta_mem/resources/train/gpu", within=config),
        mem_mb=lookup(dpath="papers/delta_mem/resources/train/mem_mb", within=config),
        runtime=lookup(dpath="papers/delta_mem/resources/train/runtime", within=config),
    params:
        backbone=lookup(dpath="papers/delta_mem/backbone", within=config),
        task=lookup(dpath="papers/delta_mem/task", within=config),
        optim=lookup(dpath="papers/delta_mem/pretraining", within=config),
        device=rule_device,
    script:
        "../scripts/delta_mem_backbone.py"


rule delta_mem_train:
    input:
        backbone="results/delta_mem/backbone/seed{seed}.pt",
    output:
        model="results/delta_mem/models/{method}/seed{seed}.pt",
        record="results/delta_mem/runs/{method}/seed{seed}.json",
    log:
        "logs/delta_mem/train/{method}/seed{seed}.log",
    benchmark:
        "results/delta_mem/benchmarks/train/{method}/seed{seed}.tsv"
    wildcard_constraints:
        **DELTA_MEM_WILDCARDS,
        seed=r"\d+",
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/delta_mem/resources/train/gpu", within=config),
        mem_mb=lookup(dpath="papers/delta_mem/resources/train/mem_mb", within=config),
        runtime=lookup(dpath="papers/delta_mem/resources/train/runtime", within=config),
    params:
        method=lookup(dpath="papers/delta_mem/methods/{method}", within=config),
        backbone=lookup(dpath="papers/delta_mem/backbone", within=config),
        task=lookup(dpath="papers/delta_mem/task", within=config),
        optim=lookup(dpath="papers/delta_mem/training", within=config),
        device=rule_device,
    script:
        "../scripts/delta_mem_train.py"


rule delta_mem_evaluate:
    input:
        unpack(delta_mem_runs),
    output:
        metrics="results/delta_mem/metrics/{method}.json",
    log:
        "logs/delta_mem/evaluate/{method}.log",
    benchmark:
        "results/delta_mem/benchmarks/evaluate/{method}.tsv"
    wildcard_constraints:
        **DELTA_MEM_WILDCARDS,
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    params:
        method=lookup(dpath="papers/delta_mem/methods/{method}", within=config),
        seeds=lambda wildcards: delta_mem_seeds(wildcards.method),
        backbone=lookup(dpath="papers/delta_mem/backbone", within=config),
        task=lookup(dpath="papers/delta_mem/task", within=config),
        evaluation=lookup(dpath="papers/delta_mem/evaluation", within=config),
        device=rule_device,
    script:
        "../scripts/delta_mem_evaluate.py"


rule delta_mem_cost:
    output:
        metrics="results/delta_mem/cost/cost.json",
    log:
        "logs/delta_mem/cost.log",
    benchmark:
        "results/delta_mem/benchmarks/cost.tsv"
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    params:
        cost=lookup(dpath="papers/delta_mem/cost", within=config),
    script:
        "../scripts/delta_mem_cost.py"


rule delta_mem_figure_accuracy:
    input:
        metrics=lambda wildcards: delta_mem_metrics(
            delta_mem_figure_methods("main", "baseline")
        ),
    output:
        png=report(
            "results/delta_mem/figures/accuracy_vs_facts.png",
            caption="../workflow/report/delta_mem_accuracy_vs_facts.rst",
            category="δ-Mem",
        ),
        pdf="results/delta_mem/figures/accuracy_vs_facts.pdf",
    log:
        "logs/delta_mem/figure_accuracy.log",
    conda:
        "../envs/delta_mem.yaml"
    params:
        figure="accuracy_vs_facts",
        train_facts=lookup(dpath="papers/delta_mem/task/train_facts", within=config),
    script:
        "../scripts/delta_mem_figure.py"


use rule delta_mem_figure_accuracy as delta_mem_figure_ratios with:
    input:
        metrics=lambda wildcards: delta_mem_metrics(delta_mem_figure_methods("main")),
    output:
        png=report(
            "results/delta_mem/figures/gain_ratios.png",
            caption="../workflow/report/delta_mem_gain_ratios.rst",
            category="δ-Mem",
        ),
        pdf="results/delta_mem/figures/gain_ratios.pdf",
    log:
        "logs/delta_mem/figure_ratios.log",
    params:
        figure="gain_ratios",
        # which n_facts each panel's claim judges
        claims=lookup(dpath="papers/delta_mem/claims", within=config),


use rule delta_mem_figure_accuracy as delta_mem_figure_ablations with:
    input:
        metrics=lambda wildcards: delta_mem_metrics(delta_mem_variants()),
    output:
        png=report(
            "results/delta_mem/figures/ablations.png",
            caption="../workflow/report/delta_mem_ablations.rst",
            category="δ-Mem",
        ),
        pdf="results/delta_mem/figures/ablations.pdf",
    log:
        "logs/delta_mem/figure_ablations.log",
    params:
        figure="ablations",
        seed=lookup(dpath="papers/delta_mem/figures/ablation_seed", within=config),


use rule delta_mem_figure_accuracy as delta_mem_figure_cost with:
    input:
        metrics="results/delta_mem/cost/cost.json",
    output:
        png=report(
            "results/delta_mem/figures/cost.png",
            caption="../workflow/report/delta_mem_cost.rst",
            category="δ-Mem",
        ),
        pdf="results/delta_mem/figures/cost.pdf",
    log:
        "logs/delta_mem/figure_cost.log",
    params:
        figure="cost",


rule delta_mem_claims:
    input:
        metrics=delta_mem_metrics(),
        figures=expand("results/delta_mem/figures/{name}.png", name=DELTA_MEM_FIGURES),
        locomo=expand(
            "results/delta_mem/full/locomo/{backbone}.json",
            backbone=delta_mem_full_backbones(),
        ),
        mab=expand(
            "results/delta_mem/full/mab/{backbone}.json",
            backbone=delta_mem_full_mab_backbones(),
        ),
    output:
        claims="results/delta_mem/claims.json",
    log:
        "logs/delta_mem/claims.log",
    conda:
        "../envs/delta_mem.yaml"
    params:
        claims=lookup(dpath="papers/delta_mem/claims", within=config),
        checks=lookup(dpath="papers/delta_mem/checks", within=config, default={}),
        sanity=lookup(dpath="papers/delta_mem/sanity", within=config),
        methods=delta_mem_methods(),
        backbones=delta_mem_full_backbones(),
        mab_backbones=delta_mem_full_mab_backbones(),
    script:
        "../scripts/delta_mem_claims.py"


rule delta_mem:
    input:
        paper_target("delta_mem"),


# --- Full scale (papers.delta_mem.full_scale, config/full.yaml) --------------------------
# Hub models (Qwen3-4B-Instruct-2507, Qwen3-8B, SmolLM3-3B) load through the HF cache; data
# (QASPER-derived episodes, LoCoMo, MemoryAgentBench parquet) through the download rules. Train
# δ-Mem per backbone -> LoCoMo per (backbone, adapter, condition, conversation) and
# MemoryAgentBench per (backbone, adapter, condition, split, shard) -> summaries per backbone.


rule delta_mem_full_train:
    input:
        episodes=lambda wildcards: download_path(
            delta_mem_full()["training"]["download"]
        ),
    output:
        adapter="results/delta_mem/full/adapters/{backbone}.safetensors",
        record="results/delta_mem/full/adapters/{backbone}.json",
    log:
        "logs/delta_mem/full/train/{backbone}.log",
    benchmark:
        "results/delta_mem/benchmarks/full/train/{backbone}.tsv"
    wildcard_constraints:
        backbone="[a-z0-9_]+",
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    resources:
        gpu=delta_mem_full_resource("train", "gpu"),
        mem_mb=delta_mem_full_resource("train", "mem_mb"),
        runtime=delta_mem_full_resource("train", "runtime"),
    params:
        backbone=lookup(
            dpath="papers/delta_mem/full_scale/backbones/{backbone}", within=config
        ),
        memory=delta_mem_full_param("memory"),
        training=lambda wildcards: delta_mem_full_training(),
        dtype=delta_mem_full_param("dtype"),
        device=rule_device,
    script:
        "../scripts/delta_mem_full_train.py"


rule delta_mem_full_locomo:
    input:
        unpack(delta_mem_full_locomo_inputs),
    output:
        metrics="results/delta_mem/full/locomo/{backbone}/{adapter}/{condition}/conv{shard}.json",
    log:
        "logs/delta_mem/full/locomo/{backbone}/{adapter}/{condition}/conv{shard}.log",
    benchmark:
        "results/delta_mem/benchmarks/full/locomo/{backbone}/{adapter}/{condition}/conv{shard}.tsv"
    wildcard_constraints:
        backbone="[a-z0-9_]+",
        adapter="base|released|trained",
        condition=one_of(DELTA_MEM_FULL_CONDITIONS),
        shard=r"\d+",
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    resources:
        gpu=delta_mem_full_resource("evaluate", "gpu"),
        mem_mb=delta_mem_full_resource("evaluate", "mem_mb"),
        runtime=delta_mem_full_resource("evaluate", "runtime"),
    params:
        backbone=lookup(
            dpath="papers/delta_mem/full_scale/backbones/{backbone}", within=config
        ),
        memory=delta_mem_full_param("memory"),
        adapter=delta_mem_full_adapter,
        locomo=delta_mem_full_param("locomo"),
        dtype=delta_mem_full_param("dtype"),
        device=rule_device,
    script:
        "../scripts/delta_mem_full_locomo.py"


rule delta_mem_full_summary:
    input:
        shards=delta_mem_full_locomo_shards,
    output:
        metrics="results/delta_mem/full/locomo/{backbone}.json",
    log:
        "logs/delta_mem/full/locomo/{backbone}.log",
    wildcard_constraints:
        backbone="[a-z0-9_]+",
    conda:
        "../envs/delta_mem.yaml"
    params:
        labels=delta_mem_full_locomo_labels,
    script:
        "../scripts/delta_mem_full_summary.py"


rule delta_mem_full_mab:
    input:
        unpack(delta_mem_full_mab_inputs),
    output:
        metrics="results/delta_mem/full/mab/{backbone}/{adapter}/{condition}/{split}/shard{shard}.json",
    log:
        "logs/delta_mem/full/mab/{backbone}/{adapter}/{condition}/{split}/shard{shard}.log",
    benchmark:
        "results/delta_mem/benchmarks/full/mab/{backbone}/{adapter}/{condition}/{split}/shard{shard}.tsv"
    wildcard_constraints:
        backbone="[a-z0-9_]+",
        adapter="base|released|trained",
        condition=one_of(DELTA_MEM_FULL_CONDITIONS),
        split="Accurate_Retrieval|Test_Time_Learning|Long_Range_Understanding|Conflict_Resolution",
        shard=r"\d+",
    conda:
        "../envs/delta_mem.yaml"
    threads: config["threads"]
    resources:
        gpu=delta_mem_full_resource("evaluate", "gpu"),
        mem_mb=delta_mem_full_resource("evaluate", "mem_mb"),
        runtime=delta_mem_full_resource("evaluate", "runtime"),
    params:
        backbone=lookup(
            dpath="papers/delta_mem/full_scale/backbones/{backbone}", within=config
        ),
        memory=delta_mem_full_param("memory"),
        adapter=delta_mem_full_adapter,
        mab=delta_mem_full_param("memoryagentbench"),
        dtype=delta_mem_full_param("dtype"),
        device=rule_device,
    script:
        "../scripts/delta_mem_full_mab.py"


rule delta_mem_full_mab_summary:
    input:
        shards=delta_mem_full_mab_shards,
    output:
        metrics="results/delta_mem/full/mab/{backbone}.json",
    log:
        "logs/delta_mem/full/mab/{backbone}.log",
    wildcard_constraints:
        backbone="[a-z0-9_]+",
    conda:
        "../envs/delta_mem.yaml"
    params:
        labels=delta_mem_full_mab_labels,
    script:
        "../scripts/delta_mem_full_mab_summary.py"
