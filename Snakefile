# Reproduces NeurIPS 2026 papers end to end; see README.md.
import os

from snakemake.utils import min_version

min_version("9.19")


# The embedded default, unless a --configfile is given: then that file alone is the config
# (no merging into this one's dicts). This also holds inside cluster jobs, which Snakemake
# starts with the --configfile but without --replace-workflow-config.
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "rules/common.smk"


wildcard_constraints:
    dataset=_one_of(all_datasets()),
    method=_one_of(all_methods()),
    download=_one_of(d for d, spec in config["downloads"].items() if spec["sha256"]),
    unverified=_one_of(
        d for d, spec in config["downloads"].items() if not spec["sha256"]
    ),


include: "rules/datasets.smk"
include: "rules/qsurv.smk"
include: "rules/plsa.smk"
include: "rules/sbd.smk"
include: "rules/delta_mem.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        "results/claims.md",
        paper_targets(),
