"""repro.common.controls through run_claims: a claim judged by its own handler on its
controls, the verdict gated (uninformative when a control fails), fragility at the boundary,
and the verdict at the seeds first registered.

The handler below is a real paired claim (``paired_claim``) on per-seed numbers an arm of a
fake run holds; the controls name other arms of the same run, as the papers' configs do.
"""

import math

import pytest
from scipy import stats

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTED,
    REPRODUCED,
    UNINFORMATIVE,
    paired_claim,
    run_claims,
)
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.common.controls import boundaries, fragile
from repro.common.ledger import controls_text, criterion_text, verdict_text

SEEDS = (0, 1, 2, 3, 4)
# arm -> per-seed accuracy; "baseline" is what every arm is compared with
ARMS = {
    "baseline": [0.50, 0.52, 0.49, 0.51, 0.50],
    "method": [0.60, 0.63, 0.58, 0.62, 0.61],  # beats the baseline by ≈ 0.10
    "oracle": [0.70, 0.71, 0.69, 0.72, 0.70],  # the planted effect: beats it clearly
    "weak_oracle": [0.50, 0.53, 0.48, 0.52, 0.50],  # an oracle that cannot show the effect
    "null": [0.50, 0.51, 0.50, 0.50, 0.51],  # the effect absent
}


def _arm(name):
    return dict(zip(SEEDS, ARMS[name], strict=True))


def _beats(cid, spec, run):
    return paired_claim(cid, spec, _arm(spec["method"]), _arm("baseline"))


KINDS = {"beats": _beats}
CRITERION = {"test": "beats", "delta": 0.02, "higher_is_better": True}


def _spec(positive="oracle", negative="null", **extra):
    return {
        "kind": "beats",
        "claim": "the method beats the baseline",
        "method": "method",
        "criterion": CRITERION,
        "registered": "2026-12-01",
        "controls": {
            "positive": {"about": "the planted effect", "set": {"method": positive}},
            "negative": {"about": "the effect absent", "set": {"method": negative}},
        },
        **extra,
    }


def _judge(spec):
    return run_claims({"c": spec}, KINDS, None)[0]


def test_both_controls_pass_keep_the_verdict():
    claim = _judge(_spec())
    assert claim.verdict == REPRODUCED and claim.own_verdict == ""
    positive, negative = claim.controls
    assert positive["verdict"] == REPRODUCED and positive["passed"]
    assert negative["verdict"] == CONTRADICTED and negative["passed"]
    # the control's number is the same statistic: oracle − baseline per seed, by hand
    diffs = [o - b for o, b in zip(ARMS["oracle"], ARMS["baseline"], strict=True)]
    assert positive["measured"] == pytest.approx(sum(diffs) / len(diffs))


def test_failing_positive_control_makes_it_uninformative():
    claim = _judge(_spec(positive="weak_oracle"))
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    assert "positive control (the planted effect) came out" in claim.details
    assert "cannot show the effect" in claim.details
    assert verdict_text(claim.__dict__) == "uninformative (own: reproduced)"


def test_reproduced_negative_control_makes_it_uninformative():
    claim = _judge(_spec(negative="oracle"))
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    assert "does not separate the effect from its absence" in claim.details
    assert controls_text(claim.__dict__).startswith("positive ✓ (the planted effect): reproduced")
    assert "negative ✗ (the effect absent): reproduced" in controls_text(claim.__dict__)


def test_a_contradicted_claim_with_a_failing_control_is_not_contradicted():
    spec = _spec(positive="weak_oracle") | {"method": "null"}
    claim = _judge(spec)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == CONTRADICTED


def test_inconclusive_negative_control_passes():
    arms = dict(ARMS)
    try:  # a null whose interval straddles the margin
        ARMS["null"] = [0.50, 0.60, 0.45, 0.55, 0.52]
        claim = _judge(_spec())
    finally:
        ARMS.clear()
        ARMS.update(arms)
    assert claim.controls[1]["verdict"] == INCONCLUSIVE and claim.controls[1]["passed"]
    assert claim.verdict == REPRODUCED


def test_controls_none_keeps_the_verdict_and_is_shown():
    spec = _spec()
    spec["controls"] = {"none": "the statistic cannot depend on the effect by construction"}
    claim = _judge(spec)
    assert claim.verdict == REPRODUCED
    assert controls_text(claim.__dict__) == (
        "none: the statistic cannot depend on the effect by construction"
    )


