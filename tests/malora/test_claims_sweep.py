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
    assert claim.details.startswith("measured vs the frobenius SVM ray; per seed [")
    # the negative control pairs λ_i with the closed form at λ_(4−i)
    swapped = claims_sweep.closed_form(
        "c2", {**spec, "closed_lambdas": "reversed"}, {"summary": _summary(rows)}
    )
    naive = [
        np.median(
            [
                abs(rows[i][f"measured_{m}"]["per_seed"][s] - closed[m][4 - i]) / closed[m][4 - i]
                for i in range(len(LAMBDAS))
                for m in closed
            ]
        )
        for s in SEEDS
    ]
    assert swapped.measured == pytest.approx(np.mean(naive), rel=1e-12)
    assert swapped.details.startswith("measured vs the frobenius SVM ray (λ reversed); per seed [")
    for row in rows:  # the nuclear closed forms, and the solver record of the nuclear SVM
        for which in closed:
            row[f"closed_nuclear_{which}"] = row[f"closed_frobenius_{which}"]
    nuclear = _summary(rows)
    nuclear["sweep"]["overlaps"][0]["nuclear_svm_status"] = ["optimal", "user_limit"]
    noted = claims_sweep.closed_form("c2", {**spec, "svm": "nuclear"}, {"summary": nuclear})
    assert noted.measured == pytest.approx(np.mean(per_seed), rel=1e-12)
    assert noted.details.startswith(
        "measured vs the nuclear SVM ray; nuclear SVM solves not 'optimal': 1 of 2; per seed ["
    )
    unknown = {**spec, "criterion": {"op": "=<", "threshold": 0.5}}
    with pytest.raises(ValueError, match="^claim c2: criterion op"):
        claims_sweep.closed_form("c2", unknown, {"summary": _summary(rows)})


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


def _sweep(blocks):
    """A summary whose sweep has these overlap blocks ({overlap, lambdas, [statuses]})."""
    return {"sweep": {"seeds": SEEDS, "overlaps": blocks}}


def test_svm_note_counts_every_nuclear_solve_not_optimal():
    """Two of five recorded solves over two overlaps are not "optimal" (a block without a
    record counts none); a Frobenius claim gets no note."""
    summary = _sweep(
        [
            {"overlap": 0.0, "nuclear_svm_status": ["optimal", "optimal_inaccurate", "optimal"]},
            {"overlap": 0.3, "nuclear_svm_status": ["optimal", "infeasible"]},
            {"overlap": 0.6},
        ]
    )
    assert claims_sweep._svm_note(summary, "nuclear") == "nuclear SVM solves not 'optimal': 2 of 5"
    assert claims_sweep._svm_note(summary, "frobenius") == ""


def _cosine_rows(smallest):
    """λ rows whose cosine with the nuclear SVM is ``smallest`` (per seed) at the smallest λ
    and 0.5 elsewhere."""
    rows = [{"lambda": LAMBDAS[0], "cosine_nuclear": {"per_seed": smallest}}]
    rest = [{"lambda": lam, "cosine_nuclear": {"per_seed": [0.5] * 3}} for lam in LAMBDAS[1:]]
    return rows + rest


