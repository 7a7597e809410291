"""MemoryAgentBench: a tiny parquet in the dataset card's column layout (written here) ->
episodes, clipping, official-metric scoring by hand; the answer path on a tiny random Qwen3."""

from __future__ import annotations

import pandas as pd
import pytest

from repro.delta_mem import fullmab, fullscale
from repro.delta_mem import memoryagentbench as mab
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.wrapper import DeltaMem

ROWS = [
    {
        "context": "Ana lives in Paris. Ana lives in Oslo.",
        "questions": ["Where does Ana live?", "Who lives in Oslo?"],
        "answers": [["Oslo"], ["Ana", "Ana B."]],
        "metadata": {"source": "factconsolidation_sh_6k", "qa_pair_ids": ["a", "b"]},
    },
    {
        "context": "label 7: book a flight. label 3: cancel it.",
        "questions": ["book a flight"],
        "answers": [["7"]],
        "metadata": {"source": "icl_banking77_5900shot_balance", "qa_pair_ids": ["c"]},
    },
    {
        "context": "Ana said hi.",
        "questions": ["What did Ana say?"],
        "answers": [["hi"]],
        "metadata": {"source": "longmemeval_s*", "qa_pair_ids": ["d"]},
    },
]


@pytest.fixture
def parquet(tmp_path):
    path = tmp_path / "Conflict_Resolution-00000-of-00001.parquet"
    pd.DataFrame(ROWS).to_parquet(path)  # pyarrow: metadata becomes a struct column
    return str(path)


def test_loader_clips_to_the_last_characters(parquet):
    episodes = mab.load(parquet, "Conflict_Resolution")
    assert [e.source for e in episodes] == [r["metadata"]["source"] for r in ROWS]
    assert episodes[0].context == ROWS[0]["context"]  # shorter than 120k: unchanged
    assert episodes[0].questions[1].answers == ("Ana", "Ana B.")
    clipped = mab.load(parquet, "Conflict_Resolution", chars=10)
    assert clipped[0].context == "s in Oslo."  # the last 10 characters
    assert mab.clip("x" * 120_001 + "END") == "x" * 119_997 + "END"
    assert [e.row for e in mab.shard(episodes, 1, 2)] == [1]


def test_official_metrics_by_hand(parquet):
    assert mab.metric("ruler_qa1_197K") == "substring_exact_match"
    assert mab.metric("eventqa_full") == "substring_exact_match"
    assert mab.metric("detective_qa") == "exact_match"
    assert mab.metric("infbench_sum_eng_shots2") is None  # LLM judge, not scored here
    with pytest.raises(ValueError, match="no official metric"):
        mab.metric("mystery_set")
    # official normalisation drops a/an/the but keeps "and" (LoCoMo's drops it too)
    assert mab.exact_match("Salt and pepper.", ["salt and pepper"]) == 1.0
    assert mab.exact_match("The Oslo", ["Oslo"]) == 1.0
    cr, icl, lme = (e.questions[0] for e in mab.load(parquet, "Conflict_Resolution"))
    assert mab.score(cr, "I think she lives in Oslo now.") == 1.0  # substring EM
    assert mab.score(cr, "Paris") == 0.0
    # ICL: exact match on the parsed output (first line / after "Answer:")
    assert mab.score(icl, "Answer: 7\nbecause ...") == 1.0
    assert mab.score(icl, "label 7") == 0.0  # strict EM, as the official README warns
    assert mab.score(lme, "hi") is None
    # default path: the best of the raw output and its parsed first line
    assert mab.parse_output("Oslo\nmore text") == "Oslo"


def test_summary_means_per_source_split_and_overall(parquet):
    episodes = mab.load(parquet, "Conflict_Resolution")
    questions = [q for e in episodes for q in e.questions]
    predictions = ["Oslo", "Bob", "7", "hi"]
    splits = ["Conflict_Resolution", "Conflict_Resolution", "Test_Time_Learning", "X"]
    out = mab.summarise(splits, questions, predictions)
    # CR factconsolidation: (1 + 0) / 2 = 0.5; TTL icl: 1; longmemeval unscored
    assert out["sources"] == {
        "Conflict_Resolution/factconsolidation_sh_6k": 0.5,
        "Test_Time_Learning/icl_banking77_5900shot_balance": 1.0,
    }
    assert out["splits"] == {"Conflict_Resolution": 0.5, "Test_Time_Learning": 1.0}
    assert out["overall"] == pytest.approx(0.75)
    assert (out["n"], out["unscored"]) == (3, 1)


