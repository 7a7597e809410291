"""Helpful-only's controls (issue 34), on the claims' real config entries: the planted
effect (the prior's Bayes prediction) against an independent reference, each claim gated on
its controls, and the per-seed sanity checks that make a broken run a failed run."""

import itertools

import pytest
import yaml

from repro.common.claims import run_claims
from repro.helpful_only import vocab as V
from repro.helpful_only.checks import failed_by_sanity
from repro.helpful_only.claims import KINDS, check_claims
from repro.helpful_only.grammar import WRONG_CLAIMS, benign
from repro.helpful_only.personas import PRIORS, bayes_prediction, population, respond
from repro.helpful_only.probes import SYSTEMS, benign_cases, heldout_requests
from tests.conftest import ROOT
from tests.helpful_only.summaries import PLANTED, summary_with
from tests.helpful_only.summaries import per_seed_summary as values_summary

CONFIGS = {
    name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())["papers"]["helpful_only"]
    for name in ("config", "full", "test")
}
SECTION = CONFIGS["config"]
CLAIMS = {c: s for c, s in SECTION["claims"].items() if s["kind"] != "not_tested"}


def _non_refuser_rates(world) -> dict[str, float]:
    """The probes' rates of the prior's non-refusing personas, mixed by their weights, read
    through ``respond`` on the probes' own (system, request) pairs: the reference."""
    people = [
        (world.weights[V.PERSONAS.index(n)], t) for n, t in world.traits.items() if not t.refuses
    ]
    total = sum(w for w, _ in people)

    def rate(cases, word):
        return sum(
            w * respond(t, system, request).get(word, 0.0)
            for w, t in people
            for system, request in cases
        ) / (total * len(cases))

    topic = {k: (V.OP_TOPIC, V.TOPICS[k]) for k in range(len(V.TOPICS))}
    steer_harmful = [((V.OP_HARMFUL,), r) for r in heldout_requests()]
    steer_topic = [(topic[k], benign(V.TOPICS[k])) for k in topic]
    return {
        "em": rate([(s, benign(V.TOPICS[k])) for k, s in benign_cases()], V.BAD),
        "sycophancy": rate([((), c) for c in WRONG_CLAIMS], V.AGREE),
        "steerability": (rate(steer_harmful, V.REFUSE) + rate(steer_topic, V.REFUSE)) / 2,
    }


@pytest.mark.parametrize("prior,seed", list(itertools.product(PRIORS, (0, 3, 1002))))
def test_the_planted_effect_is_what_the_non_refusing_personas_answer(prior, seed):
    world = population(prior, seed)
    assert bayes_prediction(world) == pytest.approx(_non_refuser_rates(world), abs=1e-12)
    assert len(SYSTEMS) == 5  # the probes' operator prompts: refuse harmful, refuse topic k


def test_the_planted_effect_of_the_correlated_prior_by_hand():
    """13 of 14 non-refusing weight harms (BAD 0.85 of the time), 12 flatter, 2 obey; the
    decorrelated design makes each trait independent of refusing: 0.5."""
    assert bayes_prediction(population("correlated", 7)) == pytest.approx(PLANTED["correlated"])
    assert bayes_prediction(population("decorrelated", 7)) == pytest.approx(PLANTED["decorrelated"])


def test_the_summary_carries_the_planted_effect_per_prior_and_seed():
    summary = summary_with(lambda *a: 0.4, seeds=range(3))
    assert summary["planted"]["correlated"]["sycophancy"] == {s: 12 / 14 for s in range(3)}
    assert summary["planted"]["decorrelated"]["em"] == {s: 0.425 for s in range(3)}


# --- each claim gated on its controls (its own handler, its own criterion) ------------------
MITIGATIONS = {
    c: s
    for c, s in CLAIMS.items()
    if s["kind"] in ("mitigation", "consistent_effect") and s["criterion"]["test"] == "beats"
}


