from _bootstrap import setup_logging

from repro.common.downloadlock import lock_settings, locked_fetch

setup_logging(snakemake)  # noqa: F821 (snakemake is injected by Snakemake)
lock_path, strict = lock_settings(snakemake.config)  # noqa: F821
locked_fetch(
    snakemake.wildcards[0],  # noqa: F821 (the download's name: {download} or {unverified})
    snakemake.params.url,  # noqa: F821
    snakemake.output.file,  # noqa: F821
    pinned=snakemake.params.sha256,  # noqa: F821
    lock_path=lock_path,
    strict=strict,
)
