from _bootstrap import setup_logging

from repro.common.download import download

setup_logging(snakemake)  # noqa: F821 (snakemake is injected by Snakemake)
download(snakemake.params.url, snakemake.output.file, sha256=snakemake.params.sha256)  # noqa: F821
