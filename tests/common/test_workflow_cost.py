"""benchmarks/workflow_cost.py on planted benchmark files and logs: its sums, per paper and per
rule, equal the ones written here by hand."""

from __future__ import annotations

import importlib.util
import math
import re
import resource
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
    _write(bench / "train/a.tsv", SHORT + _row(10.0, 300, 8.5) + "\n")
    _write(bench / "train/b.tsv", SHORT + _row(5.0, 200, 4.0) + "\n")
    # two repeats: both rows count; "NA" (a job shorter than the first sample) counts 0
    _write(bench / "evaluate/a.tsv", SHORT + _row(2.0, 100, 1.5) + "\n" + _row(2.0, 120, "NA"))
    other = tmp_path / "results/delta_mem/benchmarks"
    # the extended format names the rule, whatever the file is called
    extended_row = _row(20.0, 500, 19.0) + "\t1\tdm_sweep\t{}\t{}\t1\n"
    _write(other / "sweep/seed0.tsv", EXTENDED + extended_row)
    logs = tmp_path / "logs"
    start = (
        "2026-12-02 04:00:00,000 INFO rule.{}: start-up {} s CPU before the first line of work\n"
    )
    done = "2026-12-02 04:00:09,000 INFO rule.{}: job CPU {} s in all (this Python 1 s, ...)\n"

    def job(path, rule, startup, cpu):
        _write(logs / path, start.format(rule, startup) + "work\n" + done.format(rule, cpu))

    job("qsurv/train/a.log", "qsurv_train", 2.5, 11.0)
    job("qsurv/train/b.log", "qsurv_train", 1.5, 6.0)
    job("qsurv/evaluate/a.log", "qsurv_evaluate", 1.0, 3.0)
    job("qsurv/prepare/a.log", "qsurv_prepare", 9.0, 10.0)  # no benchmark file
    job("delta_mem/sweep/seed0.log", "dm_sweep", 4.0, 25.0)
    job("claims_report.log", "claims_report", 0.5, 1.0)  # a workflow rule, not a paper's
    # a job that failed before its exit hook (or a log of a non-script rule): not counted
    _write(logs / "delta_mem/cost.log", start.format("delta_mem_cost", 1.0))
    return tmp_path


def test_sums_per_paper_and_rule(workflow_cost, run):
    papers, rules = workflow_cost.collect(run)
    assert set(papers) == {"qsurv", "delta_mem", "workflow"}
    assert set(rules) == {
        "qsurv_train",
        "qsurv_evaluate",
        "qsurv_prepare",
        "dm_sweep",
        "claims_report",
    }
    q = papers["qsurv"]
    assert (q.jobs, q.cpu, q.startup_cpu) == (4, 11.0 + 6.0 + 3.0 + 10.0, 14.0)
    assert (q.bench_jobs, q.bench_cpu, q.bench_wall, q.max_rss) == (3, 14.0, 19.0, 300)
    assert math.isclose(q.startup_share, 14.0 / 30.0)
    train = rules["qsurv_train"]
    assert (train.jobs, train.cpu, train.bench_cpu) == (2, 17.0, 12.5)
    assert (rules["qsurv_prepare"].jobs, rules["qsurv_prepare"].bench_jobs) == (1, 0)
    d = papers["delta_mem"]
    assert (d.jobs, d.cpu, d.startup_cpu, d.bench_cpu) == (1, 25.0, 4.0, 19.0)
    assert (papers["workflow"].jobs, papers["workflow"].cpu) == (1, 1.0)


def test_table_has_a_total_row_and_orders_by_cpu(workflow_cost, run):
    papers, _ = workflow_cost.collect(run)
    lines = workflow_cost.table(papers, "paper").splitlines()
    assert lines[2].startswith("| qsurv | 4 | 30 | 14 | 47% | 3 | 19 | 14 | 300 |")
    assert lines[3].startswith("| delta_mem | 1 | 25 | 4 | 16% | 1 | 20 | 19 | 500 |")
    assert lines[-1] == "| total | 6 | 56 | 18 | 33% | 4 | 39 | 33 | 500 |"


