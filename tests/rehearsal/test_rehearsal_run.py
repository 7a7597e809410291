"""One paper's full-scale DAG rehearsed end to end (`make rehearsal` runs every covered paper):
stand-ins served from 127.0.0.1, config/full.yaml with config/overlays/rehearsal.yaml."""

from __future__ import annotations

import json

import pytest

from tests.rehearsal import run

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


def test_sbd_full_scale_runs_from_its_downloads_to_the_ledger(tmp_path):
    run.main(["--workdir", str(tmp_path), "--papers", "sbd"])
    record = json.loads((tmp_path / "record.json").read_text())
    missing = [o["output"] for o in record["outputs"] if not o["exists"]]
    assert record["papers"] == ["sbd"] and not missing
    planned = {o["rule"] for o in record["outputs"]}
    assert {"download_unverified", "sbd_prepare", "sbd_evaluate", "sbd_claims"} <= planned
    claims = json.loads((tmp_path / "results/sbd/claims.json").read_text())
    assert {c["id"] for c in claims} >= {"compression_copapers", "exact_reconstruction"}
    assert "## SBD" in (tmp_path / "results/claims.md").read_text()
    assert (tmp_path / "results/report.html").stat().st_size > 0
