# Downloads shared by every paper: pinned URL, sha256 checked twice (by the helper while
# streaming and by Snakemake's ensure), atomic rename, so an interrupted download leaves
# nothing behind. Files whose checksum is not in the config (sha256: null) go through
# download_unverified, which checks them against the download lock (downloads_lock_file) or
# locks what it got. `snakemake downloads` fetches every file the config needs, and nothing
# else (on a login node, before submitting the rest); every run that downloads prints the
# files and their total size first (announce_downloads, called by the Snakefile's onstart:
# Snakemake keeps one handler per hook, the last one defined). No rule retries (retries: 0,
# against CONVENTIONS' "retries:" for downloads, and overriding the profiles' default): the
# helper retries transient failures itself (3 attempts, backoff), and a sha256 mismatch with
# the pin or the lock is final; rule retries would fetch a changed multi-GB file 3 x 3 times.


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
    retries: 0
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


# A split of a Hugging Face dataset whose shard count is known only from the dataset viewer's
# listing (downloads.<name>.parquet_split): every listed shard, into one folder.
rule download_parquet_split:
    output:
        shards=directory("results/downloads/{split}/shards"),
    log:
        "logs/downloads/{split}/shards.log",
    wildcard_constraints:
        split=one_of(parquet_splits()),
    retries: 0
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        url=lambda wildcards: config["downloads"][wildcards.split]["url"],
    script:
        "../scripts/download_parquet_split.py"
