"""The Snakefile's scheduler hooks: a wider re-check timespan at the start, no timers left
at the end.

Snakemake (9.27) re-runs its scheduler one max-jobs-per-timespan timespan after every pass
that leaves jobs waiting, and every finished job starts one more such chain: at its default
(100/1s) the passes grow with the jobs finished. The Snakefile's onstart replaces that default
with 1000/20s, also for a plain `snakemake` with no profile; a limit the user sets is kept. A
real run of the workflow (six short jobs on one core, so that five wait) counts the passes in
the verbose log and times the exit."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.conftest import ROOT, snakemake_command, snakemake_env

pytestmark = pytest.mark.workflow

TARGETS = [
    "results/qsurv/metrics/quadrature.json",
    *(f"results/qsurv/data/{d}.npz" for d in ("loglogistic", "gbsg2")),
    *(f"results/sbd/data/{d}.npz" for d in ("planted", "dense", "davis")),
]


def _run(tmp_path, *options: str) -> tuple[int, float]:
    """Scheduler passes, and seconds from the last job's end to the process's exit."""
    args = ["--configfile", str(ROOT / "config/test.yaml"), "--cores", "1", "--verbose"]
    command = snakemake_command(*options, *args, *TARGETS, workdir=tmp_path)
    process = subprocess.Popen(
        command, env=snakemake_env(), cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    passes, done_at = 0, None
    for line in process.stderr:
        passes += line.startswith("Ready jobs")
        if "steps (100%) done" in line:
            done_at = time.monotonic()
    assert process.wait(timeout=600) == 0
    return passes, time.monotonic() - done_at


def test_a_plain_run_rechecks_rarely_and_ends_at_once(tmp_path):
    passes, exit_after = _run(tmp_path / "plain")  # no profile: Snakemake's default 100/1s
    assert passes <= 2 * len(TARGETS) + 4, passes  # about one per finished job
    assert exit_after < 10, exit_after  # the 20 s re-check timers were cancelled
    # A limit the user chose is kept: one job a second more than the default re-checks every
    # second, and the chains grow (the count the hook prevents).
    chosen_passes, _ = _run(tmp_path / "chosen", "--max-jobs-per-timespan", "101/1s")
    assert chosen_passes > 2 * passes, (chosen_passes, passes)
