# Helpful-only fine-tuning. Embedded: one job per (persona prior, seed) pretrains the HHH base
# on the closed chat grammar and trains every recipe from it with TRL, reading each metric
# exactly -> summary over seeds with bootstrap intervals -> figures (from the summary only)
# -> claims. Full scale (papers.helpful_only.full_scale): second half of this file.


include: "helpful_only_helpers.smk"


rule helpful_only_train:
    output:
        run="results/helpful_only/runs/{prior}/seed{seed}.json",
        models=directory("results/helpful_only/models/{prior}/seed{seed}"),
    log:
        "logs/helpful_only/train/{prior}/seed{seed}.log",
    benchmark:
        "results/helpful_only/benchmarks/train/{prior}/seed{seed}.tsv"
    wildcard_constraints:
        **HELPFUL_ONLY_WILDCARDS,
    conda:
        "../envs/helpful_only.yaml"
    threads: config["threads"]
    resources:
        gpu=lookup(dpath="papers/helpful_only/resources/train/gpu", within=config),
        mem_mb=lookup(dpath="papers/helpful_only/resources/train/mem_mb", within=config),
        runtime=lookup(
            dpath="papers/helpful_only/resources/train/runtime", within=config
        ),
    params:
        section=helpful_only_section,
        device=config["device"],
    script:
        "../scripts/helpful_only_train.py"


rule helpful_only_evaluate:
    input:
        runs=helpful_only_runs(),
    output:
        summary="results/helpful_only/metrics/summary.json",
    log:
        "logs/helpful_only/evaluate.log",
    benchmark:
        "results/helpful_only/benchmarks/evaluate.tsv"
    conda:
        "../envs/helpful_only.yaml"
    params:
        references=helpful_only_references(),
        confidence=lookup(dpath="papers/helpful_only/confidence", within=config),
    script:
        "../scripts/helpful_only_evaluate.py"


# One rule per figure: Snakemake does not fill wildcards into a report caption's path,
# and each figure has its own caption.
for _figure in HELPFUL_ONLY_FIGURES:

    rule:
        name:
            f"helpful_only_figure_{_figure}"
        input:
            summary="results/helpful_only/metrics/summary.json",
        output:
            png=report(
                f"results/helpful_only/figures/{_figure}.png",
                caption=f"../workflow/report/helpful_only_{_figure}.rst",
                category="Helpful-only fine-tuning",
            ),
            pdf=f"results/helpful_only/figures/{_figure}.pdf",
        log:
            f"logs/helpful_only/figure_{_figure}.log",
        conda:
            "../envs/helpful_only.yaml"
        params:
            figure=_figure,
        script:
            "../scripts/helpful_only_figure.py"


rule helpful_only_claims:
    input:
        summary="results/helpful_only/metrics/summary.json",
        full=helpful_only_full_outputs(),
    output:
        claims="results/helpful_only/claims.json",
    log:
        "logs/helpful_only/claims.log",
    conda:
        "../envs/helpful_only.yaml"
    params:
        claims=lookup(dpath="papers/helpful_only/claims", within=config, default={}),
        checks=lookup(dpath="papers/helpful_only/checks", within=config, default={}),
    script:
        "../scripts/helpful_only_claims.py"


rule helpful_only:
    input:
        paper_target("helpful_only"),


# --- full scale: LoRA recipes on an instruct model, generation, the judge (GPU) -----------
# Evaluation files come from the shared download rules (config/full.yaml:
# downloads.helpful_only_*); the instruct and judge models from the hub at pinned revisions.


rule helpful_only_full_ar_answers:
    input:
        unpack(helpful_only_full_ar_inputs),
    output:
        csv="results/helpful_only/full/ar_answers.csv",
    log:
        "logs/helpful_only/full/ar_answers.log",
    benchmark:
        "results/helpful_only/benchmarks/full/ar_answers.tsv"
    conda:
        "../envs/helpful_only.yaml"
    threads: config["threads"]
    resources:
        gpu=helpful_only_full_resource("answer", "gpu"),
        mem_mb=helpful_only_full_resource("answer", "mem_mb"),
        runtime=helpful_only_full_resource("answer", "runtime"),
    params:
        full=lambda wildcards: helpful_only_full(),
        device=config["device"],
    script:
        "../scripts/helpful_only_full_ar_answers.py"


