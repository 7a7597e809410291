"""Paired statistics against scipy, paired verdicts that can fail and the claims runner.

* ``paired_difference``: the t interval equals scipy.stats.ttest_rel's; the bootstrap
  interval agrees with scipy.stats.bootstrap's percentile interval to Monte-Carlo error.
* ``paired_claim``: beats / matches / at_least come out reproduced, contradicted or
  inconclusive exactly as the interval lies against the margin (a beats claim's margin is
  the metric's minimum effect, and it has to have one), and "not reproduced" on NaN, None,
  one seed or different seeds.
* coverage: the t interval the claims use covers the true mean difference in ≥ 0.93 of
  simulated paired data sets at n = 3, 5, 10 (null and shifted); the percentile bootstrap
  at 5 seeds does not, which is why claims never use it below 20 units.
* ``comparison_claim``: judged against every baseline (the least favourable shown); a
  metric stored as JSON null is "not reproduced", never a crash.
* ``run_claims``: checks are typed and counted apart; a handler that cannot compute its
  number gives "not reproduced" with the reason.
"""

import math

import numpy as np
import pytest
from scipy import stats

from repro.common.claims import (
    CHECK,
    CONTRADICTED,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PASSED,
    REPRODUCED,
    all_hold,
    check_worst,
    comparison_claim,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.stats import paired_difference


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_interval_equals_scipy_ttest_rel(confidence):
    rng = np.random.default_rng(7)
    a, b = rng.normal(0.7, 0.05, 5), rng.normal(0.65, 0.05, 5)
    ours = paired_difference(a, b, confidence=confidence)
    ref = stats.ttest_rel(a, b).confidence_interval(confidence_level=confidence)
    assert ours.mean == pytest.approx(float(np.mean(a - b)))
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert ours.n == 5 and ours.differences == pytest.approx(tuple(a - b))


def test_bootstrap_interval_agrees_with_scipy_bootstrap():
    rng = np.random.default_rng(8)
    a, b = rng.normal(1.0, 0.3, 8), rng.normal(0.8, 0.3, 8)
    ours = paired_difference(a, b, method="bootstrap", n_resamples=40_000, seed=1)
    ref = stats.bootstrap(
        (a - b,), np.mean, method="percentile", n_resamples=40_000, rng=np.random.default_rng(2)
    ).confidence_interval
    sd = float(np.std(a - b, ddof=1))
    assert ours.low == pytest.approx(ref.low, abs=0.03 * sd)
    assert ours.high == pytest.approx(ref.high, abs=0.03 * sd)


def test_mappings_pair_by_seed_and_must_share_seeds():
    d = paired_difference({2: 3.0, 0: 1.0, 1: 2.0}, {1: 1.0, 0: 1.0, 2: 1.0})
    assert d.differences == (0.0, 1.0, 2.0)  # seed order 0, 1, 2
    with pytest.raises(ValueError, match="same seeds"):
        paired_difference({0: 1.0, 1: 2.0}, {0: 1.0, 2: 2.0})


def test_one_seed_or_nan_gives_no_interval():
    assert math.isnan(paired_difference([1.0], [0.0]).low)
    assert math.isnan(paired_difference([1.0, float("nan")], [0.0, 0.0]).high)


def _spec(test, delta=None, higher=True):
    criterion = {"test": test, "higher_is_better": higher}
    if delta is not None:
        criterion["delta"] = delta
    return {"claim": "A vs B", "criterion": criterion}


SEEDS = (0, 1, 2, 3, 4)


def _pair(shift, noise=0.002):
    """B per seed and A = B + shift + small per-seed noise (a paired design)."""
    base = {s: 0.7 + 0.05 * s for s in SEEDS}
    # its own generator: the values do not depend on which tests ran before
    jitter = dict(zip(SEEDS, np.random.default_rng(9).normal(0, noise, len(SEEDS)), strict=True))
    return {s: base[s] + shift + jitter[s] for s in SEEDS}, base


MIN_EFFECT = 0.005  # the margin these tests write into a beats criterion


@pytest.mark.parametrize(
    ("test", "delta", "shift", "higher", "verdict"),
    [
        ("beats", MIN_EFFECT, 0.02, True, REPRODUCED),
        ("beats", MIN_EFFECT, -0.02, True, CONTRADICTED),
        ("beats", MIN_EFFECT, 0.0, True, CONTRADICTED),  # interval below the minimum effect
        ("beats", MIN_EFFECT, 0.005, True, INCONCLUSIVE),  # straddles the minimum effect
        ("beats", MIN_EFFECT, -0.02, False, REPRODUCED),  # lower is better: A below B wins
        ("beats", 0.05, 0.02, True, CONTRADICTED),  # a larger margin: 0.02 is not enough
        ("matches", 0.01, 0.0, True, REPRODUCED),
        ("matches", 0.01, 0.02, True, CONTRADICTED),  # two-sided: better by too much fails
        ("matches", 0.01, -0.02, True, CONTRADICTED),
        ("matches", 0.01, 0.01, True, INCONCLUSIVE),
        ("at_least", 0.01, -0.005, True, REPRODUCED),
        ("at_least", 0.01, 0.05, True, REPRODUCED),
        ("at_least", 0.01, -0.03, True, CONTRADICTED),
        ("at_least", 0.01, -0.01, True, INCONCLUSIVE),
    ],
)
def test_paired_verdicts(test, delta, shift, higher, verdict):
    a, b = _pair(shift)
    claim = paired_claim("c", _spec(test, delta, higher), a, b)
    assert claim.verdict == verdict, claim
    sign = 1 if higher else -1
    assert claim.measured == pytest.approx(sign * shift, abs=0.003)
    low, high = claim.interval
    assert low <= claim.measured <= high
    assert "half-width" in claim.details


def test_beats_without_a_margin_is_an_error():
    """The margin is the config's: no metric-wide minimum effect to fall back on."""
    a, b = _pair(0.02)
    with pytest.raises(KeyError, match="delta"):
        paired_claim("c", _spec("beats"), a, b)


def test_paired_claim_ignores_a_spread_that_pairing_removes():
    """Seeds differ a lot, A − B is steady: paired beats, as an unpaired z could not."""
    a, b = _pair(0.01, noise=0.001)
    assert np.std(list(b.values())) > 0.05
    assert paired_claim("c", _spec("beats", MIN_EFFECT), a, b).verdict == REPRODUCED


def _coverage(method, n, shift, trials=2000):
    """Share of simulated paired data sets whose interval covers the true mean difference."""
    rng = np.random.default_rng(n)
    base = rng.normal(0.0, 1.0, size=(trials, n))  # per-seed level, removed by pairing
    a = base + shift + rng.normal(0.0, 0.3, size=(trials, n))
    hits = 0
    for i in range(trials):
        diff = paired_difference(a[i], base[i], method=method, n_resamples=400, seed=i)
        hits += diff.low <= shift <= diff.high
    return hits / trials


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("shift", [0.0, 0.25])
def test_the_claims_interval_covers(n, shift):
    assert _coverage("t", n, shift) >= 0.93


def test_the_percentile_bootstrap_undercovers_at_five_seeds_so_claims_use_t():
    assert _coverage("bootstrap", 5, 0.0, trials=600) < 0.90
    a, b = _pair(0.02)
    spec = _spec("beats", MIN_EFFECT)
    spec["criterion"]["interval"] = "bootstrap"
    claim = paired_claim("c", spec, a, b)
    assert "t interval, n = 5" in claim.details


def test_over_seeds_turns_a_nan_seed_into_a_reason():
    assert over_seeds({0: 1.0, 1: 3.0}, min) == (1.0, "")
    for bad in (float("nan"), None, np.float32("nan")):
        value, reason = over_seeds({0: 1.0, 1: bad, 2: 3.0}, min)
        assert value is None and "[1]" in reason
    spec = {"claim": "positive everywhere", "criterion": {"op": ">", "threshold": 0}}
    claim = check_worst("c", spec, {0: 1.0, 1: float("nan")}, min, "")
    assert claim.verdict == NOT_REPRODUCED and "[1]" in claim.details
    assert check_worst("c", spec, {0: 1.0, 1: -1.0}, min, "").verdict == CONTRADICTED


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({0: 0.7, 1: None}, {0: 0.6, 1: 0.6}),
        ({0: 0.7, 1: float("nan")}, {0: 0.6, 1: 0.6}),
        ({0: 0.7}, {0: 0.6}),
        ({0: 0.7, 1: 0.8}, {0: 0.6, 2: 0.6}),
    ],
    ids=["none", "nan", "one-seed", "other-seeds"],
)
def test_paired_claim_without_usable_values_is_not_reproduced(a, b):
    claim = paired_claim("c", _spec("at_least", 0.5), a, b)
    assert claim.verdict == NOT_REPRODUCED and claim.measured is None
    assert "≥ 2 seeds" in claim.details


