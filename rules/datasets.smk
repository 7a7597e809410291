# Downloads shared by every paper: pinned URL, sha256 checked twice (by the helper while
# streaming and by Snakemake's ensure), atomic rename, so an interrupted download leaves
# nothing behind. Files whose checksum is not in the config (sha256: null) go through
# download_unverified, which checks them against the download lock (downloads_lock_file) or
# locks what it got. `snakemake downloads` fetches every file the config needs, and nothing
# else (on a login node, before submitting the rest); every run that downloads prints the
# files and their total size first (announce_downloads, called by the Snakefile's onstart:
# Snakemake keeps one handler per hook, the last one defined).


rule downloads:
    input:
        run_lock,
        needed_downloads(),


rule download_dataset:
    output:
        file=ensure(
            "results/downloads/{download}/{filename}",
            sha256=lambda wildcards: config["downloads"][wildcards.download]["sha256"],
        ),
    log:
        "logs/downloads/{download}/{filename}.log",
    wildcard_constraints:
        download=one_of(downloads(verified=True)),
    retries: 2
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        url=lambda wildcards: config["downloads"][wildcards.download]["url"],
        sha256=lambda wildcards: config["downloads"][wildcards.download]["sha256"],
    script:
        "../scripts/download.py"


use rule download_dataset as download_unverified with:
    output:
        file="results/downloads/{unverified}/{filename}",
    log:
        "logs/downloads/{unverified}/{filename}.log",
    wildcard_constraints:
        unverified=one_of(downloads(verified=False)),
    params:
        url=lambda wildcards: config["downloads"][wildcards.unverified]["url"],
        sha256=None,
