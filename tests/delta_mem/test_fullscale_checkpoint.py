"""The full-scale entry points on a real checkpoint directory: a tiny random transformers
Qwen3ForCausalLM and a tokenizer with a ChatML chat template, saved with save_pretrained and
read back by the jobs' own from_pretrained calls (AutoModelForCausalLM / AutoTokenizer), as
the full-scale jobs read Qwen3-4B from the Hugging Face cache. Train → adapter → LoCoMo and
MemoryAgentBench answers, each job as the rules run it (no stand-ins, no monkeypatching)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from repro.common.io import read_json
from repro.delta_mem import fullmab, fullscale, fulltrain, locomo
from repro.delta_mem import memoryagentbench as mab
from repro.delta_mem.generation import Sampling, encode_chat
from repro.delta_mem.memory import MemoryConfig
from tests.delta_mem.conftest import tiny_qwen3, word_tokenizer
from tests.delta_mem.test_locomo_fullscale import EPISODE, FIXTURE
from tests.delta_mem.test_memoryagentbench import ROWS

# Qwen's ChatML layout (the real template also handles tools and thinking; not needed here)
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MEMORY = MemoryConfig(rank=4, init="base_slice_fixed")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A saved tiny Qwen3 checkpoint directory (config.json, model.safetensors, tokenizer)."""
    conversations = locomo.load(str(FIXTURE))
    text = " ".join(m["content"] for c in conversations for m in locomo.history_messages(c))
    text += " " + " ".join([locomo.QA_PROMPT, mab.PROMPT, *(r["context"] for r in ROWS)])
    words = sorted(set(text.split()) | {"user", "assistant", "system"})
    tokenizer = word_tokenizer(words, eos="<|im_end|>", specials=["<|im_start|>"])
    tokenizer.chat_template = CHATML
    model = tiny_qwen3(
        vocab_size=len(tokenizer), max_position_embeddings=4096, eos_token_id=2, pad_token_id=1
    )
    path = tmp_path_factory.mktemp("qwen3_tiny")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_load_model_reads_the_checkpoint_as_transformers_qwen3(checkpoint):
    from transformers import Qwen3ForCausalLM
    from transformers.models.qwen3.modeling_qwen3 import Qwen3Attention

    model, tokenizer = fullscale.load_model(checkpoint, "cpu", "bfloat16")
    assert type(model) is Qwen3ForCausalLM and model.dtype == torch.bfloat16
    assert sum(isinstance(m, Qwen3Attention) for m in model.modules()) == 2
    ids = encode_chat(tokenizer, [{"role": "user", "content": "Ana"}], "cpu")
    start, end = tokenizer.convert_tokens_to_ids(["<|im_start|>", "<|im_end|>"])
    assert ids[0, 0] == start and end in ids[0].tolist()  # the template, no second BOS
    assert ids.shape[1] == 6  # <|im_start|> user Ana <|im_end|> <|im_start|> assistant
    # the base adapter: zero Δ heads on the real attention modules, exactly the base model
    model32, _ = fullscale.load_model(checkpoint, "cpu", "float32")
    base = model32(ids).logits
    steered, _, dm = fullscale.model_with_memory(checkpoint, "cpu", "float32", MEMORY, None)
    assert len(dm.memories) == 2
    assert all(m.delta_q.weight.abs().max() == 0 for m in dm.memories)
    torch.testing.assert_close(steered(ids).logits, base)


def test_train_then_answer_locomo_and_mab_from_the_checkpoint(checkpoint, tmp_path):
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text("\n".join(json.dumps({"messages": EPISODE}) for _ in range(4)))
    adapter = tmp_path / "adapter"
    cfg = fulltrain.FullTrainConfig(lr=3e-2, grad_accum=2, write_length=16, visible_length=64)
    fulltrain.run(
        checkpoint, MEMORY, cfg, str(episodes), str(adapter), str(tmp_path / "train.json"),
        device="cpu", dtype="float32",
    )  # fmt: skip
    record = read_json(tmp_path / "train.json")
    assert record["model"] == checkpoint and len(record["losses"]) == 4
    assert all(x == x for x in record["losses"])  # finite (NaN != NaN)

    sampling = Sampling(max_new_tokens=3, seed=42)
    out = tmp_path / "locomo.json"
    fullscale.run_locomo(
        checkpoint, MEMORY, str(adapter), str(FIXTURE), 0, "official_prompt", str(out), sampling,
        device="cpu", dtype="float32",
    )  # fmt: skip
    result = read_json(out)
    questions = locomo.load(str(FIXTURE))[0].questions
    assert len(result["predictions"]) == len(questions) == result["f1"]["n"]
    assert result["provenance"]["device"] == "cpu"

    parquet = tmp_path / "Conflict_Resolution-00000-of-00001.parquet"
    pd.DataFrame(ROWS).to_parquet(parquet)
    out = tmp_path / "mab.json"
    fullmab.run_mab(
        checkpoint, MEMORY, str(adapter), str(parquet), "Conflict_Resolution", 0, 1,
        "state_only", str(out), device="cpu", dtype="float32", max_new_tokens=3,
    )  # fmt: skip
    result = read_json(out)
    rows = mab.load(str(parquet), "Conflict_Resolution")
    assert len(result["predictions"]) == sum(len(e.questions) for e in rows)
    scored = sum(len(e.questions) for e in rows if mab.metric(e.source))  # LongMemEval: judged
    assert result["score"]["n"] == scored > 0
    assert result["provenance"]["device"] == "cpu"
