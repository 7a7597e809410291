"""The public API from the package, and every step a rule runs as ``python -m ... --help``."""

from __future__ import annotations

import json
import runpy
import sys

import torch

from tests.conftest import assert_steps_answer_help

STEPS = ("train", "evaluate", "cost", "figures", "claims", "fulltrain", "fullscale", "fullmab")


def test_public_api_from_the_package():
    import repro.delta_mem as dm_pkg
    from repro.delta_mem import DeltaMem, MemoryConfig, delta_rule_scan
    from repro.delta_mem.backbone import BackboneConfig, TinyTransformer

    assert set(dm_pkg.__all__) <= set(dir(dm_pkg)) and dm_pkg.TITLE == "δ-Mem"
    model = TinyTransformer(BackboneConfig(vocab=20, d_model=16, heads=2, mlp=32))
    dm = DeltaMem(model, MemoryConfig(rank=4))
    with dm.phase(writes=True):
        model(torch.randint(0, 20, (1, 7)))
    assert all(s.shape == (1, 4, 4) for s in dm.states())
    x = torch.nn.functional.normalize(torch.randn(1, 5, 4), dim=-1)
    m, s = delta_rule_scan(x, x, torch.randn(1, 5, 4), torch.rand(1, 5, 4), chunk_size=2)
    assert m.shape == (1, 5, 4) and s.shape == (1, 4, 4)
    assert isinstance(dm_pkg.DeltaMemory, type) and callable(dm_pkg.load_adapter)


def test_every_step_answers_help():
    assert_steps_answer_help("delta_mem", STEPS)


def test_cost_step_runs_from_the_command_line(tmp_path):
    out = tmp_path / "cost.json"
    sys.argv, old = ["cost", str(out), "--lengths", "8", "16", "--widths", "16x8"], sys.argv
    try:
        runpy.run_module("repro.delta_mem.cost", run_name="__main__")
    finally:
        sys.argv = old
    doc = json.loads(out.read_text())
    assert [r["T"] for r in doc["lengths"]] == [8, 16] and doc["widths"][0]["d_model"] == 16