def test_alignment_small_lambda_is_the_worst_overlaps_mean_cosine_at_the_smallest_lambda():
    """Mean cos at λ = 1e-5: 0.97 at ε = 0, (0.93 + 0.96 + 0.94) / 3 = 0.94333 at ε = 0.3:
    the worst, below 0.95; a missing seed gives no value, with the seed named."""
    spec = {"claim": "C1", "svm": "nuclear", "overlaps": [0.0, 0.3],
            "criterion": {"op": ">=", "threshold": 0.95}}  # fmt: skip
    blocks = [
        {"overlap": 0.0, "lambdas": _cosine_rows([0.97, 0.99, 0.95]),
         "nuclear_svm_status": ["optimal", "optimal"]},
        {"overlap": 0.3, "lambdas": _cosine_rows([0.93, 0.96, 0.94]),
         "nuclear_svm_status": ["optimal_inaccurate", "optimal"]},
    ]  # fmt: skip
    claim = claims_sweep.alignment_small_lambda("c", spec, {"summary": _sweep(blocks)})
    assert claim.measured == pytest.approx((0.93 + 0.96 + 0.94) / 3, rel=1e-12)
    assert claim.verdict == "contradicted"
    assert claim.details == (
        "mean cos at λ=1e-05 by ε {0.0: 0.97, 0.3: 0.9433}; "
        "nuclear SVM solves not 'optimal': 1 of 4"
    )
    blocks[1]["lambdas"][0]["cosine_nuclear"]["per_seed"] = [0.93, None, 0.94]
    missing = claims_sweep.alignment_small_lambda("c", spec, {"summary": _sweep(blocks)})
    assert missing.measured is None and missing.verdict == "not reproduced"
    assert missing.details.startswith(
        "mean cos at λ=1e-05 by ε {0.0: 0.97, 0.3: None}; "
        "ε=0.3: seeds [1] have no value (NaN or not computed); "
        "nuclear SVM solves not 'optimal': 1 of 4"
    )
    blocks[0]["lambdas"][0]["cosine_nuclear"]["per_seed"] = [None, 0.99, None]
    both = claims_sweep.alignment_small_lambda("c", spec, {"summary": _sweep(blocks)})
    assert "ε=0: seeds [0, 2] have no value (NaN or not computed); ε=0.3: seeds [1]" in both.details
    one = _sweep([{"overlap": 0.3, "lambdas": _cosine_rows([0.96, 0.98, 0.97])}])
    alone = claims_sweep.alignment_small_lambda("c", {**spec, "overlaps": [0.3]}, {"summary": one})
    assert (alone.verdict, alone.measured) == ("reproduced", pytest.approx(0.97, rel=1e-12))
    assert alone.details.startswith("mean cos at λ=1e-05 by ε {0.3: 0.97}; ")


def _margin_rows(pretrain, finetune):
    return [
        {"lambda": lam, "measured_pretrain": {"per_seed": p}, "measured_finetune": {"per_seed": f}}
        for lam, p, f in zip(LAMBDAS, pretrain, finetune, strict=True)
    ]


TRADEOFF = {"claim": "C2", "overlaps": [0.3], "retention_floor": 0.16,
            "criterion": {"test": "beats", "delta": 0.005, "higher_is_better": True,
                          "confidence": 0.95, "interval": "t"}}  # fmt: skip
PRETRAIN = [[0.20, 0.22, 0.21], [0.30, 0.31, 0.33], [0.40, 0.41, 0.38], [0.45, 0.47, 0.15],
            [0.50, 0.56, 0.53]]  # fmt: skip
FINETUNE = [[0.60, 0.62, 0.64], [0.20, 0.21, 0.19], [0.50, 0.52, 0.51], [0.42, 0.40, 0.41],
            [0.30, 0.31, 0.35]]  # fmt: skip


