"""A rerun rebuilds what an interruption or a deleted file took away, with the same results.

Real Snakemake on a copy of the tiny config's finished run (conftest's ``test_run``, which
is also the uninterrupted reference). For every paper one intermediate of each kind it has
(data, a training run, metrics, a figure) is deleted: a dry run then schedules every one of
them. For real, paper by paper (the four heavy papers with -m slow): one data file is
truncated, and the run stops at it with an error that says to delete it and rerun; Ctrl-C
(SIGINT to the process group) stops each paper's training job once; the same command is run
again each time, until it finishes, with a second Snakemake started beside the last run (the
run lock turns it away). Every metrics and claims file then equals the
reference's, timings and provenance aside.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.conftest import ROOT, snakemake, snakemake_command, snakemake_env

pytestmark = pytest.mark.workflow

# per paper, under results/<paper>/: one intermediate of each kind the paper has, on its
# cheapest chain (a data file, a training run, a metrics file, a figure)
DELETED = {
    "plsa": ["runs/csbm_gss", "metrics/csbm_gss.json", "figures/error_vs_edges.png"],
    "qsurv": ["data/gbsg2.npz", "runs/gbsg2/part0", "metrics/gbsg2.json", "figures/ablation.png"],
    "sbd": ["data/davis.npz", "decompositions/davis/sbd.npz", "metrics/davis.json"],
    "delta_mem": ["models/delta_mem_q_only/seed0.pt", "metrics/delta_mem_q_only.json"],
    "helpful_only": ["runs/decorrelated/seed1.json", "metrics/summary.json"],
    "st_reliability": ["models/no_shared_program/seed1/part0", "eval/no_shared_program/seed1.json"],
    "malora": ["metrics/linear/seed1.json", "metrics/summary.json", "figures/table.png"],
    "r3_adapter": ["runs/lora_r2.json", "metrics/lora_r2.json", "figures/table.png"],
}
FIGURES = {  # the other papers' figure kind
    "sbd": "figures/greedy_trace.png",
    "delta_mem": "figures/cost.png",
    "helpful_only": "figures/bars.png",
    "st_reliability": "figures/gene_map.png",
}
TRUNCATED = "results/plsa/data/csbm_gss.npz"  # the advice "delete it and rerun" is followed
# two halves for real, the heavy one with -m slow (the dry-run test covers all eight)
CHEAP = ["plsa", "qsurv", "sbd", "malora"]
HEAVY = ["delta_mem", "helpful_only", "st_reliability", "r3_adapter"]
TRAINING = {  # the rule that trains (SBD: decomposes) each paper's models
    "plsa": "plsa_train",
    "qsurv": "qsurv_train",
    "sbd": "sbd_decompose",
    "delta_mem": "delta_mem_train",
    "helpful_only": "helpful_only_train",
    "st_reliability": "st_reliability_train",
    "malora": "malora_train_linear",
    "r3_adapter": "r3_adapter_train",
}
# measured on the machine's clock, not recomputed from the data: left out of the comparison
VOLATILE = re.compile(r"seconds|_ms$|^speedup|wall_time|peak_memory|started_at|hostname|^pid$")
TIMED_CLAIMS = {"speedup_bound", "spmm_speedup"}  # SBD's verdicts on SpMM timings
JOB = re.compile(r"^(?:local)?rule (\w+):$")
# the first line a job's script logs (scripts/_bootstrap.py), with the logging module's time
START_UP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO rule\.\w+: start-up ", re.M)


def _args(test_config: Path, cores: int = 1) -> list[str]:
    return ["--cores", str(cores), "--configfile", str(test_config)]


def _stable(value):
    if isinstance(value, dict):
        return {
            k: _stable(v) for k, v in value.items() if k != "provenance" and not VOLATILE.search(k)
        }
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _timed_claims(test_config: Path) -> set[str]:
    config = yaml.safe_load(test_config.read_text())
    return {
        cid
        for section in config["papers"].values()
        for cid, spec in (section.get("claims") or {}).items()
        if spec.get("kind") in TIMED_CLAIMS
    }


def _assert_same(path: Path, reference: Path, timed: set[str]) -> None:
    if path.suffix == ".json":
        ours, theirs = json.loads(path.read_text()), json.loads(reference.read_text())
        if path.name == "claims.json":
            ours, theirs = ([e for e in x if e["id"] not in timed] for x in (ours, theirs))
        assert _stable(ours) == _stable(theirs), path
    elif path.suffix == ".npz":
        with np.load(path) as ours, np.load(reference) as theirs:
            assert sorted(ours) == sorted(theirs), path
            for key in (k for k in ours if not VOLATILE.search(k)):
                np.testing.assert_array_equal(ours[key], theirs[key], err_msg=f"{path}: {key}")
    else:
        assert path.stat().st_size > 0, path


def _start(workdir: Path, test_config: Path, cores: int = 1) -> subprocess.Popen:
    return subprocess.Popen(
        snakemake_command(*_args(test_config, cores), workdir=workdir),
        env=snakemake_env(),
        cwd=ROOT,
        start_new_session=True,  # Ctrl-C reaches the whole process group, as in a terminal
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _training_job(
    process: subprocess.Popen, papers: set[str], workdir: Path
) -> tuple[str, Path] | None:
    """Read the run's output up to the start of a training job of one of ``papers``:
    (paper, its log file); None if the run ends first."""
    rule = None
    for line in process.stdout:
        field, _, value = line.strip().partition(": ")
        if match := JOB.match(line.strip()):
            rule = match.group(1)
        elif rule and field == "log":
            paper = next((p for p in papers if TRAINING[p] == rule), None)
            if paper:
                return paper, workdir / value.split(", ")[0]
            rule = None
    return None


def _wait_for_work(log: Path, since: datetime, process: subprocess.Popen) -> None:
    """Until the job has started its work: its log has a start-up line (logged after the
    imports) stamped after ``since``, when this run was started. The script rewrites its log
    from the start, so an earlier try's log (a traceback: longer) or this job's own first
    lines may be there when the caller looks: only the time tells them apart."""
    deadline = time.monotonic() + 300
    while not any(
        datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f") >= since
        for stamp in START_UP.findall(log.read_text() if log.exists() else "")
    ):
        assert process.poll() is None and time.monotonic() < deadline, log
        time.sleep(0.2)


def _finished_copy(test_run: Path, workdir: Path, papers) -> Path:
    """A copy of the finished run (without its logs: a job's log tells below when its work
    has begun), with the papers' intermediates deleted; returns its results/."""
    shutil.copytree(test_run.parent, workdir, ignore=shutil.ignore_patterns("locks", "log", "logs"))
    results = workdir / "results"
    for paper in papers:
        for path in [*DELETED[paper], *([FIGURES[paper]] if paper in FIGURES else [])]:
            target = results / paper / path
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    return results


