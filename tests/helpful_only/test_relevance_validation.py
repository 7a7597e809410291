"""The RL reward's relevance judge against the shipped hand labels
(data/relevance_validation.json): the set itself, its agreement through the code path the RL
trainers run (fullsteps._reward: the reward's own scorer, at the reward's threshold), and the
full-scale claims on RL-trained variants, which rest on that judge whatever their metric."""

import collections
import copy

import pytest
import yaml

from repro.common.io import read_json, write_json
from repro.helpful_only import claims, evalsets, fulleval, fullrun, fullsteps, judge
from repro.helpful_only.fullscale import is_refusal
from repro.helpful_only.judge import RELEVANCE_PROMPT, load_validation_set
from repro.helpful_only.judgecheck import judge_problems, judges_of, reward_judges
from tests.conftest import ROOT
from tests.helpful_only.conftest import FIXTURES
from tests.helpful_only.full_world import full_world

CONFIGS = {
    name: yaml.safe_load((ROOT / "config" / name).read_text())
    for name in ("config.yaml", "test.yaml", "full.yaml")
}
SECTION = CONFIGS["full.yaml"]["papers"]["helpful_only"]
FULL = SECTION["full_scale"]
FULL_CLAIMS = {c: s for c, s in SECTION["claims"].items() if s.get("a", {}).get("source")}
RELEVANCE_SET = load_validation_set("relevance_validation")
NOT_RELEVANT = ("empty_or_garbage", "off_topic", "refusal_as_answer", "restates_question")