def test_not_tested_claim_runs_no_controls():
    spec = {"kind": "not_tested", "claim": "x", "reason": "needs a GPU", "registered": "2026-12-01"}
    claim = _judge(spec)
    assert claim.verdict == NOT_TESTED and claim.controls == ()


def test_registration_and_revisions_reach_the_ledger():
    revised = [{"date": "2026-12-03", "what": "seeds 3 → 5", "why": "inconclusive at 3"}]
    claim = _judge(_spec(revised=revised))
    text = criterion_text(claim.__dict__)
    assert "registered 2026-12-01" in text
    assert "revised 2026-12-03: seeds 3 → 5 (inconclusive at 3)" in text


def test_verdict_at_registered_seeds_against_scipy():
    claim = _judge(_spec(registered_seeds=[0, 1, 2]))
    found = claim.at_registered_seeds
    a = [ARMS["method"][s] - ARMS["baseline"][s] for s in (0, 1, 2)]
    low, high = stats.t.interval(0.95, df=2, loc=sum(a) / 3, scale=stats.sem(a))
    assert found["seeds"] == [0, 1, 2]
    assert found["interval"] == pytest.approx([low, high])
    assert found["verdict"] == (REPRODUCED if low > 0.02 else INCONCLUSIVE)
    assert "at the 3 seeds registered first" in claim.details


@pytest.mark.parametrize(
    "criterion,edges",
    [
        ({"op": ">=", "threshold": 0.5}, (0.5,)),
        ({"test": "beats", "delta": 0.1}, (0.1,)),
        ({"test": "matches", "delta": 0.1}, (-0.1, 0.1)),
        ({"test": "at_least", "delta": 0.1}, (-0.1,)),
        ({"test": "beats"}, ()),
        (None, ()),
    ],
)
def test_boundaries(criterion, edges):
    assert boundaries(criterion) == edges


@pytest.mark.parametrize(
    "verdict,interval,edges,expected",
    [
        # half-width 0.1, a quarter of it 0.025: the low end 0.12 is 0.02 above δ = 0.1
        (REPRODUCED, (0.12, 0.32), (0.1,), True),
        (REPRODUCED, (0.13, 0.33), (0.1,), False),  # 0.03 above: not fragile
        (CONTRADICTED, (-0.3, 0.08), (0.1,), True),  # high end 0.02 below δ, hw 0.19
        (CONTRADICTED, (-0.3, -0.2), (-0.1, 0.1), False),  # matches: 0.1 outside, hw 0.05
        (INCONCLUSIVE, (0.05, 0.15), (0.1,), False),  # undecided: never fragile
        (REPRODUCED, (math.nan, math.nan), (0.1,), False),
        (REPRODUCED, None, (0.1,), False),
    ],
)
def test_fragile_by_hand(verdict, interval, edges, expected):
    assert fragile(verdict, interval, edges) is expected


def test_configcheck_requires_the_record():
    good = {"claims": {"c": _spec()}}
    check_claim_specs("p", good, ["beats"], {"method": set(ARMS)})
    for missing in ("registered", "controls"):
        spec = {k: v for k, v in _spec().items() if k != missing}
        with pytest.raises(ConfigError, match=f"papers.p.claims.c.{missing}: missing"):
            check_claim_specs("p", {"claims": {"c": spec}}, ["beats"])
    bad = _spec(positive="no_such_arm")
    with pytest.raises(ConfigError, match="c.controls.positive.set.method: 'no_such_arm'"):
        check_claim_specs("p", {"claims": {"c": bad}}, ["beats"], {"method": set(ARMS)})


@pytest.mark.parametrize(
    "parts,expected",
    [
        # a contradicted part decides even beside a part that could not be judged
        ([REPRODUCED, CONTRADICTED, "not reproduced"], CONTRADICTED),
        (["not reproduced", CONTRADICTED], CONTRADICTED),
        ([REPRODUCED, "not reproduced", INCONCLUSIVE], "not reproduced"),
        ([REPRODUCED, INCONCLUSIVE, REPRODUCED], INCONCLUSIVE),
        ([REPRODUCED, REPRODUCED, REPRODUCED], REPRODUCED),
    ],
)
def test_combined_verdict_by_hand(parts, expected):
    from repro.common.claims import combined_verdict

    assert combined_verdict(parts) == expected
