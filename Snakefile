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
include: "rules/datasets.smk"


# Every registered paper brings its own rules (rules/<paper>.smk includes its helpers).
for _paper in PAPERS:

    include: f"rules/{_paper}.smk"


include: "rules/report.smk"


rule all:
    default_target: True
    input:
        default_target,


# A target that is neither a rule nor a file of this workflow (every file is in a folder)
# stops with the targets there are, instead of Snakemake's "No rule to produce".
rule unknown_target:
    input:
        unknown_target,
    output:
        "{target}",
    log:
        "logs/unknown_target/{target}.log",
    wildcard_constraints:
        target="[^/]+",
    localrule: True
    conda:
        "envs/common.yaml"
    shell:
        "false"


# One handler per hook (Snakemake keeps the last one defined), so every start-up step is here.
onstart:
    take_run_lock()
    slow_scheduler_rechecks()
    announce_downloads()


onsuccess:
    cancel_scheduler_rechecks()


onerror:
    cancel_scheduler_rechecks()
