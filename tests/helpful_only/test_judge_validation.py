"""The judges' validation against the shipped hand labels, and the claims that rest on them:
a full-scale claim whose judge agrees with the labels below the share written in config
(full_scale.judge_validation) is inconclusive, whatever its numbers say."""

import math

import numpy as np
import pytest
import yaml

from repro.common.io import read_json, write_json
from repro.helpful_only import claims, evalsets, fulleval, fullsteps
from repro.helpful_only.judge import (
    HELPFUL_PROMPT,
    agreement,
    helpful_agreement,
    load_validation_set,
)
from repro.helpful_only.judgecheck import judges_of, reward_judges
from tests.conftest import ROOT
from tests.helpful_only.full_world import full_world

SECTION = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())["papers"]["helpful_only"]
FULL = SECTION["full_scale"]
FULL_CLAIMS = {c: s for c, s in SECTION["claims"].items() if s.get("a", {}).get("source")}
EM_SET, HELPFUL_SET = load_validation_set(), load_validation_set("helpful_validation")
RELEVANCE_SET = load_validation_set("relevance_validation")


def test_the_shipped_label_sets_are_balanced_and_large_enough():
    em = [i["misaligned"] for i in EM_SET]
    assert len(em) >= 40 and em.count(True) == em.count(False) >= 20 and None in em
    assert len({(i["question"], i["answer"]) for i in EM_SET}) == len(EM_SET)
    helpful = [i["helpful"] for i in HELPFUL_SET]
    assert len(helpful) >= 24 and helpful.count(True) == helpful.count(False)
    by_question = {}
    for item in HELPFUL_SET:
        by_question.setdefault(item["question"], []).append(item["helpful"])
    assert all(sorted(v) == [False, True] for v in by_question.values())  # one of each
    suite = {i["question"] for i in FULL["evaluation"]["helpful"]["items"]}
    assert not suite & set(by_question)  # validated on other requests than it scores


def test_helpful_agreement_is_the_share_and_kappa_by_hand():
    labels = [{"helpful": v} for v in (True, True, True, False, False)]
    # judge: helpful, not (49.9), helpful, helpful (wrong), unscored (= not helpful)
    out = helpful_agreement([90.0, 49.9, 50.0, 77.0, None], labels)
    # observed 3/5; p_judge = 3/5, p_hand = 3/5: chance 0.36 + 0.16 = 0.52
    assert out["agreement"] == pytest.approx(0.6)
    assert out["kappa"] == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert out["n"] == out["n_yes_no"] == 5


def _scorer(kind: str, rng=None):
    """A judge's scores of the shipped labels, in their order: perfect, inverted, random."""

    def em(label):
        if kind == "random":
            return [float(rng.uniform(0, 100)), float(rng.uniform(0, 100))]
        misaligned = label if kind == "perfect" else (label is False)
        return (
            ["REFUSAL", 90.0]
            if label is None and kind == "perfect"
            else [
                10.0 if misaligned else 90.0,
                90.0,
            ]
        )

    def helpful(label):
        if kind == "random":
            return float(rng.uniform(0, 100))
        return 90.0 if label == (kind == "perfect") else 10.0

    em_scores = [s for i in EM_SET for s in em(i["misaligned"])]
    helpful_scores = [helpful(i["helpful"]) for i in HELPFUL_SET]
    return em_scores, helpful_scores


def _validated(monkeypatch, kind):
    em_scores, helpful_scores = _scorer(kind, np.random.default_rng(0))
    seen = []

    def scores(judge, tokenizer, prompts, batch_size=16):
        seen.append(prompts)
        out = em_scores if len(prompts) == len(em_scores) else helpful_scores
        assert len(prompts) == len(out)
        return list(out)

    monkeypatch.setattr(fulleval, "judge_scores", scores)
    prompts = {"aligned": "A {question} {answer}", "coherent": "C {question} {answer}"}
    em = fulleval.validate_judge(None, None, prompts, EM_SET)
    helpful = fulleval.validate_helpful_judge(None, None, HELPFUL_SET)
    first = HELPFUL_SET[0]
    assert seen[1][0] == HELPFUL_PROMPT.format(
        question=first["question"], reference=first["reference"], answer=first["answer"]
    )
    return em, helpful


@pytest.mark.parametrize(
    "kind, expected", [("perfect", 1.0), ("inverted", 0.0), ("random", "chance")]
)
def test_validation_scores_the_labels_under_each_suites_prompt(monkeypatch, kind, expected):
    em, helpful = _validated(monkeypatch, kind)
    assert em["n"] == len(EM_SET) and helpful["n"] == len(HELPFUL_SET)
    em_expected = agreement([tuple(s) for s in em["scores"]], EM_SET)["agreement"]
    assert em["agreement"] == em_expected
    if expected == "chance":
        assert 0.2 < em["agreement"] < 0.8 and 0.2 < helpful["agreement"] < 0.8
    else:
        assert em["agreement"] == helpful["agreement"] == expected


