"""The controls of C1's within-model swap: State's class with planted weights, read by the
same audit and judged by the same check as the trained models."""

import dataclasses

import pytest
import torch

from repro.common.claims import run_claims
from repro.st_reliability import attention
from repro.st_reliability.claims import KINDS
from repro.st_reliability.model import ModelConfig
from repro.st_reliability.predict import sentence_batch
from repro.st_reliability.sentences import CellIndex
from repro.st_reliability.swap_control import SwapControlConfig, planted_model, run_controls
from tests.st_reliability.test_claims import CHECKS

ARCH = ModelConfig(hidden=16, layers=2, heads=2, intermediate=32, cell_set_len=8)
CFG = SwapControlConfig(n_perts=10, n_control=32, doses=(0.0, 2.0))


def column_means(kind: str):
    """Per perturbation, the column means of layer 0's maps on one shared basal sentence."""
    model = planted_model(ARCH, CFG, kind=kind, beta=CFG.beta, seed=0)
    cells = torch.randn(ARCH.cell_set_len, 2, generator=torch.Generator().manual_seed(1))
    perts = [f"p{i}" for i in range(CFG.n_perts)]
    index = CellIndex(cells, {}, ["ctrl", *perts], ["line"])
    batch = sentence_batch(index, torch.arange(ARCH.cell_set_len)[None], perts)
    with torch.no_grad(), attention.capture(model) as rec:
        model(batch)
    return rec["maps"][0].mean(dim=(1, 2)), rec["maps"][0]  # (P, S), (P, H, S, S)


def test_planted_attention_depends_on_the_perturbation_only_in_the_positive_control():
    positive, pos_maps = column_means("positive")
    negative, neg_maps = column_means("negative")
    assert (positive.max(0).values - positive.min(0).values).max() > 0.05
    torch.testing.assert_close(negative, negative[:1].expand_as(negative), atol=1e-6, rtol=0)
    for maps in (pos_maps, neg_maps):  # both non-uniform
        assert attention.map_statistics(maps)["kl_uniform"].mean() > 0.01


def test_swap_sees_the_planted_dependence_and_the_check_judges_it():
    control = run_controls(ARCH, CFG, seeds=[0, 1, 2])
    means = {k: v["layer_mean_per_seed"] for k, v in control["spectra"].items() if k != "uniform"}
    gain = {
        k: [a - b for a, b in zip(m["pc1_fraction"], m["pc1_fraction_uniform"], strict=True)]
        for k, m in means.items()
    }
    assert min(gain["positive"]) > 0.1, gain
    assert max(abs(g) for g in gain["negative"]) < 1e-4, gain
    assert gain["positive_beta0"] == pytest.approx([0.0] * 3, abs=1e-6)  # β = 0: uniform
    assert gain["positive_beta2"] == gain["positive"]
    inputs = {"metrics": {}, "prepared": {}, "swap_control": control}
    check = {c.id: c for c in run_claims({}, KINDS, inputs, CHECKS)}["swap_detects_planted"]
    assert check.verdict == "passed", check.details
    # the check can fail: the negative control judged as if it were the positive one
    swapped = dict(
        control, spectra={**control["spectra"], "positive": control["spectra"]["negative"]}
    )
    inputs["swap_control"] = swapped
    check = {c.id: c for c in run_claims({}, KINDS, inputs, CHECKS)}["swap_detects_planted"]
    assert check.verdict == "failed", check.details


def test_layout_needs_room():
    with pytest.raises(ValueError, match="hidden"):
        planted_model(dataclasses.replace(ARCH, hidden=8), CFG, kind="positive", beta=1, seed=0)
    with pytest.raises(ValueError, match="kind"):
        planted_model(ARCH, CFG, kind="other", beta=1, seed=0)