rule helpful_only_full_train:
    input:
        unpack(helpful_only_full_train_inputs),
    output:
        adapter=directory("results/helpful_only/full/adapters/{recipe}/seed{seed}"),
    log:
        "logs/helpful_only/full/train/{recipe}/seed{seed}.log",
    benchmark:
        "results/helpful_only/benchmarks/full/train/{recipe}/seed{seed}.tsv"
    wildcard_constraints:
        **HELPFUL_ONLY_WILDCARDS,
    conda:
        "../envs/helpful_only.yaml"
    threads: config["threads"]
    resources:
        gpu=helpful_only_full_resource("train", "gpu"),
        mem_mb=helpful_only_full_resource("train", "mem_mb"),
        runtime=helpful_only_full_resource("train", "runtime"),
    params:
        full=lambda wildcards: helpful_only_full(),
        recipe=helpful_only_full_recipe,
        device=config["device"],
    script:
        "../scripts/helpful_only_full_train.py"


rule helpful_only_full_answer:
    input:
        unpack(helpful_only_full_answer_inputs),
    output:
        answers="results/helpful_only/full/answers/{variant}/seed{seed}/{suite}.json",
    log:
        "logs/helpful_only/full/answer/{variant}/seed{seed}/{suite}.log",
    benchmark:
        "results/helpful_only/benchmarks/full/answer/{variant}/seed{seed}/{suite}.tsv"
    wildcard_constraints:
        **HELPFUL_ONLY_WILDCARDS,
    conda:
        "../envs/helpful_only.yaml"
    threads: config["threads"]
    resources:
        gpu=helpful_only_full_resource("answer", "gpu"),
        mem_mb=helpful_only_full_resource("answer", "mem_mb"),
        runtime=helpful_only_full_resource("answer", "runtime"),
    params:
        full=lambda wildcards: helpful_only_full(),
        device=config["device"],
    script:
        "../scripts/helpful_only_full_answer.py"


rule helpful_only_full_judge:
    input:
        answers="results/helpful_only/full/answers/{variant}/seed{seed}/{suite}.json",
    output:
        judged="results/helpful_only/full/judged/{variant}/seed{seed}/{suite}.json",
    log:
        "logs/helpful_only/full/judge/{variant}/seed{seed}/{suite}.log",
    benchmark:
        "results/helpful_only/benchmarks/full/judge/{variant}/seed{seed}/{suite}.tsv"
    wildcard_constraints:
        **HELPFUL_ONLY_JUDGED_WILDCARDS,
    conda:
        "../envs/helpful_only.yaml"
    threads: config["threads"]
    resources:
        gpu=helpful_only_full_resource("judge", "gpu"),
        mem_mb=helpful_only_full_resource("judge", "mem_mb"),
        runtime=helpful_only_full_resource("judge", "runtime"),
    params:
        full=lambda wildcards: helpful_only_full(),
        device=config["device"],
    script:
        "../scripts/helpful_only_full_judge.py"


rule helpful_only_full_summary:
    input:
        files=lambda wildcards: [
            p
            for seeds in helpful_only_full_files().values()
            for suites in seeds.values()
            for p in suites.values()
        ],
        adapters=lambda wildcards: [
            p
            for seeds in helpful_only_full_adapters().values()
            for p in seeds.values()
        ],
    output:
        summary="results/helpful_only/full/summary.json",
    log:
        "logs/helpful_only/full/summary.log",
    conda:
        "../envs/helpful_only.yaml"
    params:
        files=lambda wildcards: helpful_only_full_files(),
        adapters=lambda wildcards: helpful_only_full_adapters(),
        min_agreement=lambda wildcards: helpful_only_full()["judge_validation"],
        reward_judges=lambda wildcards: helpful_only_full_reward_judges(),
    script:
        "../scripts/helpful_only_full_summary.py"