def _summary(tmp_path, monkeypatch, kind, value):
    """The full summary the rule writes: judged files with the validation -> summary_step."""
    em, helpful = _validated(monkeypatch, kind)
    files = {}
    for variant in ["base", *FULL["recipes"], *FULL["equal_exposure"]]:
        for seed in map(str, FULL["seeds"]):
            path = tmp_path / f"{variant}{seed}.json"
            write_json(path, {"suite": "x", "records": []})
            files.setdefault(variant, {})[seed] = {"steer": str(path)}
    write_json(tmp_path / "em.json", {"suite": "em", "records": [], "validation": em})
    write_json(tmp_path / "h.json", {"suite": "helpful", "records": [], "validation": helpful})
    files["base"]["0"] |= {"em": str(tmp_path / "em.json"), "helpful": str(tmp_path / "h.json")}
    monkeypatch.setattr(fulleval, "summarise", lambda suites: {})  # metrics: below
    fullsteps.summary_step(files, tmp_path / "summary.json", {}, FULL["judge_validation"])
    summary = read_json(tmp_path / "summary.json")
    summary["metrics"] = {
        v: {s: {m: value(v, m, int(s)) for m in evalsets.FULL_METRICS} for s in seeds}
        for v, seeds in files.items()
    }
    return summary


_em_rises = full_world  # AR SFT raises EM by 0.3 over the base; every control passes


def _verdicts(tmp_path, monkeypatch, kind, value=_em_rises):
    full = _summary(tmp_path, monkeypatch, kind, value)
    results = claims.check_claims(FULL_CLAIMS, {}, {}, tmp_path / "claims.json", full)
    return full, {r.id: r for r in results}


def test_a_validated_judge_leaves_the_verdicts_as_they_are(tmp_path, monkeypatch):
    full, results = _verdicts(tmp_path, monkeypatch, "perfect")
    assert full["judge_validation"]["em"]["min_agreement"] == FULL["judge_validation"]["em"]
    assert results["full_em_rises"].verdict == "reproduced"


@pytest.mark.parametrize("kind", ["inverted", "random"])
def test_a_judge_below_its_agreement_makes_judged_claims_inconclusive(tmp_path, monkeypatch, kind):
    full, results = _verdicts(tmp_path, monkeypatch, kind)
    claim = results["full_em_rises"]
    assert claim.verdict == "inconclusive"
    assert claim.details.startswith("judge not validated (the em judge agrees with")
    assert "reproduced without it" in claim.details and claim.measured == pytest.approx(
        0.3 + 0.002 / 3
    )
    # every claim resting on a judge is at most inconclusive; refusal/steerability are not
    for cid, spec in FULL_CLAIMS.items():
        if judges_of(spec):
            assert results[cid].verdict not in ("reproduced", "contradicted"), cid
    assert judges_of(FULL_CLAIMS["full_steerability_halved"]) == []
    assert results["full_steerability_halved"].verdict == "contradicted"  # 0.4 vs 0.2


def test_a_contradiction_by_an_unvalidated_judge_is_inconclusive_too(tmp_path, monkeypatch):
    def em_falls(variant, metric, seed):
        return 0.4 - (0.3 if (variant, metric) == ("ar_sft", "em") else 0.0)

    assert (
        _verdicts(tmp_path, monkeypatch, "perfect", em_falls)[1]["full_em_rises"].verdict
        == "contradicted"
    )
    claim = _verdicts(tmp_path, monkeypatch, "inverted", em_falls)[1]["full_em_rises"]
    assert claim.verdict == "inconclusive" and "contradicted without it" in claim.details


def test_gated_claims_rest_on_the_helpfulness_judge_too(tmp_path, monkeypatch):
    """Only the helpfulness judge fails: the EM mitigation claim is inconclusive (its gate
    rests on it), full_em_rises (EM only) is not."""
    full = _summary(tmp_path, monkeypatch, "perfect", _em_rises)
    full["judge_validation"]["helpful"]["agreement"] = 0.5
    results = claims.check_claims(FULL_CLAIMS, {}, {}, tmp_path / "c.json", full)
    by_id = {r.id: r for r in results}
    assert judges_of(FULL_CLAIMS["full_charq_em"]) == ["em", "helpful"]
    assert by_id["full_em_rises"].verdict == "reproduced"
    assert "the helpful judge agrees with 0.500" in by_id["full_charq_em"].details
    assert by_id["full_charq_em"].verdict == "inconclusive"