def test_tradeoff_compares_the_smallest_and_largest_lambda_by_default():
    """Fine-tuning gain at λ = 1e-5 over 1e-1: mean of (0.30, 0.31, 0.29) = +0.3; retention
    cost mean of (0.30, 0.34, 0.32) = +0.32 (other λ pairs give other numbers); the smallest
    pre-training margin, 0.15 at λ = 1e-2, seed 2, is below the floor 0.16: the worst part."""
    summary = _sweep([{"overlap": 0.3, "lambdas": _margin_rows(PRETRAIN, FINETUNE)}])
    claim = claims_sweep.tradeoff("c", TRADEOFF, {"summary": summary})
    assert claim.verdict == "contradicted"
    assert claim.measured == pytest.approx(0.15, rel=1e-12)
    assert claim.details.startswith("ε=0.3 fine-tuning gain: reproduced, +0.3 [")
    # a second overlap (listed first) where the gain is 0.60 − 0.30 on every seed: its parts
    # come first in the details, the worst part stays ε = 0.3's floor
    flat = [[0.6] * 3, *FINETUNE[1:4], [0.3] * 3]
    both = _sweep(
        [
            {"overlap": 0.0, "lambdas": _margin_rows(PRETRAIN, flat)},
            {"overlap": 0.3, "lambdas": _margin_rows(PRETRAIN, FINETUNE)},
        ]
    )
    two = claims_sweep.tradeoff("c", {**TRADEOFF, "overlaps": [0.0, 0.3]}, {"summary": both})
    assert two.details.startswith("ε=0 fine-tuning gain: reproduced, +0.3 [+0.3, +0.3]; ")
    assert "; ε=0.3 fine-tuning gain: reproduced, +0.3 [" in two.details
    assert two.measured == pytest.approx(0.15, rel=1e-12)
    assert "; ε=0.3 retention cost: reproduced, +0.32 [" in claim.details
    assert claim.details.endswith(
        "; ε=0.3 pre-training > 0.16: contradicted (smallest pre-training margin (measured)); "
        "the number shown is the worst of these: ε=0.3 pre-training > 0.16"
    )
    pretrain_gap = [row[:] for row in PRETRAIN]
    pretrain_gap[2][1] = None
    gap = _sweep([{"overlap": 0.3, "lambdas": _margin_rows(pretrain_gap, FINETUNE)}])
    named = claims_sweep.tradeoff("c", TRADEOFF, {"summary": gap}).details
    assert "seeds ['λ=1e-03 seed 1'] have no value" in named


def test_alignment_peak_shows_its_curve_where_a_part_has_no_value():
    """A NaN seed at the largest λ: that part has no value and shows the seed-mean curve
    and the solver note; ``cosine_with`` reads another adapter's cosines (here decreasing
    from the smallest λ: the peak interior λ 1e-4 loses to the smallest, by 0.2)."""
    nuclear = [0.80, 0.90, 0.97, 0.93, 0.85]
    path = [1.0, 0.80, 0.60, 0.50, 0.40]
    rows = [
        {
            "lambda": lam,
            "cosine_nuclear": {"per_seed": [c + 0.002, c - 0.001, c - 0.001]},
            "cosine_path_smallest": {"per_seed": [p, p + 0.01 * (i > 0), p - 0.01 * (i > 0)]},
        }
        for i, (lam, c, p) in enumerate(zip(LAMBDAS, nuclear, path, strict=True))
    ]
    rows[-1]["cosine_nuclear"]["per_seed"][1] = float("nan")
    summary = _summary(rows)
    summary["sweep"]["overlaps"][0]["nuclear_svm_status"] = ["optimal", "optimal_inaccurate"]
    spec = {"claim": "C1", "svm": "nuclear", "overlaps": [0.0],
            "criterion": {"test": "beats", "delta": 0.01, "higher_is_better": True,
                          "confidence": 0.95, "interval": "t"}}  # fmt: skip
    claim = claims_sweep.alignment_peak("c1", spec, {"summary": summary})
    assert claim.verdict == "not reproduced"
    assert (
        "; ε=0 λ=1e-03 vs λ=1e-01: not reproduced (mean cos with nuclear by λ {1e-05: 0.800, "
        "1e-04: 0.900, 1e-03: 0.970, 1e-02: 0.930, 1e-01: nan}; "
        "nuclear SVM solves not 'optimal': 1 of 2; needs the same"
    ) in claim.details
    other = claims_sweep.alignment_peak(
        "c1", {**spec, "cosine_with": "path_smallest"}, {"summary": summary}
    )
    assert other.verdict == "contradicted"
    assert other.measured == pytest.approx(0.80 - 1.0, rel=1e-9)
    assert "λ=1e-04 vs λ=1e-05" in other.details
