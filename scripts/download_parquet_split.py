from _bootstrap import setup_logging

from repro.common.downloadlock import lock_settings
from repro.common.parquetsplit import fetch_split

setup_logging(snakemake)  # noqa: F821 (snakemake is injected by Snakemake)
lock_path, strict = lock_settings(snakemake.config)  # noqa: F821
fetch_split(
    snakemake.wildcards.split,  # noqa: F821 (the download's name)
    snakemake.params.url,  # noqa: F821
    snakemake.output.shards,  # noqa: F821
    lock_path=lock_path,
    strict=strict,
)
