# MaLoRA: margin-based LoRA merging. Embedded: the linear theory check (λ sweep per seed;
# all merge rules per seed) and scikit-learn digits with peft LoRA (all seeds in one job) ->
# summary over seeds -> figures (from the summary only) -> claims. Full scale
# (papers.malora.full_scale): the KnOTS CLIP and NLI benchmarks, second half of this file.


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


# One rule per figure: Snakemake does not fill wildcards into a report caption's path,
# and each figure has its own caption.
for _figure in MALORA_FIGURES:

    rule:
        name:
            f"malora_figure_{_figure}"
        input:
            summary="results/malora/metrics/summary.json",
        output:
            png=report(
                f"results/malora/figures/{_figure}.png",
                caption=f"../workflow/report/malora_{_figure}.rst",
                category="MaLoRA",
            ),
            pdf=f"results/malora/figures/{_figure}.pdf",
        log:
            f"logs/malora/figure_{_figure}.log",
        conda:
            "../envs/malora.yaml"
        params:
            figure=_figure,
        script:
            "../scripts/malora_figure.py"


rule malora_claims:
    input:
        summary="results/malora/metrics/summary.json",
        full=malora_full_outputs(),
        figures=expand("results/malora/figures/{figure}.png", figure=MALORA_FIGURES),
    output:
        claims="results/malora/claims.json",
    log:
        "logs/malora/claims.log",
    conda:
        "../envs/malora.yaml"
    params:
        claims=lookup(dpath="papers/malora/claims", within=config),
        checks=lookup(dpath="papers/malora/checks", within=config, default={}),
        section=malora_section,
    script:
        "../scripts/malora_claims.py"


rule malora:
    input:
        paper_target("malora"),


# --- full scale: the KnOTS benchmarks (GPU) ------------------------------------------------
# CLIP ViT-B/32 and ViT-L/14 on 8 vision tasks (every image decoded and preprocessed once,
# by malora_full_pixels), and the NLI benchmark (Llama-3-8B, 6 tasks; backbones with
# kind: nli). Inputs are the shared download rules' files (config/full.yaml:
# downloads.malora_*); an NLI backbone's model is a local folder (gated weights).


rule malora_full_tokenise:
    input:
        files=malora_nli_task_inputs,
    output:
        data="results/malora/full/{backbone}/data/{task}.json",
    log:
        "logs/malora/full/{backbone}/tokenise_{task}.log",
    benchmark:
        "results/malora/benchmarks/full/{backbone}/tokenise_{task}.tsv"
    wildcard_constraints:
        **MALORA_WILDCARDS,
    conda:
        "../envs/malora.yaml"
    params:
        spec=malora_nli_task_spec,
        model_dir=lambda wildcards: malora_backbone(wildcards.backbone)["model_dir"],
    script:
        "../scripts/malora_full_tokenise.py"


rule malora_full_pixels:
    input:
        files=malora_pixel_inputs,
    output:
        validation="results/malora/full/{backbone}/pixels/{task}/validation.npy",
        test="results/malora/full/{backbone}/pixels/{task}/test.npy",
        meta="results/malora/full/{backbone}/pixels/{task}/meta.json",
    log:
        "logs/malora/full/{backbone}/pixels_{task}.log",
    benchmark:
        "results/malora/benchmarks/full/{backbone}/pixels_{task}.tsv"
    wildcard_constraints:
        **MALORA_WILDCARDS,
    conda:
        "../envs/malora.yaml"
    # an estimate, not a measurement: the largest split (SVHN, 26,032 images; SUN397's
    # larger images) is held encoded in memory while one batch at a time is written
    resources:
        mem_mb=32000,
        runtime=180,
    params:
        spec=malora_pixel_spec,
        model_files=malora_pixel_model_files,
    script:
        "../scripts/malora_full_pixels.py"


rule malora_full_individual:
    input:
        files=malora_full_inputs,
    output:
        metrics="results/malora/full/{backbone}/individual.json",
    log:
        "logs/malora/full/{backbone}/individual.log",
    benchmark:
        "results/malora/benchmarks/full/{backbone}/individual.tsv"
    wildcard_constraints:
        **MALORA_WILDCARDS,
    conda:
        "../envs/malora.yaml"
    threads: config["threads"]
    resources:
        gpu=malora_full_resource("gpu"),
        mem_mb=malora_full_resource("mem_mb"),
        runtime=malora_full_resource("runtime"),
    params:
        files=lambda wildcards: malora_full_files(wildcards.backbone),
        settings=malora_full_settings,
        merge_rules=lookup(dpath="papers/malora/merge_rules", within=config, default={}),
        device=config["device"],
    script:
        "../scripts/malora_full.py"


use rule malora_full_individual as malora_full_merge with:
    input:
        files=malora_full_inputs,
        individual="results/malora/full/{backbone}/individual.json",
    output:
        metrics="results/malora/full/{backbone}/{method}.json",
    log:
        "logs/malora/full/{backbone}/{method}.log",
    benchmark:
        "results/malora/benchmarks/full/{backbone}/{method}.tsv"


rule malora_full_summary:
    input:
        runs=malora_full_results(),
    output:
        summary="results/malora/full/summary.json",
    log:
        "logs/malora/full/summary.log",
    conda:
        "../envs/malora.yaml"
    params:
        backbones=malora_full_backbones(),
        methods=malora_full_methods(),
    script:
        "../scripts/malora_full_summary.py"