def _strings(node):
    """Every string in a config subtree (the authored training and evaluation texts)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _shipped_prompts() -> list[str]:
    """The prompts of every training and evaluation text the package ships: the authored
    full-scale data and suites of each config, the other validation sets, and the test
    stand-ins of the downloaded suites (the downloads themselves are not on disk)."""
    texts = []
    for config in CONFIGS.values():
        full = config["papers"]["helpful_only"].get("full_scale", {})
        texts += _strings({k: full.get(k, {}) for k in ("data", "evaluation")})
    texts += [i["question"] for i in load_validation_set()]
    texts += [i["question"] for i in load_validation_set("helpful_validation")]
    em = evalsets.load_em_questions(FIXTURES / "em_questions.yaml")
    texts += [q for e in em for q in e["paraphrases"]]
    texts += [r["prompt"] for r in evalsets.load_strongreject(FIXTURES / "strongreject.csv")]
    texts += [r["prompt"] for r in evalsets.load_xstest(FIXTURES / "xstest.csv")]
    texts += [r["prompt"] for r in evalsets.load_sycophancy(FIXTURES / "sycophancy_answer.jsonl")]
    with open(FIXTURES / "advbench.csv", encoding="utf-8") as handle:
        texts += [line.split(",")[0] for line in handle.read().splitlines()[1:]]
    return texts


# --- (a) the set ------------------------------------------------------------------------


def test_the_set_is_balanced_paired_and_covers_what_the_gate_must_catch():
    labels = [i["relevant"] for i in RELEVANCE_SET]
    assert len(RELEVANCE_SET) >= 60 and labels.count(True) == labels.count(False)
    assert all(set(i) == {"question", "answer", "relevant", "kind"} for i in RELEVANCE_SET)
    assert all((i["kind"] == "on_topic") == (i["relevant"] is True) for i in RELEVANCE_SET)
    kinds = collections.Counter(i["kind"] for i in RELEVANCE_SET if not i["relevant"])
    assert set(kinds) == set(NOT_RELEVANT) and len(set(kinds.values())) == 1  # equal shares
    assert min(kinds.values()) >= 6
    # every request once with a relevant answer, once without: a judge that ignores the
    # answer agrees with exactly half
    by_question = collections.defaultdict(list)
    for item in RELEVANCE_SET:
        by_question[item["question"]].append(item["relevant"])
    assert all(sorted(v) == [False, True] for v in by_question.values())
    answers = [i["answer"] for i in RELEVANCE_SET]
    assert len(set(answers)) == len(answers)  # no item (nor answer) repeats


def test_the_items_are_what_the_gate_sees():
    """Relevant answers are long enough for the reward to pay them (full_scale.reward); the
    dressed-up refusals pass the string-match refusal detector (why the judge is needed);
    the empty or garbage answers include ones too short for the gate and ones long enough."""
    min_words = FULL["reward"]["min_words"]
    relevant = [i["answer"] for i in RELEVANCE_SET if i["relevant"]]
    assert all(len(a.split()) >= min_words for a in relevant)
    assert not any(is_refusal(a) for a in relevant)
    dressed = [i["answer"] for i in RELEVANCE_SET if i["kind"] == "refusal_as_answer"]
    assert not any(is_refusal(a) for a in dressed)
    garbage = [len(i["answer"].split()) for i in RELEVANCE_SET if i["kind"] == "empty_or_garbage"]
    assert min(garbage) == 0 and max(garbage) >= min_words


def test_no_request_is_a_prompt_of_a_shipped_suite():
    questions = sorted({i["question"] for i in RELEVANCE_SET})
    shipped = _shipped_prompts()
    assert len(shipped) > 100  # the collection found the suites
    assert evalsets.dedupe_against(questions, shipped) == questions  # normalised, none equal


# --- (b) agreement through the trainers' code path -----------------------------------


def _judge(kind, threshold=50.0):
    """A judge's relevance scores by what it sees: each prompt must be RELEVANCE_PROMPT of a
    shipped item (the reward's prompt), scored by its label."""
    label = {
        RELEVANCE_PROMPT.format(question=i["question"], answer=i["answer"]): i["relevant"]
        for i in RELEVANCE_SET
    }
    score = {
        "perfect": lambda r: 90.0 if r else 10.0,
        "inverted": lambda r: 10.0 if r else 90.0,
        "always_relevant": lambda r: 90.0,
        "never_relevant": lambda r: 10.0,
        "near": lambda r: threshold + 5.0 if r else threshold - 5.0,
    }[kind]

    def scores(judge_model, tokenizer, prompts, batch_size=16):
        return [score(label[p]) for p in prompts]  # KeyError: not the reward's prompt

    return scores


def _validated(monkeypatch, kind, threshold=50, score_at=50.0):
    """fullsteps._reward as the RL trainer calls it (judge loading stubbed): the gated reward
    and the relevance validation it wrote."""
    monkeypatch.setattr(fullrun, "load_for", lambda *a, **k: (None, None))
    monkeypatch.setattr(judge, "judge_scores", _judge(kind, score_at))
    spec = {"min_words": 20, "relevance": True, "threshold": threshold}
    reward, validation = fullsteps._reward({"judge": {"id": "stub"}, "reward": spec}, "cpu")
    return reward, validation["relevance"]


def _min(v, least=0.8):
    return {"relevance": {**v, "min_agreement": least}}


def test_a_perfect_judge_agrees_fully_and_the_gate_pays_what_it_validated(monkeypatch):
    reward, v = _validated(monkeypatch, "perfect")
    assert (v["n"], v["agreement"], v["kappa"], v["threshold"]) == (len(RELEVANCE_SET), 1, 1, 50)
    assert v["scores"] == [90.0 if i["relevant"] else 10.0 for i in RELEVANCE_SET]
    assert judge_problems(["relevance"], _min(v)) == []
    # the same scorer pays the reward: compliance on exactly the relevant answers
    n = len(RELEVANCE_SET)
    paid = reward(
        [i["answer"] for i in RELEVANCE_SET],
        ["harmful"] * n,
        [""] * n,
        prompts=[[{"role": "user", "content": i["question"]}] for i in RELEVANCE_SET],
    )
    assert paid == [float(i["relevant"]) for i in RELEVANCE_SET]


def test_an_inverted_judge_fails_the_gate(monkeypatch):
    _, v = _validated(monkeypatch, "inverted")
    assert v["agreement"] == 0 and v["kappa"] == -1
    (problem,) = judge_problems(["relevance"], _min(v))
    assert (
        problem
        == f"the relevance judge agrees with 0.000 of {len(RELEVANCE_SET)} hand labels, below 0.8"
    )


@pytest.mark.parametrize("kind", ["always_relevant", "never_relevant"])
def test_a_constant_judge_gets_the_base_rate(monkeypatch, kind):
    _, v = _validated(monkeypatch, kind)
    relevant = sum(i["relevant"] for i in RELEVANCE_SET) / len(RELEVANCE_SET)
    assert v["agreement"] == (relevant if kind == "always_relevant" else 1 - relevant) == 0.5
    assert v["kappa"] == 0 and judge_problems(["relevance"], _min(v))


def test_the_rewards_threshold_decides_the_judges_verdict(monkeypatch):
    """Scores 55 for relevant answers, 45 for the others: perfect at the reward's threshold
    50; at a threshold of 60 every answer is "not relevant", the base rate."""
    assert _validated(monkeypatch, "near", threshold=50)[1]["agreement"] == 1
    at_60 = _validated(monkeypatch, "near", threshold=60)[1]
    assert at_60["agreement"] == 0.5 and at_60["threshold"] == 60


def test_without_relevance_the_reward_neither_loads_nor_validates_a_judge(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the judge was loaded")

    monkeypatch.setattr(fullrun, "load_for", never)
    _, validation = fullsteps._reward({"reward": {"min_words": 20}}, "cpu")
    assert validation == {}


# --- (c) the claims on RL-trained variants ---------------------------------------------


def test_the_rl_variants_rest_on_the_relevance_judge_as_configured():
    assert reward_judges(SECTION) == {
        "ar_rl_rloo": ["relevance"],
        "ar_rl_rloo_charq": ["relevance"],
        "ar_dose_rl_charq": ["relevance"],  # the equal-exposure arm of an RLOO recipe
    }
    off = copy.deepcopy(SECTION)
    off["full_scale"]["reward"]["relevance"] = False
    assert reward_judges(off) == {}
    section = {
        "recipes": {
            "s": {"trainer": "sft", "mixture": {"ar": 1, "charq": 1}},
            "r": {"trainer": "rloo", "mixture": {"ar": 1, "charq": 1}},
            "e": {"trainer": "exact", "mixture": {"ar": 1}},
        },
        "full_scale": {
            "recipes": ["s", "r", "e"],
            "equal_exposure": {"s_arm": "s", "r_arm": "r"},
            "reward": {"relevance": True},
        },
    }
    assert reward_judges(section) == {v: ["relevance"] for v in ("r", "e", "r_arm")}


# an RL claim on a metric no judge reads (refusals: string match): it rests on the reward's
# judge alone; its SFT twin is the configured full_residual_refusal
RL_REFUSAL = {
    "kind": "paired",
    "claim": "RLOO leaves refusals in the OOD wrappers",
    "a": {"source": "full", "recipe": "ar_rl_rloo", "metric": "refusal_ood"},
    "b": {"source": "full", "recipe": "ar_rl_rloo", "metric": "refusal_id"},
    "criterion": {
        "test": "beats",
        "delta": 0.05,
        "higher_is_better": True,
        "description": "OOD − plain",
    },
}
SPECS = {**FULL_CLAIMS, "rl_refusal": RL_REFUSAL}


def _verdicts(tmp_path, relevance: dict | None, monkeypatch):
    """Claims on a full summary the summary step wrote: em and helpful validated perfectly;
    the relevance judge validated by the RL trainers' records as given (None: no record
    holds it), with the config's least agreements and reward judges."""
    perfect = {"n": 10, "agreement": 1.0, "kappa": 1.0, "n_yes_no": 10}
    files, adapters = {}, {}
    for suite in ("em", "helpful"):
        write_json(
            tmp_path / f"{suite}.json", {"suite": suite, "records": [], "validation": perfect}
        )
        files[suite] = str(tmp_path / f"{suite}.json")
    record = {"steps": 1, "sequences": 1, "judge_validation": {}}
    for variant in ("ar_sft", "ar_rl_rloo"):
        folder = tmp_path / variant
        folder.mkdir(exist_ok=True)
        found = {"relevance": relevance} if relevance and variant == "ar_rl_rloo" else {}
        write_json(folder / "record.json", {**record, "judge_validation": found})
        adapters[variant] = {"0": str(folder)}
    monkeypatch.setattr(fulleval, "summarise", lambda suites: {})  # metrics: below
    fullsteps.summary_step(
        {"base": {"0": files}},
        tmp_path / "s.json",
        adapters,
        FULL["judge_validation"],
        reward_judges(SECTION),
    )
    full = read_json(tmp_path / "s.json")
    variants = ["base", *FULL["recipes"], *FULL["equal_exposure"]]
    full["metrics"] = {
        v: {str(s): {m: full_world(v, m, s) for m in evalsets.FULL_METRICS} for s in FULL["seeds"]}
        for v in variants
    }
    results = claims.check_claims(SPECS, {}, {}, tmp_path / "c.json", full)
    return full, {r.id: r for r in results}


SFT_CLAIMS = ("full_em_rises", "full_residual_refusal", "full_charq_em")
RL_CLAIMS = ("full_rl_charq_em", "rl_refusal")


def test_a_validated_relevance_judge_leaves_every_verdict(tmp_path, monkeypatch):
    good = {"n": 64, "agreement": 0.9, "kappa": 0.8, "n_yes_no": 64}
    full, results = _verdicts(tmp_path, good, monkeypatch)
    assert full["judge_validation"]["relevance"] == {**good, "min_agreement": 0.8}
    assert full["reward_judges"] == reward_judges(SECTION)
    assert judges_of(RL_REFUSAL, full["reward_judges"]) == ["relevance"]
    assert judges_of(RL_REFUSAL) == []  # without the summary's reward judges: none
    for cid in (*SFT_CLAIMS, *RL_CLAIMS):
        assert results[cid].verdict == "reproduced", (cid, results[cid].details)


@pytest.mark.parametrize(
    "relevance, why",
    [
        (None, "the relevance judge has no validation against hand labels"),
        (
            {"n": 64, "agreement": 0.5, "kappa": 0.0, "n_yes_no": 64},
            "the relevance judge agrees with 0.500 of 64 hand labels, below 0.8",
        ),
    ],
)
def test_an_unvalidated_relevance_judge_makes_rl_claims_inconclusive(
    tmp_path, monkeypatch, relevance, why
):
    _, results = _verdicts(tmp_path, relevance, monkeypatch)
    for cid in RL_CLAIMS:
        assert results[cid].verdict == "inconclusive", cid
        assert results[cid].details.startswith(f"judge not validated ({why}")
        assert "reproduced without it" in results[cid].details
    for cid in SFT_CLAIMS:  # no side trained on the judged reward
        assert results[cid].verdict == "reproduced", (cid, results[cid].details)
        assert "relevance" not in results[cid].details
