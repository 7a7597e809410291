"""QSurv's claims with their controls, from the claims' real config entries (issue 34 §4).

For every claim of config/config.yaml (not tested aside), a fake run holds every arm the
claim and its controls name: the claim's method as good as its baselines, the positive
control's arm as good, the negative control's arm worse by three margins (the quadrature
claim: GL steeper than the trapezoid rule on both families, midpoint shallower). Then

* both controls pass, and the verdict is the claim's own (judged without controls);
* the positive control's arm made worse: "uninformative", naming the control and its number;
* the negative control's arm made as good as the method: "uninformative" likewise.

A claim whose positive control is ``none`` records the reason instead.
"""

import pytest

from repro.common.claims import CONTRADICTED, REPRODUCED, UNINFORMATIVE
from tests.qsurv.test_claims import CONFIGS, comparison_inputs, run

SPECS = {
    cid: spec
    for cid, spec in CONFIGS["config"]["papers"]["qsurv"]["claims"].items()
    if spec["kind"] != "not_tested"
}
GOOD, BAD = 0.0, -3.0  # an arm's advantage over the baselines, in margins


def _arm(spec, side) -> str | None:
    entry = spec["controls"][side]
    return None if "none" in entry else entry["set"].get("method")


def comparison_run(spec, positive=GOOD, negative=BAD) -> dict:
    """The claim's data set: the method as good as the baselines; the control arms
    ``positive`` / ``negative`` margins better."""
    sides = {"positive": positive, "negative": negative}
    others = {_arm(spec, side): ahead for side, ahead in sides.items() if _arm(spec, side)}
    return comparison_inputs(spec, GOOD, others)


def quadrature_run(gompertz_gl=-3.0, midpoint=-0.4) -> dict:
    """Median errors 10^(-1 + slope (K - 2)) per family and rule: GL steeper than the
    trapezoid rule (-0.5) on both families (log-logistic -1.0); Gompertz's GL and every
    midpoint slope as given."""
    nodes = (2, 3, 4, 8)

    def rule(slope):
        return {str(k): {"median": 10 ** (-1 + slope * (k - 2))} for k in nodes}

    slopes = {"gompertz": gompertz_gl, "loglogistic": -1.0}
    families = {
        f: {"gauss_legendre": rule(s), "trapezoid": rule(-0.5), "midpoint": rule(midpoint)}
        for f, s in slopes.items()
    }
    return {"families": families, "gompertz_bound": {"violations": 0, "checked": 1}}


def judged(tmp_path, cid, spec, quad, documents):
    return run(tmp_path, {cid: spec}, quad, documents)[cid]


def inputs(spec, **planted):
    if spec["kind"] == "quadrature_convergence":
        quad = {"positive": {"gompertz_gl": -0.45}, "negative": {"midpoint": -1.0}}
        chosen = {k: v for side, v in planted.items() for k, v in quad[side].items()}
        return quadrature_run(**chosen), {}
    arms = {"positive": GOOD, "negative": BAD}
    flipped = {"positive": BAD, "negative": GOOD}
    return quadrature_run(), comparison_run(spec, **{**arms, **{s: flipped[s] for s in planted}})


def control_number(spec, side) -> float:
    """The control's statistic in the passing run, by hand: the quadrature claim's slope
    ratio on the families it names (Gompertz alone: -3 / -0.5; midpoint on both: -0.4 /
    -0.5); a comparison's worst-baseline difference (the arm's planted advantage)."""
    if spec["kind"] == "quadrature_convergence":
        return {"positive": 6.0, "negative": 0.8}[side]
    return {"positive": GOOD, "negative": BAD}[side] * spec["criterion"]["delta"]


@pytest.mark.parametrize("cid", list(SPECS))
def test_controls_of_every_claim(tmp_path, cid):
    spec = SPECS[cid]
    own = {k: v for k, v in spec.items() if k != "controls"}
    claim = judged(tmp_path, cid, spec, *inputs(spec))
    assert claim.verdict == judged(tmp_path, cid, own, *inputs(spec)).verdict == REPRODUCED
    by_side = {c["side"]: c for c in claim.controls}
    for side, expected in (("positive", REPRODUCED), ("negative", CONTRADICTED)):
        if "none" in spec["controls"][side]:
            assert by_side[side] == {"side": side, "none": spec["controls"][side]["none"]}
            continue
        assert by_side[side]["verdict"] == expected and by_side[side]["passed"]
        assert by_side[side]["measured"] == pytest.approx(control_number(spec, side), abs=1e-3)
        failing = judged(tmp_path, cid, spec, *inputs(spec, **{side: True}))
        control = {c["side"]: c for c in failing.controls}[side]
        assert failing.verdict == UNINFORMATIVE and not control["passed"]
        about = spec["controls"][side]["about"]
        assert f"the {side} control ({about}) came out {control['verdict']}" in failing.details
        assert f"{control['measured']:+.4g}" in failing.details  # the control's number


def test_every_claim_has_a_control_that_can_fail():
    """A claim whose controls are all none could never be gated: each has at least one."""
    for spec in SPECS.values():
        assert any("none" not in spec["controls"][side] for side in ("positive", "negative"))
