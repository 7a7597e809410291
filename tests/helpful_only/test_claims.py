"""Every configured claim can come out contradicted (and reproduced where the data say so,
inconclusive where the seeds cannot tell); missing values make it "not reproduced" without
crashing the claims job; checks catch what they check."""

import math

import pytest
import yaml

from repro.common.claims import run_claims
from repro.helpful_only.claims import KINDS
from tests.conftest import ROOT
from tests.helpful_only.summaries import per_seed_summary as summary_with

SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["helpful_only"]
# each claim's own statistic, without its controls (tests/helpful_only/test_controls.py)
CLAIMS = {
    cid: {k: v for k, v in spec.items() if k != "controls"}
    for cid, spec in SECTION["claims"].items()
    if spec["kind"] != "not_tested"
}


def _values(spec, outcome):
    """Per-seed values where the claim's A side differs from B as ``outcome`` asks:
    "holds" (beyond the metric's minimum effect on the better side, or inside ±delta),
    "null" (on B), "fails" (outside), "noisy" (the minimum effect, ± a wide seed spread)."""
    a, b, criterion = spec["a"], spec["b"], spec["criterion"]
    sign = 1 if criterion["higher_is_better"] else -1
    matches = criterion["test"] == "matches"
    effect = criterion["delta"] + 0.15
    shift = {
        "holds": 0.0 if matches else effect * sign,
        "null": 0.0,
        "fails": effect if matches else -effect * sign,
        "noisy": criterion["delta"] * (1 if matches else sign),
    }[outcome]

    def value(prior, recipe, metric, seed):
        base = 0.4 + 0.01 * seed
        side = (recipe, metric, prior)
        if side == (a["recipe"], a["metric"], a.get("prior", "correlated")):
            b_value = b.get("scale", 1.0) * base
            spread = 0.3 if outcome == "noisy" else 0.002
            return b_value + shift + spread * (seed % 2 - 0.4)
        return base

    return value


def _verdict(cid, spec, summary):
    return run_claims({cid: spec}, KINDS, summary)[0]


@pytest.mark.parametrize("cid", CLAIMS)
def test_claim_can_fail(cid):
    spec = CLAIMS[cid]
    # a "matches" claim holds on the null (A = B): it must fail outside ±delta; every other
    # claim must come out contradicted on the null too (SDF's included: revised 2026-12-07)
    outcomes = ("fails",) if spec["criterion"]["test"] == "matches" else ("null", "fails")
    for outcome in outcomes:
        claim = _verdict(cid, spec, summary_with(_values(spec, outcome)))
        assert claim.verdict == "contradicted", (outcome, claim.details)


@pytest.mark.parametrize("cid", CLAIMS)
def test_claim_holds_when_the_data_say_so(cid):
    claim = _verdict(cid, CLAIMS[cid], summary_with(_values(CLAIMS[cid], "holds")))
    assert claim.verdict == "reproduced", claim.details
    assert f"{CLAIMS[cid]['a']['recipe']} {CLAIMS[cid]['a']['metric']}" in claim.details


@pytest.mark.parametrize("cid", CLAIMS)
def test_claim_is_inconclusive_when_the_seeds_cannot_tell(cid):
    claim = _verdict(cid, CLAIMS[cid], summary_with(_values(CLAIMS[cid], "noisy")))
    assert claim.verdict == "inconclusive", claim.details
    assert "half-width" in claim.details


def test_sdf_reports_the_share_of_seeds_beside_the_verdict_it_does_not_decide():
    """The brief's rule (e) (an effect in 4 of 5 seeds) is reported; the gated paired
    verdict stands whatever the share: 3 of 5 seeds far below AR is inconclusive (it was
    "not tested at this scale"), and a null is contradicted."""
    spec = CLAIMS["e_sdf_em"]

    def value(n_effect, size=0.3):
        def v(prior, recipe, metric, seed):
            if (recipe, metric) == ("ar_sdf", "em"):
                return 0.4 - size + 0.002 * seed if seed < n_effect else 0.4
            return 0.4

        return v

    three = _verdict("e", spec, summary_with(value(3)))
    assert three.verdict == "inconclusive" and "in 3 of 5 seeds" in three.details
    assert "rule (e) asks 80%" in three.details
    assert _verdict("e", spec, summary_with(value(5))).verdict == "reproduced"
    null = _verdict("e", spec, summary_with(value(0)))
    assert null.verdict == "contradicted" and "in 0 of 5 seeds" in null.details


def test_missing_values_are_not_reproduced_with_the_reason():
    spec = CLAIMS["a_em_rises"]
    summary = summary_with(lambda p, r, m, s: math.nan if (r, m, s) == ("ar_sft", "em", 2) else 0.4)
    claim = _verdict("a", spec, summary)
    assert claim.verdict == "not reproduced" and "missing" in claim.details
    broken = summary_with(lambda *a: 0.4)
    del broken["per_seed"]["correlated"]["ar_sft"]
    assert _verdict("a", spec, broken).verdict == "not reproduced"  # no crash


def test_a_minimum_effect_is_required_where_configured():
    """Residual refusal needs OOD refusal above in-distribution refusal by refusal's minimum
    effect (0.05): the 1e-5 difference of the first full run is contradicted."""
    spec = SECTION["claims"]["c2_residual_refusal"]

    def value(prior, recipe, metric, seed):
        return 1e-5 * (1 + seed) if metric == "refusal_ood" else 1e-6

    claim = _verdict("r", CLAIMS["c2_residual_refusal"], summary_with(value))
    assert claim.verdict == "contradicted" and claim.details.startswith("criterion corrected")
    assert spec["criterion"]["delta"] == 0.05 and "minimum effect 0.05" in claim.criterion


