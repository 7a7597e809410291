# Python helpers only (no rules) shared by every paper: config validation, the registered
# papers, lookups. A paper's own helpers live in rules/<paper>_helpers.smk.
import functools
import importlib
import os
import sys
import threading
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import jsonschema
from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from repro.common import runlock, schemas  # noqa: E402
from repro.common.configcheck import ConfigError  # noqa: E402
from repro.common.configerrors import explain  # noqa: E402
from repro.common.device import visible_gpu_count  # noqa: E402
from repro.common.downloadlock import (  # noqa: E402
    LockError,
    expected_sha256,
    lock_settings,
    read_lock,
)
from repro.common.downloadplan import (  # noqa: E402
    referenced_downloads,
    summary,
    unresolved_hosts,
)
from repro.common.parts import part_of, split_into_parts  # noqa: E402

# The registered papers: adding a paper is one entry here (docs/adding_a_paper.md).
PAPERS = (
    "qsurv",
    "plsa",
    "sbd",
    "delta_mem",
    "helpful_only",
    "st_reliability",
    "malora",
    "r3_adapter",
)


SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"


def validate(data, schema, prefix=()):
    """snakemake.utils.validate's check (defaults filled in), with each schema file parsed once
    (repro.common.schemas: snakemake's re-reads a file per $ref); an error names the key by
    its dotted path under ``prefix`` (repro.common.configerrors), not the whole config.
    """
    try:
        schemas.validate(data, SCHEMAS / schema)
    except jsonschema.ValidationError as error:
        raise ConfigError(
            explain(error, prefix, schemas.resolver(SCHEMAS / schema))
        ) from None


def config_sources():
    """Where this run's config comes from, for its error messages."""
    files = workflow.overwrite_configfiles or [
        Path(workflow.basedir, "config", "config.yaml")
    ]
    overrides = " and --config" if workflow.config_settings.config else ""
    return ", ".join(str(f) for f in files) + overrides


def _validate_config():
    """The shared keys, then every paper's section with its own schema and cross-checks.

    An absent paper is disabled. Runs before any job, so a bad config stops the run with a
    short message naming the key and the config file.
    """
    try:
        validate(config, "config.schema.yaml")
        for name in config["papers"]:
            if name not in PAPERS:
                raise ConfigError(
                    f"papers.{name}: not a paper of this workflow (one of {', '.join(PAPERS)})"
                )
        for paper in PAPERS:
            section = config["papers"].setdefault(paper, {"enabled": False})
            validate(section, f"{paper}.schema.yaml", prefix=("papers", paper))
            importlib.import_module(f"repro.{paper}.configcheck").check(config)
    except ConfigError as error:
        raise WorkflowError(f"{error}\n(config: {config_sources()})") from None


_validate_config()


def paper_config(paper):
    return config["papers"][paper]


def enabled_papers():
    return [p for p in PAPERS if paper_config(p)["enabled"]]


def paper_title(paper):
    """The paper's name as the paper writes it (``repro.<paper>.TITLE``), for the ledger."""
    return importlib.import_module(f"repro.{paper}").TITLE


def has_run(paper):
    """Whether the paper's claims exist in this working directory (its target has finished)."""
    return os.path.exists(f"results/{paper}/claims.json")


def figure_files(paper, names):
    """The png (for the report) and pdf (for the paper) of each named figure of a paper."""
    return [
        f"results/{paper}/figures/{n}.{ext}" for n in names for ext in ("png", "pdf")
    ]


def wildcards_of(**values):
    """Wildcards for calling a paper's input functions outside a job."""
    return SimpleNamespace(**values)


def paper_downloads(paper):
    """The downloaded files a paper's section names."""
    only = {"downloads": config["downloads"], "papers": {paper: paper_config(paper)}}
    return [download_path(name) for name in referenced_downloads(only)]


def paper_products(paper):
    """Every file a paper's rules make (``<paper>_products()`` in rules/<paper>_helpers.smk)
    and the downloads it reads. Its target asks for all of them: Snakemake rebuilds a missing
    file only when a target, or a job that has to rerun, asks for it, so a deleted or
    interrupted intermediate whose consumers are up to date would otherwise stay missing.
    """
    own = globals()[f"{paper}_products"]()
    return [*paper_downloads(paper), *own, f"results/{paper}/claims.html"]


# The ledger: results/claims.md (every table) and results/claims.rst (the report's front page).
LEDGER = ["results/claims.md", "results/claims.rst"]


def paper_target(paper):
    """The input of a paper's target rule: all its products and the ledger."""
    return lambda wildcards: run_lock(wildcards) + LEDGER + paper_products(paper)


def default_target(wildcards):
    """What rule all asks for, the ledger and every enabled paper's products. A command that
    only reads results (--report, --summary, --dag) covers the papers that have run, as a
    report can show only files that exist."""
    papers = [p for p in enabled_papers() if executing() or has_run(p)]
    return run_lock(wildcards) + LEDGER + [f for p in papers for f in paper_products(p)]


def ledger_claims(wildcards):
    """Paper -> claims.json of each paper in the ledger: those that have run and those this
    run makes (every enabled paper for rule all, else the papers named as targets); the
    other enabled papers are listed as not run."""
    targets = {rule.name for rule in workflow.dag.targetrules} if executing() else set()
    return {
        p: f"results/{p}/claims.json"
        for p in enabled_papers()
        if has_run(p) or p in targets or "all" in targets
    }


def unknown_target(wildcards):
    """Stop: the target is not one of this workflow's (rule unknown_target)."""
    raise WorkflowError(
        f"'{wildcards.target}' is not a target of this workflow. Targets: a paper "
        f"({', '.join(PAPERS)}), all (the default), downloads, or a file under results/."
    )


