"""MaLoRA's λ-sweep claims (repro.malora.claims_sweep) on hand-made sweeps whose numbers are
known by construction: the closed-form error with its relative errors planted, and an
alignment curve whose interior peak is not next to either end."""

import numpy as np
import pytest

from repro.common.claims import REPRODUCED
from repro.malora import claims_sweep

SEEDS = [0, 1, 2]
LAMBDAS = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]


def _summary(rows):
    return {"sweep": {"seeds": SEEDS, "overlaps": [{"overlap": 0.0, "lambdas": rows}]}}


def test_closed_form_error_is_relative_to_the_closed_form():
    """measured = closed · (1 + e) with e planted per (seed, λ, margin): the relative error is
    |e| (dividing by the measured margin would give |e| / (1 + e)); per seed the median over
    λ and both margins, then the mean over seeds."""
    rng = np.random.default_rng(2)
    e = rng.uniform(-0.3, 0.6, size=(len(SEEDS), len(LAMBDAS), 2))
    closed = {"pretrain": [0.9, 0.8, 0.7, 0.6, 0.5], "finetune": [0.2, 0.3, 0.45, 0.6, 0.7]}
    rows = []
    for i, lam in enumerate(LAMBDAS):
        row = {"lambda": lam}
        for j, which in enumerate(("pretrain", "finetune")):
            c = closed[which][i]
            row[f"closed_frobenius_{which}"] = {"per_seed": [c] * len(SEEDS)}
            row[f"measured_{which}"] = {"per_seed": [c * (1 + e[s, i, j]) for s in SEEDS]}
        rows.append(row)
    spec = {"claim": "C2", "svm": "frobenius", "overlaps": [0.0],
            "criterion": {"op": "<=", "threshold": 0.5}}  # fmt: skip
    claim = claims_sweep.closed_form("c2", spec, {"summary": _summary(rows)})
    per_seed = [np.median(np.abs(e[s])) for s in SEEDS]
    assert claim.measured == pytest.approx(np.mean(per_seed), rel=1e-12)
    assert np.mean(per_seed) != pytest.approx(
        np.mean([np.median(np.abs(e[s]) / (1 + e[s])) for s in SEEDS]), rel=1e-3
    )


def test_alignment_peak_compares_the_best_interior_lambda_with_both_ends():
    """Seed-mean cosines 0.80, 0.90, 0.97, 0.93, 0.85 over λ: the peak is the middle λ
    (1e-3); its worst end is the largest λ, a mean paired difference of 0.12 (λ = 1e-4 or
    1e-2 would give 0.05 or 0.08)."""
    means = [0.80, 0.90, 0.97, 0.93, 0.85]
    noise = np.array([[0.004, -0.003, -0.001], [0.002, 0.001, -0.003], [-0.002, 0.003, -0.001],
                      [0.001, -0.004, 0.003], [0.003, -0.001, -0.002]])  # fmt: skip
    rows = [
        {"lambda": lam, "cosine_frobenius": {"per_seed": list(m + noise[i])}}
        for i, (lam, m) in enumerate(zip(LAMBDAS, means, strict=True))
    ]
    spec = {"claim": "C1", "svm": "frobenius", "overlaps": [0.0],
            "criterion": {"test": "beats", "delta": 0.01, "higher_is_better": True,
                          "confidence": 0.95, "interval": "t"}}  # fmt: skip
    claim = claims_sweep.alignment_peak("c1", spec, {"summary": _summary(rows)})
    worst = np.mean(rows[2]["cosine_frobenius"]["per_seed"]) - np.mean(
        rows[4]["cosine_frobenius"]["per_seed"]
    )
    assert worst == pytest.approx(0.12)
    assert claim.measured == pytest.approx(worst, rel=1e-9)
    assert claim.verdict == REPRODUCED
    assert "λ=1e-03 vs λ=1e-05" in claim.details and "λ=1e-03 vs λ=1e-01" in claim.details


def test_alignment_peak_next_to_the_end_and_the_planted_middle():
    """Seed-mean cosines 0.80, 0.90, 0.92, 0.97, 0.85: the peak is the last interior λ (1e-2),
    worst end difference 0.12; with ``aligned_lambda: middle`` the middle λ is set to cos 1
    and becomes the peak: 1 − 0.85 = 0.15."""
    means = [0.80, 0.90, 0.92, 0.97, 0.85]
    offsets = [0.002, -0.001, -0.001]
    rows = [
        {"lambda": lam, "cosine_frobenius": {"per_seed": [m + o * (i + 1) for o in offsets]}}
        for i, (lam, m) in enumerate(zip(LAMBDAS, means, strict=True))
    ]
    spec = {"claim": "C1", "svm": "frobenius", "overlaps": [0.0],
            "criterion": {"test": "beats", "delta": 0.01, "higher_is_better": True,
                          "confidence": 0.95, "interval": "t"}}  # fmt: skip
    claim = claims_sweep.alignment_peak("c1", spec, {"summary": _summary(rows)})
    assert claim.measured == pytest.approx(0.12)
    assert "λ=1e-02 vs λ=1e-01" in claim.details
    planted = claims_sweep.alignment_peak(
        "c1", {**spec, "aligned_lambda": "middle"}, {"summary": _summary(rows)}
    )
    assert planted.measured == pytest.approx(0.15)
    assert "λ=1e-03 vs λ=1e-01" in planted.details
