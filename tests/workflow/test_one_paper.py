"""One paper at a time works all the way to the ledger and the report.

The state after `snakemake plsa` alone, from the tiny config's run (conftest's test_run):
PLSA's results and nothing of the other papers. Running the paper's target makes the ledger
(the other papers listed as not run), and `snakemake --report` then works.
"""

from __future__ import annotations

import importlib
import shutil

import pytest

from tests.conftest import snakemake

pytestmark = pytest.mark.workflow

PAPER = "plsa"


def test_one_papers_run_makes_a_ledger_and_a_report(tmp_path, test_run, test_config):
    workdir = tmp_path / "run"
    shutil.copytree(test_run.parent, workdir, ignore=shutil.ignore_patterns("locks", "log"))
    results = workdir / "results"
    for path in results.iterdir():
        if path.name not in (PAPER, ".run.lock"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    config = ("--configfile", str(test_config))

    snakemake("--cores", "1", PAPER, *config, workdir=workdir)
    ledger = (results / "claims.md").read_text()
    titles = {p: importlib.import_module(f"repro.{p}").TITLE for p in ("plsa", "qsurv", "sbd")}
    assert f"## {titles[PAPER]}\n" in ledger
    assert f"| {titles['qsurv']} | not run |" in ledger
    assert "1 papers; 7 not run" in ledger
    assert "not run" in (results / "claims.rst").read_text()

    report = snakemake("--report", "results/report.html", *config, workdir=workdir)
    assert (results / "report.html").stat().st_size > 0, report.stderr[-2000:]
    assert "Missing metadata" not in report.stdout + report.stderr
