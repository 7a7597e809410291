"""benchmarks/workflow_cost.py on planted benchmark files and logs: its sums, per paper and per
rule, equal the ones written here by hand."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "workflow_cost.py"
SHORT = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
EXTENDED = SHORT.rstrip("\n") + "\tjobid\trule_name\twildcards\tparams\tthreads\n"


@pytest.fixture(scope="module")
def workflow_cost():
    spec = importlib.util.spec_from_file_location("workflow_cost", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _row(wall, rss, cpu) -> str:
    return f"{wall}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}"


@pytest.fixture
def run(tmp_path) -> Path:
    bench = tmp_path / "results/qsurv/benchmarks"
    _write(bench / "train/a/qsurv.tsv", SHORT + _row(10.0, 300, 8.5) + "\n")
    _write(bench / "train/b/qsurv.tsv", SHORT + _row(5.0, 200, 4.0) + "\n")
    # two repeats: both rows count; "NA" (a job shorter than the first sample) counts 0
    _write(bench / "evaluate/a.tsv", SHORT + _row(2.0, 100, 1.5) + "\n" + _row(2.0, 120, "NA"))
    other = tmp_path / "results/delta_mem/benchmarks"
    # the extended format names the rule, whatever the file is called
    extended_row = _row(20.0, 500, 19.0) + "\t1\tdm_sweep\t{}\t{}\t1\n"
    _write(other / "sweep/seed0.tsv", EXTENDED + extended_row)
    _write(other / "cost.tsv", SHORT + _row(3.0, 50, 2.0) + "\n")
    logs = tmp_path / "logs"
    line = "2026-12-02 04:00:00,000 INFO rule.{}: start-up {} s CPU before the first line of work\n"
    _write(logs / "qsurv/train/a/qsurv.log", line.format("qsurv_train", 2.5) + "later\n")
    _write(logs / "qsurv/train/b/qsurv.log", line.format("qsurv_train", 1.5))
    _write(logs / "qsurv/prepare/a.log", line.format("qsurv_prepare", 9.0))  # no benchmark
    _write(logs / "delta_mem/sweep/seed0.log", line.format("dm_sweep", 4.0))
    _write(logs / "delta_mem/cost.log", "no start-up line\n")
    return tmp_path


def test_sums_per_paper_and_rule(workflow_cost, run):
    papers, rules = workflow_cost.collect(run)
    assert set(papers) == {"qsurv", "delta_mem"}
    assert set(rules) == {"qsurv_train", "qsurv_evaluate", "dm_sweep", "delta_mem_cost"}
    q = papers["qsurv"]
    assert (q.jobs, q.cpu, q.wall, q.max_rss) == (3, 8.5 + 4.0 + 1.5, 10 + 5 + 2 + 2, 300)
    assert q.startup_cpu == 2.5 + 1.5 and q.startup_jobs == 2  # prepare has no benchmark
    assert math.isclose(q.startup_share, 4.0 / 14.0)
    assert (rules["qsurv_train"].jobs, rules["qsurv_train"].cpu) == (2, 12.5)
    assert rules["qsurv_evaluate"].startup_cpu == 0
    d = papers["delta_mem"]
    assert (d.jobs, d.cpu, d.startup_cpu) == (2, 21.0, 4.0)
    assert rules["delta_mem_cost"].startup_jobs == 0


def test_table_has_a_total_row_and_orders_by_cpu(workflow_cost, run):
    papers, _ = workflow_cost.collect(run)
    lines = workflow_cost.table(papers, "paper").splitlines()
    assert lines[2].startswith("| delta_mem | 2 | 21 |")
    assert lines[3].startswith("| qsurv | 3 | 14 | 19 | 4 | 29% |")
    assert lines[-1] == "| total | 5 | 35 | 42 | 8 | 23% | 500 |"


def test_command_line_prints_both_tables(run):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(run), "--rules"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "| paper | jobs |" in done.stdout and "| qsurv_train | 2 | 12 |" in done.stdout
    empty = subprocess.run([sys.executable, str(SCRIPT), str(run / "logs")], capture_output=True)
    assert empty.returncode == 2
