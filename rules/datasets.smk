# Downloads shared by every paper: pinned URL, sha256 checked twice (by the helper while
# streaming and by Snakemake's ensure), atomic rename, so an interrupted download leaves
# nothing behind.


rule download_dataset:
    output:
        file=ensure(
            "results/downloads/{download}/{filename}",
            sha256=lambda wildcards: config["downloads"][wildcards.download]["sha256"],
        ),
    log:
        "logs/downloads/{download}/{filename}.log",
    retries: 2
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        url=lambda wildcards: config["downloads"][wildcards.download]["url"],
        sha256=lambda wildcards: config["downloads"][wildcards.download]["sha256"],
    script:
        "../scripts/download.py"