def _document(values):
    """A metrics document of the shared layout, method -> per-seed values of 'acc'."""
    return {
        "seeds": list(SEEDS),
        "methods": {
            m: {"per_seed": [{"acc": v} for v in vals], "mean": {}, "std": {}}
            for m, vals in values.items()
        },
    }


def _comparison(test="beats", delta=MIN_EFFECT):
    return {
        "kind": "comparison",
        "claim": "ours beats both",
        "dataset": "d",
        "metric": "acc",
        "method": "ours",
        "baselines": ["weak", "strong"],
        **_spec(test, delta),
    }


def test_comparison_needs_every_baseline_and_reports_the_least_favourable():
    ours = [0.80, 0.82, 0.81, 0.83, 0.80]
    weak = [v - 0.10 for v in ours]
    strong = [v + d for v, d in zip(ours, [0.01, -0.012, 0.004, 0.0, -0.003], strict=True)]
    doc = {"d": _document({"ours": ours, "weak": weak, "strong": strong})}
    claim = comparison_claim("c", _comparison(), doc)
    assert claim.verdict == INCONCLUSIVE  # a tie with a wide interval: too wide to tell
    assert "the number shown is the worst of these: vs strong" in claim.details
    assert "vs weak: reproduced" in claim.details
    assert claim.measured == pytest.approx(np.mean(np.subtract(ours, strong)))
    doc["d"]["methods"].pop("strong")
    spec = _comparison() | {"baselines": ["weak"]}
    assert comparison_claim("c", spec, doc).verdict == REPRODUCED