@pytest.fixture
def tiny_qwen3(word_qwen3):
    words = sorted({w for r in ROWS for w in r["context"].split()} | set(mab.PROMPT.split()))
    return word_qwen3(words)


def test_answer_path_on_a_tiny_qwen3(tiny_qwen3, parquet):
    model, tokenizer = tiny_qwen3
    dm = DeltaMem(model, MemoryConfig(rank=4))
    episodes = mab.load(parquet, "Conflict_Resolution")[:2]
    results = {
        c: fullmab.evaluate_mab(model, tokenizer, dm, episodes, c, max_new_tokens=3)
        for c in fullscale.CONDITIONS
    }
    preds = {c: [r["prediction"] for r in res["predictions"]] for c, res in results.items()}
    # zero-initialised heads: the state cannot change a token
    assert preds["state_only"] == preds["truncated"]
    assert preds["history_replay"] == preds["official_prompt"]
    assert results["history_replay"]["score"]["n"] == 3 and len(preds["history_replay"]) == 3
    fullmab.evaluate_mab(model, tokenizer, dm, episodes[-1:], "state_only", max_new_tokens=3)
    # the state written once per episode is kept (not zeroed) while answering
    assert all(s is not None and s.abs().sum() > 0 for s in dm.states())
    docs = [res | {"key": f"x/{c}"} for c, res in results.items()]
    summary = fullmab.summarise_shards(docs)
    assert summary["x/history_replay"] == results["history_replay"]["score"]
    with pytest.raises(ValueError, match="condition"):
        fullmab.evaluate_mab(model, tokenizer, dm, episodes, "oracle")


def test_mab_ratio_claim():
    from repro.common.claims import NOT_TESTED, REPRODUCED
    from repro.delta_mem.claims import _mab_ratio

    spec = {
        "claim": "C4",
        "dataset": "qwen3_4b",
        "method": "released",
        "metric": "official_prompt/official_prompt",
        "paper_value": 1.31,
        "criterion": {"op": ">=", "threshold": 1.1},
    }
    doc = {
        "score": {
            "released/official_prompt": {"overall": 0.6, "n": 10},
            "base/official_prompt": {"overall": 0.5, "n": 10},
        }
    }
    claim = _mab_ratio("mab_gain", spec, {"mab": {"qwen3_4b": doc}})
    assert claim.measured == pytest.approx(1.2) and claim.verdict == REPRODUCED
    assert _mab_ratio("mab_gain", spec, {"mab": {}}).verdict == NOT_TESTED


def test_full_config_mab_keys_are_checked():
    import copy
    from pathlib import Path

    import yaml

    from repro.common.configcheck import ConfigError
    from repro.delta_mem import configcheck

    full = yaml.safe_load((Path(__file__).parents[2] / "config" / "full.yaml").read_text())
    splits = full["papers"]["delta_mem"]["full_scale"]["memoryagentbench"]["splits"]
    assert set(splits) == set(mab.SPLITS)
    for spec in splits.values():
        url = full["downloads"][spec["download"]]["url"]
        assert url.startswith("https://huggingface.co/datasets/ai-hyz/MemoryAgentBench/resolve/")
    bad = copy.deepcopy(full)
    bad["papers"]["delta_mem"]["full_scale"]["memoryagentbench"]["splits"]["Conflict_Resolution"][
        "download"
    ] = "nope"
    with pytest.raises(ConfigError, match=r"memoryagentbench\.splits\.Conflict_Resolution"):
        configcheck.check(bad)
    bad = copy.deepcopy(full)
    bad["papers"]["delta_mem"]["claims"]["mab_gain"]["dataset"] = "llama"
    with pytest.raises(ConfigError, match=r"claims\.mab_gain\.dataset"):
        configcheck.check(bad)