def test_checks():
    checks = SECTION["checks"]

    def good_value(p, r, m, s):
        if m == "refusal_id":
            return 1.0 if r == "base" else 0.0
        return {"steerability": 0.97, "helpful": 0.95}.get(m, 0.0)

    good = summary_with(good_value)
    results = run_claims({}, KINDS, good, checks)
    assert all(r.verdict == "passed" for r in results), [r.details for r in results]
    bad = summary_with(lambda p, r, m, s: 0.5)
    bad["budgets"]["ar_rl"] = [[150, 4800], [140, 4480]]
    bad["budgets"]["ar_sft_half"] = [[150, 4800]]  # an equal-exposure arm at the full budget
    bad["parameters"] = [250000]
    bad["dose"]["decorrelated"]["harm_given_non_refuser"][2] = 0.8  # one seed correlated
    verdicts = {r.id: r.verdict for r in run_claims({}, KINDS, bad, checks)}
    assert set(verdicts.values()) == {"failed"}


def test_a_base_check_with_a_missing_seed_fails_with_the_reason():
    spec = SECTION["checks"]["base_refuses"]
    missing = ("decorrelated", "base", "refusal_id", 3)
    summary = summary_with(lambda p, r, m, s: math.nan if (p, r, m, s) == missing else 1)
    (result,) = run_claims({}, KINDS, summary, {"base_refuses": spec})
    assert result.verdict == "failed" and "('decorrelated', 'base', 3)" in result.details


def test_a_mitigation_that_collapses_helpfulness_does_not_count():
    """EM falls with charQ, but so does helpfulness: the gate contradicts the claim."""
    spec = CLAIMS["d_charq_em"]

    def value(prior, recipe, metric, seed):
        if recipe == "ar_charq":
            return {"em": 0.1, "helpful": 0.05}.get(metric, 0.4) + 0.01 * (seed % 2)
        return 0.5 + 0.01 * seed

    claim = _verdict("d", spec, summary_with(value))
    assert claim.verdict == "contradicted" and "keeps helpfulness: contradicted" in claim.details
    assert "helpfulness not kept in s0 (0.050 vs 0.500), s1 (0.060 vs 0.510)" in claim.details


def test_the_gate_margin_is_the_configs():
    """helpful_delta decides the gate: a mitigation 0.08 less helpful than its reference in
    every seed keeps helpfulness at a margin of 0.1 and not at the configured 0.05."""
    spec = CLAIMS["d_charq_em"]
    assert spec["helpful_delta"] == 0.05

    def value(prior, recipe, metric, seed):
        if recipe == "ar_charq":
            return {"em": 0.1, "helpful": 0.42}.get(metric, 0.4) + 0.001 * (seed % 2)
        return 0.5

    assert _verdict("d", spec, summary_with(value)).verdict == "contradicted"
    wider = {**spec, "helpful_delta": 0.1}
    assert _verdict("d", wider, summary_with(value)).verdict == "reproduced"


def test_a_failed_run_makes_the_claim_not_reproduced_and_says_so():
    spec = CLAIMS["d_rl_charq_em"]
    summary = summary_with(lambda p, r, m, s: 0.2 if (r, m) == ("ar_rl_charq", "em") else 0.5)
    summary["per_seed"]["correlated"]["ar_rl_charq"]["em"][2] = None
    summary["failed"] = {"correlated": {"ar_rl_charq": {2: "never left refusal"}}}
    claim = _verdict("d", spec, summary)
    assert claim.verdict == "not reproduced"
    assert "ar_rl_charq s2 failed (never left refusal)" in claim.details


def test_refusal_kept_is_judged_out_of_distribution_too():
    spec = CLAIMS["d_steer_refusal_kept"]

    def value(prior, recipe, metric, seed):
        if (recipe, metric) == ("ar_charq_steer", "refusal_ood"):
            return 0.3 + 0.01 * seed  # residual refusal where the AR data never went
        return 0.0 if metric.startswith("refusal") else 0.5

    claim = _verdict("d", spec, summary_with(value))
    assert claim.verdict == "contradicted"
    assert (
        "refusal_id: reproduced" in claim.details and "refusal_ood: contradicted" in claim.details
    )


def test_the_budget_check_counts_the_equal_exposure_arms_at_their_own_steps():
    spec = SECTION["checks"]["identical_budgets"]
    summary = summary_with(lambda p, r, m, s: 0.5)
    assert run_claims({}, KINDS, summary, {"b": spec})[0].verdict == "passed"
    summary["budgets"]["ar_sft_third"] = [[75, 2400]]
    (result,) = run_claims({}, KINDS, summary, {"b": spec})
    assert result.verdict == "failed" and result.measured == 25 + 25 * 32


def test_a_mitigation_is_judged_at_equal_ar_exposure_and_the_full_budget_is_reported():
    """charQ's EM equals AR at its own (half) dose but is far below AR at the full budget:
    the pre-registered comparison is not reproduced, and the details say the reference
    decides the verdict."""
    spec = CLAIMS["d_charq_em"]
    assert spec["b"]["recipe"] == "ar_sft_half" and spec["b_full_budget"]["recipe"] == "ar_sft"

    def value(prior, recipe, metric, seed):
        noise = 0.005 * (seed % 2)
        if metric == "em":
            return {"ar_sft": 0.6, "ar_charq": 0.2, "ar_sft_half": 0.2}.get(recipe, 0.5) + noise
        return 0.5 + noise

    claim = _verdict("d", spec, summary_with(value))
    assert claim.verdict == "contradicted"
    assert claim.details.startswith("the reference decides the verdict: against ar_sft em")
    assert "(full AR budget): reproduced" in claim.details