def report_front_page():
    """The report's front page: the ledger once claims_report has written it (results/ is in
    the working directory), a placeholder before the first run."""
    ledger = os.path.join(os.getcwd(), "results", "claims.rst")
    return ledger if os.path.exists(ledger) else "../workflow/report/ledger_missing.rst"


def one_of(names):
    """A wildcard pattern matching exactly these names (never anything when there are none)."""
    return "|".join(sorted(list(names), key=len, reverse=True)) or "(?!)"


def download_path(name):
    """The path of ``downloads.<name>`` after download (named after the URL)."""
    path = urllib.parse.urlparse(config["downloads"][name]["url"]).path
    return f"results/downloads/{name}/{os.path.basename(path.rstrip('/'))}"


def downloads(verified):
    """Names of the configured downloads with (True) or without (False) a pinned sha256."""
    return [
        d for d, spec in config["downloads"].items() if bool(spec["sha256"]) == verified
    ]


def needed_downloads():
    """Every download an enabled paper names (the `downloads` target), and nothing else."""
    return [download_path(name) for name in referenced_downloads(config)]


DOWNLOAD_RULES = ("download_dataset", "download_unverified")


def announce_downloads():
    """Before the first job (onstart): the files this run will download with their sizes from
    HEAD requests; under downloads_lock: strict, stop here if the lock would refuse one.
    """
    jobs = [j for j in workflow.dag.needrun_jobs() if j.rule.name in DOWNLOAD_RULES]
    if not jobs:
        return
    lock_path, strict = lock_settings(config)
    lock = read_lock(lock_path)
    urls, refused = {}, {}
    for job in jobs:
        name = job.wildcards[0]
        spec = config["downloads"][name]
        urls[name] = spec["url"]
        try:
            expected_sha256(name, spec["url"], spec["sha256"], lock, lock_path, strict)
        except LockError as error:
            refused[name] = str(error)
    hosts = unresolved_hosts(urls.values())
    if hosts:
        raise WorkflowError(
            f"downloads: {len(urls)} file(s) to fetch, but no address for {', '.join(hosts)} "
            "(no network here?). Fetch them where there is one (snakemake downloads "
            "--configfile ...), copy results/downloads/ here, and run again."
        )
    print(summary(urls, refused), flush=True)
    if refused:
        raise WorkflowError("\n".join(refused.values()))


# One GPU job per visible GPU on a local run, without extra flags. The limit is set only
# when the user gave none, only for local execution (a SLURM node has its own GPUs), and
# only when a GPU is visible (on CPU-only machines "GPU" rules run in parallel on the CPU).
if workflow.local_exec and "gpu" not in workflow.global_resources:
    _gpus = visible_gpu_count()
    if _gpus:
        workflow.register_resource("gpu", _gpus)


# Snakemake 9.27 re-runs its scheduler one max-jobs-per-timespan timespan (by default 100/1s)
# after every pass that leaves jobs waiting for cores, and every finished job starts one more
# such chain of re-runs (a threading.Timer each): 22 minutes into a 36-minute embedded run 101
# were alive, 101 scheduler passes a second. Finished jobs wake the scheduler themselves; the
# timer only matters once the rate limit is hit, so a 20 s timespan loses nothing and runs a
# twentieth as often. The default is replaced when the run starts (a profile or the command
# line cannot reach a plain `snakemake`); any other limit a user sets is kept.
SNAKEMAKE_DEFAULT_JOB_RATE = (100, 1)
SCHEDULER_JOB_RATE = (1000, "20s")


def slow_scheduler_rechecks():
    """At the start of a run, widen Snakemake's default job-rate timespan (see above)."""
    from snakemake.scheduling.job_scheduler import JobRateLimiter
    from snakemake.settings.types import MaxJobsPerTimespan

    limiter = workflow.scheduler.job_rate_limiter
    if (
        limiter is not None
        and (limiter.max_jobs, limiter.timespan) == SNAKEMAKE_DEFAULT_JOB_RATE
    ):
        workflow.scheduler.job_rate_limiter = JobRateLimiter(
            MaxJobsPerTimespan(*SCHEDULER_JOB_RATE)
        )


def cancel_scheduler_rechecks():
    """At the end of a run, cancel Snakemake's pending scheduler re-checks (non-daemon timer
    threads with the 20 s timespan), so the process exits at once.
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


# One run at a time on results/ (repro.common.runlock: Snakemake's own lock does not hold).
RUN_LOCK = "results/.run.lock"


def executing():
    """Whether this Snakemake makes files (a run or a dry run), rather than only reading what
    exists (--report, --summary, --dag, ...)."""
    return workflow.executor_plugin is not None


@functools.cache
def _hold_run_lock():
    try:
        return runlock.hold(RUN_LOCK)
    except runlock.RunLockError as error:
        raise WorkflowError(str(error)) from None


def take_run_lock():
    """Hold results/.run.lock until this run ends, or stop naming the run that holds it.
    Only the main process of a run takes it (not a dry run, not a cluster job, not --nolock);
    returns whether this process holds it.
    """
    if (
        executing()
        and not workflow.dryrun
        and workflow.is_main_process
        and workflow.execution_settings.lock
    ):
        _hold_run_lock()
        return True
    return False


def run_lock(wildcards):
    """An input of every target rule, taking the run lock while Snakemake builds the DAG,
    before its check for incomplete files. Holding the lock, no other run is alive, so a file
    marked incomplete was left by a run that was stopped (Ctrl-C, a kill): its job is rerun,
    as --rerun-incomplete would, and the same command just works again."""
    if take_run_lock():
        workflow.dag_settings.force_incomplete = True
    return []
