# MaLoRA: margin-based LoRA merging. Embedded: the linear theory check (λ sweep per seed;
# all merge rules per seed) and scikit-learn digits with peft LoRA (all seeds in one job) ->
# summary over seeds -> figures (from the summary only) -> claims. Full scale
# (papers.malora.full_scale): the KnOTS CLIP benchmark, second half of this file.


include: "malora_helpers.smk"


rule malora_train_sweep:
    output:
        metrics="results/malora/metrics/sweep/seed{seed}.json",
    log:
        "logs/malora/sweep/seed{seed}.log",
    benchmark:
        "results/malora/benchmarks/sweep/seed{seed}.tsv"
    wildcard_constraints:
        **MALORA_WILDCARDS,
    conda:
        "../envs/malora.yaml"
    threads: config["threads"]
    params:
        section=malora_section,
        step="sweep",
    script:
        "../scripts/malora_study.py"


use rule malora_train_sweep as malora_train_linear with:
    output:
        metrics="results/malora/metrics/linear/seed{seed}.json",
    log:
        "logs/malora/linear/seed{seed}.log",
    benchmark:
        "results/malora/benchmarks/linear/seed{seed}.tsv"
    params:
        section=malora_section,
        step="linear",


use rule malora_train_sweep as malora_train_digits with:
    output:
        metrics="results/malora/metrics/digits.json",
    log:
        "logs/malora/digits.log",
    benchmark:
        "results/malora/benchmarks/digits.tsv"
    params:
        section=malora_section,
        step="digits",


rule malora_evaluate:
    input:
        sweep=malora_per_seed("sweep"),
        linear=malora_per_seed("linear"),
        digits="results/malora/metrics/digits.json",
    output:
        summary="results/malora/metrics/summary.json",
    log:
        "logs/malora/evaluate.log",
    benchmark:
        "results/malora/benchmarks/evaluate.tsv"
    conda:
        "../envs/malora.yaml"
    script:
        "../scripts/malora_evaluate.py"


rule malora_figure:
    input:
        summary="results/malora/metrics/summary.json",
    output:
        png=report(
            "results/malora/figures/{figure}.png",
            caption="../workflow/report/malora_{figure}.rst",
            category="MaLoRA",
        ),
        pdf="results/malora/figures/{figure}.pdf",
    log:
        "logs/malora/figure_{figure}.log",
    wildcard_constraints:
        **MALORA_WILDCARDS,
    conda:
        "../envs/malora.yaml"
    script:
        "../scripts/malora_figure.py"


rule malora_claims:
    input:
        summary="results/malora/metrics/summary.json",
        full=malora_full_outputs(),
    output:
        claims="results/malora/claims.json",
    log:
        "logs/malora/claims.log",
    conda:
        "../envs/malora.yaml"
    params:
        claims=lookup(dpath="papers/malora/claims", within=config),
        checks=lookup(dpath="papers/malora/checks", within=config),
        section=malora_section,
    script:
        "../scripts/malora_claims.py"


rule malora:
    input:
        claims="results/malora/claims.json",
        figures=expand("results/malora/figures/{figure}.png", figure=MALORA_FIGURES),