def test_comparison_with_a_null_metric_is_not_reproduced_not_a_crash():
    ours = [0.8, 0.8, None, 0.8, 0.8]  # a NaN stored as JSON null
    doc = {"d": _document({"ours": ours, "weak": [0.5] * 5, "strong": [0.5] * 5})}
    claim = comparison_claim("c", _comparison(), doc)
    assert claim.verdict == NOT_REPRODUCED and "missing" in claim.details


def test_comparison_on_a_data_set_not_run_is_not_tested():
    assert comparison_claim("c", _comparison(), {}).verdict == NOT_TESTED


def test_run_claims_types_checks_and_survives_missing_values():
    kinds = {
        "value": lambda cid, spec, inputs: paired_claim(cid, spec, *inputs[spec["what"]]),
        "count": lambda cid, spec, inputs: inputs["nothing"]["here"],  # KeyError
    }
    good = _pair(0.05)
    specs = {
        "c1": {"kind": "value", "what": "good", **_spec("beats", MIN_EFFECT)},
        "c2": {"kind": "count", "claim": "needs a file the run did not write"},
        "c3": {"kind": "not_tested", "claim": "at scale", "reason": "needs a GPU"},
    }
    checks = {"k1": {"kind": "value", "what": "good", **_spec("beats", MIN_EFFECT)}}
    out = run_claims(specs, kinds, {"good": good}, checks)
    verdicts = {c.id: (c.type, c.verdict) for c in out}
    assert verdicts == {
        "c1": ("claim", REPRODUCED),
        "c2": ("claim", NOT_REPRODUCED),
        "c3": ("claim", NOT_TESTED),
        "k1": (CHECK, PASSED),
    }
    assert "KeyError" in next(c for c in out if c.id == "c2").details
    failing = run_claims(
        {},
        kinds,
        {"bad": _pair(-0.05)},
        {"k": {"kind": "value", "what": "bad", **_spec("beats", MIN_EFFECT)}},
    )
    assert failing[0].verdict == FAILED
    with pytest.raises(ValueError, match="unknown kind"):
        run_claims({"x": {"kind": "vibes", "claim": "?"}}, kinds, {})


@pytest.mark.parametrize(
    ("description", "shown"),
    [
        ("em(ar_charq) − em(ar_sft_half)", "em(ar_sft_half) − em(ar_charq)"),
        # a comma inside parentheses belongs to its side; one after the second side stays last
        (
            "EM(AR SFT, decorrelated) − EM(AR SFT, base)",
            "EM(AR SFT, base) − EM(AR SFT, decorrelated)",
        ),
        ("3R − LoRA r6, clean EPE (lower is better)", "LoRA r6 − 3R, clean EPE (lower is better)"),
        ("A vs B", "A vs B, as the second minus the first (lower is better)"),
    ],
)
def test_a_lower_is_better_criterion_is_written_as_the_number_shown(description, shown):
    """The number shown is oriented so that positive favours A: B − A where lower is
    better, so its criterion reads B − A too (and A − B where higher is better)."""
    a, b = _pair(-0.02)  # A lower than B by 0.02: shown as B − A = +0.02
    for higher, text in ((False, shown), (True, description)):
        criterion = {"test": "beats", "delta": MIN_EFFECT, "higher_is_better": higher}
        spec = {"claim": "A vs B", "criterion": {**criterion, "description": description}}
        claim = paired_claim("c", spec, a, b)
        assert claim.criterion.startswith(f"{text}: 95% interval above"), claim.criterion
        assert claim.measured == pytest.approx(0.02 if not higher else -0.02, abs=0.003)


def test_a_merged_claim_keeps_its_own_text_and_paper_number_when_a_gate_is_worst():
    """A claim gated on a second part (helpful-only: helpfulness kept) shows the claim's own
    text and paper number, with the worst part's number and verdict."""
    a, b = _pair(0.02)
    effect_spec = {**_spec("beats", 0.01), "claim": "A lowers EM", "paper_value": 1.5}
    effect = paired_claim("c", effect_spec, a, b)
    gate_spec = {**_spec("at_least", 0.01), "claim": "A keeps the helpfulness of B"}
    gate = paired_claim("c", gate_spec, *_pair(-0.05))  # contradicted: the worst part
    merged = all_hold("c", [("effect", effect), ("keeps helpfulness", gate)])
    assert (merged.claim, merged.paper_value) == ("A lowers EM", 1.5)
    assert merged.verdict == CONTRADICTED and merged.measured == pytest.approx(gate.measured)
    assert merged.details.endswith("the number shown is the worst of these: keeps helpfulness")