def test_command_line_prints_both_tables(run):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(run), "--rules"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "| paper | jobs |" in done.stdout and "| qsurv_train | 2 | 17 |" in done.stdout
    empty = subprocess.run([sys.executable, str(SCRIPT), str(run / "results")], capture_output=True)
    assert empty.returncode == 2


def test_readme_block_is_the_runs_table_against_the_budget(workflow_cost, run):
    readme = run / "README.md"
    readme.write_text("intro\n<!-- cost -->\nold numbers\n<!-- /cost -->\nrest\n")
    papers, _ = workflow_cost.collect(run)
    papers["qsurv"].cpu += 600  # 630 CPU-s: over the 600 of a paper
    workflow_cost.rewrite_readme(readme, workflow_cost.readme_block(papers, run))
    text = readme.read_text()
    assert text.startswith("intro\n<!-- cost -->\n") and text.endswith("<!-- /cost -->\nrest\n")
    assert "old numbers" not in text
    # the logs' first and last stamps: 04:00:00 to 04:00:09
    assert "first job 2026-12-02 04:00:00, last 2026-12-02 04:00:09 (0 min 09 s)" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        "| qsurv | 4 | 630 (over) |",  # 11 + 6 + 3 + 10 + 600
        "| delta_mem | 1 | 25 |",
        "| workflow | 1 | 1 |",
        "| total | 6 | 656 |",
    ]
    (run / "plain.md").write_text("no block\n")
    with pytest.raises(SystemExit, match="no <!-- cost -->"):
        workflow_cost.rewrite_readme(run / "plain.md", "table")


def test_bootstrap_logs_the_whole_cpu_of_a_job_with_its_children(workflow_cost, tmp_path):
    """A real script through scripts/_bootstrap.py: the exit line counts the CPU the script
    burned itself and in a child process, which a benchmark file sampled every 30 s misses."""
    log = tmp_path / "logs/paper/job.log"
    log.parent.mkdir(parents=True)
    script = tmp_path / "job.py"
    script.write_text(
        f"""import subprocess, sys, time
sys.path.insert(0, {str(ROOT / "scripts")!r})
from types import SimpleNamespace
from _bootstrap import setup_logging
setup_logging(SimpleNamespace(log=[{str(log)!r}], rule="paper_step"))
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
burn(0.6)
subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.6\\n"
                "while time.process_time() < end: pass"], check=True)
"""
    )
    subprocess.run([sys.executable, str(script)], check=True, capture_output=True)
    papers, rules = workflow_cost.collect(tmp_path)
    cost = rules["paper_step"]
    assert cost.jobs == 1 and 1.2 <= cost.cpu < 2.5, log.read_text()
    assert 0 < cost.startup_cpu < 0.6
    assert "its finished child processes 0.6" in log.read_text()


def test_bootstrap_spares_a_job_the_final_collections_of_a_large_heap(tmp_path):
    """A script holding a million self-referencing objects (cyclic, as much of an imported
    library's heap is): Python's shutdown collections walk and free them after the logged
    "job CPU" line unless _bootstrap froze the heap. Compared with the same script whose
    ``gc.freeze`` does nothing, so that a busy machine slows both alike."""

    def cpu_after_the_logged_line(freeze: bool) -> float:
        log = tmp_path / f"job_{freeze}.log"
        script = tmp_path / f"job_{freeze}.py"
        script.write_text(
            f"""import gc, sys
sys.path.insert(0, {str(ROOT / "scripts")!r})
if not {freeze}:
    gc.freeze = lambda: None
from types import SimpleNamespace
from _bootstrap import setup_logging
setup_logging(SimpleNamespace(log=[{str(log)!r}], rule="paper_step"))
heap = []
for i in range(1_000_000):
    heap.append([i])
    heap[-1].append(heap[-1])
"""
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, str(script)], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        process = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return process - float(re.search(r"job CPU ([\d.]+) s in all", log.read_text())[1])

    without, frozen = cpu_after_the_logged_line(False), cpu_after_the_logged_line(True)
    assert without > 0.15 and frozen < 0.5 * without, (without, frozen)
