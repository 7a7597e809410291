"""Imported first by every script: puts src/ on sys.path and sends logging to the rule's log.

Snakemake adds only the script's own folder to sys.path (and conda jobs drop PYTHONPATH),
so the package is found through this file's location instead.
"""

import atexit
import gc
import logging
import resource
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# first, even where it is already on the path: Snakemake's preamble appends the workflow's
# search paths after the venv's, so a checkout other than the one the venv's editable install
# points at would otherwise import that other checkout's package
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))


def setup_logging(snakemake) -> logging.Logger:
    """Log to the rule's log file (and stderr), including warnings from libraries.

    Every script calls this after its imports, just before its first line of work, so the
    first line it logs is the job's start-up: the CPU this Python used so far (interpreter,
    Snakemake's script preamble, the imports); its last line is the job's whole CPU. Both
    are read by benchmarks/workflow_cost.py: Snakemake's benchmark files sample CPU every
    30 s after a job's first 15 s and miss what a job uses after its last sample."""
    startup = time.process_time()
    gc.freeze()  # the imported modules' objects: full collections during the work skip them
    handlers = [logging.StreamHandler()]
    if snakemake.log:
        handlers.append(logging.FileHandler(snakemake.log[0], mode="w"))
    logging.basicConfig(
        level=logging.INFO,
        handlers=handlers,
        force=True,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.captureWarnings(True)
    for noisy in ("fontTools", "matplotlib", "numba"):  # font subsetting etc. at INFO level
        logging.getLogger(noisy).setLevel(logging.WARNING)
    log = logging.getLogger(f"rule.{snakemake.rule}")

    def log_uncaught(kind, error, traceback):  # the failure belongs in the rule's log too
        log.critical("%s failed: %s", snakemake.rule, error, exc_info=(kind, error, traceback))

    sys.excepthook = log_uncaught
    log.info("start-up %.2f s CPU before the first line of work", startup)
    atexit.register(_at_exit, log)  # runs before logging's own exit hook closes the file
    params = getattr(snakemake, "params", None)  # absent where a caller passes only log/rule
    if getattr(params, "device", None) == "cuda":  # a GPU required: fail fast
        from repro.common.device import require_cuda

        require_cuda(snakemake.rule)
    return log


def _at_exit(log: logging.Logger) -> None:
    # Python's shutdown collects the whole heap several times: 1.5 CPU-s after the last line
    # for a job that imported torch, 2.0-2.6 with transformers, TRL and peft (busy machine),
    # more than some jobs' work. Frozen objects are skipped by the collector; later exit
    # hooks and flushes still run.
    gc.freeze()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_cpu = own.ru_utime + own.ru_stime
    children_cpu = children.ru_utime + children.ru_stime
    log.info(
        "job CPU %.2f s in all (this Python %.2f s, its finished child processes %.2f s)",
        own_cpu + children_cpu,
        own_cpu,
        children_cpu,
    )


def read_json_inputs(paths) -> list:
    """The JSON documents of a named input that holds one path or a list of paths."""
    from repro.common.io import read_json

    return [read_json(path) for path in ([paths] if isinstance(paths, str) else paths)]