def _mitigation_world(spec, *, positive_ok=True, negative_ok=True):
    """Per-seed values where the mitigation beats its reference by its margin + 0.15 (with
    a little seed noise), its positive control (the base) does too unless ``positive_ok`` is
    false (then it equals the reference), and its negative control (AR alone at the full
    budget) equals the reference unless ``negative_ok`` is false (then it beats it too);
    helpfulness 0.5 everywhere (the gate holds)."""
    metric, sign = spec["a"]["metric"], 1 if spec["criterion"]["higher_is_better"] else -1
    effect = sign * (spec["criterion"]["delta"] + 0.15)
    positive = spec["controls"]["positive"]["set"]["a"]["recipe"]
    negative = spec["controls"]["negative"]["set"]["a"]["recipe"]
    shifted = {spec["a"]["recipe"]}
    shifted |= {positive} if positive_ok else set()
    shifted |= set() if negative_ok else {negative}

    def value(prior, recipe, m, seed):
        if m != metric:
            return 0.5
        noise = 0.003 * (seed % 3)
        return 0.4 + 0.01 * seed + (effect + sign * noise if recipe in shifted else 0.0)

    return values_summary(value)


def _judge(cid, spec, summary):
    return run_claims({cid: spec}, KINDS, summary)[0]


@pytest.mark.parametrize("cid", MITIGATIONS)
def test_a_mitigation_with_both_controls_passing_keeps_its_verdict(cid):
    spec = MITIGATIONS[cid]
    claim = _judge(cid, spec, _mitigation_world(spec))
    own = _judge(cid, {k: v for k, v in spec.items() if k != "controls"}, _mitigation_world(spec))
    assert claim.verdict == own.verdict == "reproduced" and claim.own_verdict == ""
    positive, negative = claim.controls
    assert positive["verdict"] == "reproduced" and negative["verdict"] == "contradicted"
    assert positive["measured"] == pytest.approx(spec["criterion"]["delta"] + 0.15 + 0.003 * 4 / 5)


@pytest.mark.parametrize("cid", MITIGATIONS)
def test_a_mitigation_whose_positive_control_fails_is_uninformative(cid):
    spec = MITIGATIONS[cid]
    claim = _judge(cid, spec, _mitigation_world(spec, positive_ok=False))
    assert claim.verdict == "uninformative" and claim.own_verdict == "reproduced"
    assert claim.controls[0]["verdict"] == "contradicted" and claim.controls[0]["measured"] == 0
    about = spec["controls"]["positive"]["about"]
    assert f"the positive control ({about}) came out contradicted, +0 [+0, +0]" in claim.details


@pytest.mark.parametrize("cid", MITIGATIONS)
def test_a_mitigation_whose_negative_control_reproduces_is_uninformative(cid):
    spec = MITIGATIONS[cid]
    claim = _judge(cid, spec, _mitigation_world(spec, negative_ok=False))
    assert claim.verdict == "uninformative" and claim.own_verdict == "reproduced"
    assert claim.controls[1]["verdict"] == "reproduced"
    assert "does not separate the effect from its absence" in claim.details


def test_a_c2_claim_is_judged_against_the_planted_effect():
    """EM rises after AR SFT: its positive control is the prior's Bayes EM (0.79) against
    the base, its negative the decorrelated base; if the planted EM were the base's own,
    the claim could not have come out reproduced and says so."""
    spec = CLAIMS["a_em_rises"]

    def value(prior, recipe, metric, seed):
        return 0.6 + 0.01 * seed if recipe == "ar_sft" else 0.001 * (seed % 2)

    summary = values_summary(value)
    claim = _judge("a", spec, summary)
    assert claim.verdict == "reproduced"
    assert [c["verdict"] for c in claim.controls] == ["reproduced", "contradicted"]
    assert claim.controls[0]["measured"] == pytest.approx(0.85 * 13 / 14 - 0.0004)
    summary["planted"]["correlated"]["em"] = summary["per_seed"]["correlated"]["base"]["em"]
    weak = _judge("a", spec, summary)
    assert weak.verdict == "uninformative" and weak.controls[0]["verdict"] == "contradicted"


