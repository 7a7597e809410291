"""Forward passes of a few perturbations at a time (full scale) give what one pass per line
gives: predictions, the audit's statistics, gene maps and the causal check."""

import numpy as np
import pytest
import torch

from repro.st_reliability.audit import audit_model, chunks
from repro.st_reliability.causal import causal_quality
from repro.st_reliability.data import CONTROL
from repro.st_reliability.encoders import Identity
from repro.st_reliability.predict import Loaded, predict_line
from repro.st_reliability.sentences import CellIndex
from repro.st_reliability.train import Variant
from tests.st_reliability.test_model_attention import CFG, G, P, sharp_model

LINES = ("a", "b")
PERTS = [f"p{i}" for i in range(1, P)]


@pytest.fixture(scope="module")
def setting():
    g = torch.Generator().manual_seed(4)
    cells = torch.rand(2 * 40, G, generator=g)
    rows = {(line, CONTROL): torch.arange(i * 40, (i + 1) * 40) for i, line in enumerate(LINES)}
    index = CellIndex(cells, rows, [CONTROL, *PERTS], list(LINES))
    basal = {
        line: rows[(line, CONTROL)][torch.randperm(40, generator=g)[: 3 * CFG.cell_set_len]].view(
            3, CFG.cell_set_len
        )
        for line in LINES
    }
    loaded = Loaded(sharp_model(), Identity(G), Variant(), index.vocabulary)
    return loaded, index, basal


def test_chunks():
    assert chunks([1, 2, 3], 2) == [[1, 2], [3]]
    assert chunks([1, 2, 3], 0) == [[1, 2, 3]]


@pytest.mark.parametrize("size", [1, 3])
def test_batched_prediction_equals_one_pass(setting, size):
    loaded, index, basal = setting
    whole = predict_line(loaded, index, basal["a"], PERTS, ceiling=10.0)
    batched = predict_line(loaded, index, basal["a"], PERTS, ceiling=10.0, pert_batch=size)
    np.testing.assert_allclose(batched[1], whole[1], atol=1e-6)
    for name in whole[0]:
        np.testing.assert_allclose(batched[0][name], whole[0][name], atol=1e-6)
    assert batched[2] == whole[2]


@pytest.mark.parametrize("size", [1, 3])
def test_batched_audit_equals_one_pass(setting, size):
    loaded, index, basal = setting
    programs = np.array(["p53"] * 3 + ["cycling"] * 3 + ["none"] * (G - 6))
    kw = dict(programs=programs, layer=-1, eps=0.5, top=3, gene_maps=True)
    by_line = {line: PERTS for line in LINES}
    whole = audit_model(loaded, index, basal, by_line, **kw)
    batched = audit_model(loaded, index, basal, by_line, pert_batch=size, **kw)
    for a, b in zip(whole["layers"], batched["layers"], strict=True):
        for key, value in a.items():
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
        np.testing.assert_allclose(b["heads"]["kl_uniform"], a["heads"]["kl_uniform"], rtol=1e-6)
    assert whole["layers"][0]["kl_uniform"] > 0.05  # the statistics are not trivially equal
    for line in LINES:
        for key in ("gene_map", "gene_map_attention", "gene_map_residual"):
            np.testing.assert_allclose(
                batched["lines"][line][key], whole["lines"][line][key], atol=1e-5
            )
        for k in (0, 1):
            for stat in ("pc1_fraction", "pc1_fraction_uniform", "variance_residual"):
                assert batched["lines"][line][k][stat] == pytest.approx(
                    whole["lines"][line][k][stat], rel=1e-5
                )
    true = np.random.default_rng(0).normal(size=(len(PERTS), G))
    direction = whole["lines"]["a"][1]["direction"]
    kw = dict(layer=1, direction=direction, seed=0, ceiling=10.0)
    one = causal_quality(loaded, index, basal["a"], PERTS, true, **kw)
    many = causal_quality(loaded, index, basal["a"], PERTS, true, pert_batch=size, **kw)
    assert many == pytest.approx(one, abs=1e-6)
    # the caller's own unedited prediction stands in for the unedited pass, exactly
    _, own, _ = predict_line(loaded, index, basal["a"], PERTS, ceiling=10.0)
    assert causal_quality(loaded, index, basal["a"], PERTS, true, unedited=own, **kw) == one
    # and is what it uses: a different Δ̂ changes only the unedited entry
    moved = causal_quality(loaded, index, basal["a"], PERTS, true, unedited=-own, **kw)
    assert moved["none"] == pytest.approx(-one["none"]) and moved["uniform"] == one["uniform"]


def test_one_hot_repeat_equals_repeated_names(setting):
    _, index, _ = setting
    names = [PERTS[2], CONTROL, PERTS[0]]
    repeated = [name for name in names for _ in range(3)]
    assert torch.equal(index.one_hot(names, repeat=3), index.one_hot(repeated))
    assert index.one_hot(names, repeat=3).shape == (9, len(index.vocabulary))