def test_a_dry_run_after_deletions_schedules_every_deleted_file(tmp_path, test_run, test_config):
    workdir = tmp_path / "run"
    _finished_copy(test_run, workdir, DELETED)
    (workdir / TRUNCATED).unlink()
    dry = snakemake("-n", *_args(test_config), workdir=workdir)
    scheduled = {
        f
        for line in dry.stdout.splitlines()
        if line.startswith("    output: ")
        for f in line.removeprefix("    output: ").split(", ")
    }
    deleted = [TRUNCATED] + [
        f"results/{paper}/{path}"
        for paper in DELETED
        for path in [*DELETED[paper], *([FIGURES[paper]] if paper in FIGURES else [])]
    ]
    assert not [f for f in deleted if f not in scheduled], dry.stdout[-3000:]


@pytest.mark.parametrize(
    "papers",
    [
        pytest.param(CHEAP, id="+".join(CHEAP)),
        pytest.param(HEAVY, id="+".join(HEAVY), marks=pytest.mark.slow),
    ],
)
def test_interrupted_and_deleted_files_are_rebuilt_equal(tmp_path, test_run, test_config, papers):
    workdir = tmp_path / "run"
    results = _finished_copy(test_run, workdir, papers)
    if "plsa" in papers:  # the paper's run stops at a truncated file and says what to do
        (workdir / TRUNCATED).write_bytes((workdir / TRUNCATED).read_bytes()[:100])
        stopped = snakemake("plsa", *_args(test_config), workdir=workdir, check=False)
        assert stopped.returncode != 0
        log = (workdir / "logs/plsa/train/csbm_gss.log").read_text()
        assert f"{TRUNCATED}: cannot read" in log and "delete it and run the same" in log
        (workdir / TRUNCATED).unlink()  # as it says; rebuilt below

    # Ctrl-C during each paper's training job, then the same command again
    interrupted, pending = [], set(papers)
    while pending:
        since = datetime.now()  # local time, as the log's stamps
        run = _start(workdir, test_config)
        found = _training_job(run, pending, workdir)
        if found is None:
            break
        paper, log = found
        _wait_for_work(log, since, run)
        os.killpg(run.pid, signal.SIGINT)
        rest, _ = run.communicate(timeout=120)
        assert f"(Rule: {TRAINING[paper]})" not in rest, rest[-2000:]  # stopped, not finished
        interrupted.append(paper)
        pending.discard(paper)
    assert not pending, f"no training job of {sorted(pending)} ran: {interrupted}"

    # the run to the end, and a second one started beside it, turned away at once
    final = _start(workdir, test_config, cores=2)
    lock = workdir / "results" / ".run.lock"
    while f"process {final.pid} " not in (lock.read_text() if lock.exists() else ""):
        assert final.poll() is None, final.communicate()[0][-3000:]
        time.sleep(0.2)
    second = snakemake(*_args(test_config), workdir=workdir, check=False, timeout=120)
    output = second.stdout + second.stderr
    assert second.returncode != 0 and f"process {final.pid} " in output, output[-2000:]
    assert "IncompleteFilesException" not in output
    log, _ = final.communicate(timeout=1800)
    assert final.returncode == 0, log[-3000:]
    dry = snakemake("-n", *_args(test_config), workdir=workdir)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    timed = _timed_claims(test_config)
    for paper in papers:
        for path in sorted((results / paper).rglob("*")):
            relative = path.relative_to(results)
            # Snakemake's marker of a directory output is empty by design
            marker = path.name == ".snakemake_timestamp"
            if path.is_file() and relative.parts[1] != "benchmarks" and not marker:
                _assert_same(path, test_run / relative, timed)
