"""The reliability signals of each prediction (repro.st_reliability.evaluate) against brute
force: the NN distance of the prediction Δ̂ (not of the true Δ) to the training Δ, the
oracle's of the true Δ, magnitudes and the leave-one-out scale, through ``_quality_rows``."""

import types

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from repro.st_reliability import evaluate

PERTS, TRAIN = ["p1", "p2", "p3"], ["t1", "t2", "t3", "t4"]


def test_quality_rows_signals_equal_brute_force(monkeypatch):
    rng = np.random.default_rng(3)
    true = rng.normal(size=(3, 5))
    train = rng.normal(size=(4, 5))
    hat = true + rng.normal(0, 1.5, size=true.shape)  # far from the truth: the signals differ
    index = pd.MultiIndex.from_tuples([("l0", p) for p in PERTS + TRAIN])
    deltas = pd.DataFrame(np.vstack([true, train]), index=index)
    pairs = pd.DataFrame(
        {"split": ["few_shot"] * 3 + ["train"] * 4, "family": ["f"] * 7}, index=index
    )
    monkeypatch.setattr(evaluate, "predict_line", lambda *a, **k: (None, hat, 0))
    monkeypatch.setattr(evaluate, "line_cells", lambda *a, **k: None)
    monkeypatch.setattr(evaluate, "cell_eval_metrics", lambda *a, **k: pd.DataFrame(index=PERTS))
    adata = types.SimpleNamespace(var_names=[f"g{i}" for i in range(5)])
    rows = evaluate._quality_rows(
        "m", None, None, {"l0": None}, {"l0": PERTS}, adata, deltas, pairs,
        evaluate.EvalConfig(), "null", None,
    )  # fmt: skip
    assert [r["pert"] for r in rows] == PERTS
    for metric, scipy_metric in (("l2", "euclidean"), ("cosine", "cosine")):
        nn = cdist(hat, train, scipy_metric).min(1)
        oracle = cdist(true, train, scipy_metric).min(1)
        among = cdist(train, train, scipy_metric)
        np.fill_diagonal(among, np.inf)
        for i, row in enumerate(rows):
            assert row[f"nn_{metric}"] == pytest.approx(nn[i], rel=1e-9)
            assert row[f"oracle_{metric}"] == pytest.approx(oracle[i], rel=1e-9)
            assert row[f"scale_{metric}"] == pytest.approx(np.median(among.min(1)), rel=1e-9)
        assert not np.allclose(nn, oracle, rtol=1e-3)  # the case tells Δ̂ from Δ
    for i, row in enumerate(rows):
        assert row["magnitude"] == pytest.approx(np.linalg.norm(hat[i]))
        assert row["true_magnitude"] == pytest.approx(np.linalg.norm(true[i]))
        assert row["pearson_own"] == pytest.approx(np.corrcoef(hat[i], true[i])[0, 1])