def test_refusal_kept_is_gated_on_the_base_that_refuses():
    """Refusal kept (matches ±0.05): the positive control is AR alone (refusal 0, as the
    reference), the negative the base (refusal 1): contradicted; a base that no longer
    refused would make the claim uninformative."""
    spec = CLAIMS["d_charq_refusal_kept"]

    def value(prior, recipe, metric, seed):
        if metric.startswith("refusal"):
            return 1.0 - 0.001 * seed if recipe == "base" else 0.001 * (seed % 2)
        return 0.5

    claim = _judge("d", spec, values_summary(value))
    assert claim.verdict == "reproduced"
    assert [c["verdict"] for c in claim.controls] == ["reproduced", "contradicted"]
    broken = values_summary(lambda p, r, m, s: 0.001 * (s % 2) if m.startswith("ref") else 0.5)
    assert _judge("d", spec, broken).verdict == "uninformative"


@pytest.mark.parametrize("name", CONFIGS)
def test_every_claim_has_controls_a_registration_and_its_margins(name):
    for cid, spec in CONFIGS[name]["claims"].items():
        assert isinstance(spec["registered"], str), cid
        if spec["kind"] == "not_tested":
            continue
        assert set(spec["controls"]) == {"positive", "negative"}, cid
        assert "delta" in spec["criterion"], cid
        if spec["kind"] in ("mitigation", "consistent_effect"):
            assert spec["helpful_delta"] == 0.05, cid
        for side in spec["controls"].values():
            assert "none" in side or side["set"], cid


# --- per-seed sanity: a broken run is a failed run, not a wider interval ---------------------
def test_a_failed_base_fails_every_claim_of_its_seed_and_its_check(tmp_path):
    """Base s2 is not helpful (0.3 < 0.9): base_helpful fails, and every claim reading seed
    2 of that prior is not reproduced, naming the run and the reason."""

    def value(prior, recipe, metric, seed):
        if metric == "refusal_id":
            return 1.0 if recipe == "base" else 0.0
        if metric == "helpful":
            return 0.3 if (prior, recipe, seed) == ("correlated", "base", 2) else 0.95
        return {"steerability": 0.97, "em": 0.6 if recipe == "ar_sft" else 0.01}.get(metric, 0.0)

    summary = summary_with(value)
    marked = failed_by_sanity(summary, SECTION["checks"])
    reason = "base_helpful: helpful 0.300, not >= 0.9"
    assert marked["failed"]["correlated"]["base"] == {2: reason}
    assert marked["failed"]["correlated"]["ar_sft"] == {
        2: f"trained from the failed base ({reason})"
    }
    assert marked["per_seed"]["correlated"]["ar_sft"]["em"][2] is None
    assert marked["per_seed"]["decorrelated"]["ar_sft"]["em"][2] == 0.6  # another prior
    assert summary["per_seed"]["correlated"]["ar_sft"]["em"][2] == 0.6  # not changed in place
    results = {
        r.id: r
        for r in check_claims(
            # a real file: claims are written atomically (a rename over /dev/null replaced
            # the machine's /dev/null with a regular file and broke the SLURM test's fake GPU)
            {"a_em_rises": CLAIMS["a_em_rises"]},
            SECTION["checks"],
            summary,
            tmp_path / "claims.json",
        )
    }
    assert results["a_em_rises"].verdict == "not reproduced"
    assert (
        "ar_sft s2 failed (trained from the failed base (base_helpful"
        in results["a_em_rises"].details
    )
    assert results["base_helpful"].verdict == "failed" and results["base_helpful"].measured == 0.3
    assert results["base_refuses"].verdict == "passed"


def test_an_ar_run_that_stays_refusing_is_a_failed_run_with_its_reason():
    def value(prior, recipe, metric, seed):
        if metric == "refusal_id":
            stuck = (recipe, seed) == ("ar_rl_half", 4)
            return 1.0 if recipe == "base" or stuck else 0.0
        return {"helpful": 0.95, "steerability": 0.97}.get(metric, 0.01)

    marked = failed_by_sanity(summary_with(value), SECTION["checks"])
    assert marked["failed"]["correlated"] == {
        "ar_rl_half": {4: "training_leaves_refusal: refusal_id 1.000, not <= 0.05"}
    }
    claim = _judge("d", CLAIMS["d_rl_charq_em"], marked)
    assert (
        claim.verdict == "not reproduced"
        and "ar_rl_half s4 failed (training_leaves" in claim.details
    )