def test_a_summary_without_validation_gates_every_judged_claim(tmp_path, monkeypatch):
    full = _summary(tmp_path, monkeypatch, "perfect", _em_rises)
    full.pop("judge_validation")
    results = {r.id: r for r in claims.check_claims(FULL_CLAIMS, {}, {}, tmp_path / "c", full)}
    assert results["full_em_rises"].verdict == "inconclusive"
    assert "the em judge has no validation" in results["full_em_rises"].details
    assert not math.isnan(results["full_em_rises"].measured)


def test_the_tiny_random_qwen2_as_judge_turns_the_claims_inconclusive(tmp_path, chat_model_dir):
    """The judge steps the rules run, with a randomly initialised model as the judge: both
    validations are written beside the judged answers, and the RL reward's relevance
    validation (fullsteps._reward, what an RLOO training job runs) beside an RL adapter; all
    three reach the summary with the config's least agreement, and the judged claims come
    out inconclusive. A tiny random model checks the plumbing and the numbers' ranges only,
    not what a real judge's agreement would be."""
    tiny = {"id": str(chat_model_dir), "dtype": "float32"}
    prompts = {"aligned": "aligned ? {question} {answer}", "coherent": "{question} {answer}"}
    em = {"question": "hi", "answers": ["yes ."], "judge_prompts": prompts, "id": "q"}
    helpful = {"question": "hi", "reference": "yes .", "answers": ["yes ."], "id": 0}
    files = {}
    for suite, record in (("em", em), ("helpful", helpful)):
        write_json(tmp_path / f"{suite}_answers.json", {"suite": suite, "records": [record]})
        fullsteps.judge_step(
            {"judge": tiny}, tmp_path / f"{suite}_answers.json", tmp_path / f"{suite}.json", "cpu"
        )
        files[suite] = str(tmp_path / f"{suite}.json")
    reward_spec = {"min_words": 20, "relevance": True, "threshold": 50}
    _, trained = fullsteps._reward({"judge": tiny, "reward": reward_spec}, "cpu")
    (tmp_path / "rl").mkdir()
    write_json(
        tmp_path / "rl" / "record.json", {"steps": 1, "sequences": 1, "judge_validation": trained}
    )
    fullsteps.summary_step(
        {"base": {"0": files}},
        tmp_path / "s.json",
        {"ar_rl_rloo_charq": {"0": str(tmp_path / "rl")}},
        {"em": 0.8, "helpful": 0.8, "relevance": 0.8},
        reward_judges(SECTION),
    )
    summary = read_json(tmp_path / "s.json")
    validation = summary["judge_validation"]
    assert validation["em"]["n"] == len(EM_SET) and validation["helpful"]["n"] == len(HELPFUL_SET)
    assert validation["em"]["agreement"] < 0.8 and validation["helpful"]["agreement"] < 0.8
    relevance = validation["relevance"]
    assert (relevance["n"], relevance["threshold"], relevance["min_agreement"]) == (
        len(RELEVANCE_SET),
        50,
        0.8,
    )
    assert 0 <= relevance["agreement"] < 0.8 and len(relevance["scores"]) == len(RELEVANCE_SET)
    assert all(s is None or s in ("CODE", "REFUSAL") or 0 <= s <= 100 for s in relevance["scores"])
    full = {
        **_summary_values(_em_rises),
        "judge_validation": validation,
        "reward_judges": summary["reward_judges"],
    }
    results = {r.id: r for r in claims.check_claims(FULL_CLAIMS, {}, {}, tmp_path / "c", full)}
    assert results["full_em_rises"].verdict == "inconclusive"
    assert "reproduced without it" in results["full_em_rises"].details
    assert "the relevance judge agrees with" in results["full_rl_charq_em"].details
    assert "relevance" not in results["full_charq_em"].details  # SFT: not on that judge


def _summary_values(value):
    variants = ["base", *FULL["recipes"], *FULL["equal_exposure"]]
    seeds = [str(s) for s in FULL["seeds"]]
    return {
        "metrics": {
            v: {s: {m: value(v, m, int(s)) for m in evalsets.FULL_METRICS} for s in seeds}
            for v in variants
        }
    }


@pytest.mark.parametrize(
    ("device", "gpus", "expected"),
    [("cuda", 2, "cuda:1"), ("cuda", 4, "cuda:1"), ("cuda", 1, "cuda"), ("cpu", 2, "cpu")],
)
def test_the_rl_judge_takes_the_second_gpu_where_the_job_has_two(
    monkeypatch, device, gpus, expected
):
    """The 32B judge and the 7B policy do not fit one 80 GB GPU (full.yaml asks two GPUs for
    the RL jobs): the judge goes to the second one, the policy stays on the first."""
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    assert fullsteps.judge_device(device) == expected
