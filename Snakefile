# Reproduces NeurIPS 2026 papers end to end; see README.md.
import os

from snakemake.utils import min_version

min_version("9.19")


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "rules/common.smk"
include: "rules/datasets.smk"
include: "rules/qsurv.smk"
include: "rules/report.smk"


rule all:
    input:
        "results/claims.md",
        paper_targets(),
    default_target: True
