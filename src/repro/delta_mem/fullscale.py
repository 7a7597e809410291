"""Full scale: δ-Mem on a Hugging Face Qwen3-style model, answering LoCoMo questions.

Conditions (brief §5): ``truncated`` (question only), ``full`` (history in the window),
``state_only`` (history written into the state, question only), ``full_state`` (history
in the window and in the state: the official LoCoMo protocol). The base conditions run
with δ-Mem attached at zero state and writes off, which is exactly the base model.
Loading a hub model or adapter needs the network; everything else is tested offline on a
tiny random ``Qwen3Config`` model.
"""

from __future__ import annotations

import torch

from repro.delta_mem.locomo import Conversation, prompt, summarise
from repro.delta_mem.wrapper import DeltaMem

CONDITIONS = ("truncated", "full", "state_only", "full_state")


def load_model(model_id: str, device, dtype: str = "bfloat16"):
    """The frozen backbone and its tokenizer from the hub (or the local HF cache)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=getattr(torch, dtype))
    return model.to(device).eval(), AutoTokenizer.from_pretrained(model_id)


def _encode(tokenizer, text: str, device) -> torch.Tensor:
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
    return tokenizer(text, return_tensors="pt").input_ids.to(device)


@torch.no_grad()
def write_history(model, tokenizer, dm: DeltaMem, history: str, write_length: int, device):
    """Token-state write (TSW): every history token, in windows of ``write_length``."""
    ids = tokenizer(history, return_tensors="pt").input_ids.to(device)
    dm.reset()
    with dm.phase(writes=True):
        for start in range(0, ids.shape[1], write_length):
            model(input_ids=ids[:, start : start + write_length], use_cache=False)


@torch.no_grad()
def generate(
    model, tokenizer, dm: DeltaMem, visible: str, max_new_tokens: int, *, keep_state=False
) -> str:
    """Greedy answer to ``visible`` with writes off; the state is zeroed unless kept."""
    device = next(model.parameters()).device
    if not keep_state:
        dm.reset()
    ids = _encode(tokenizer, visible, device)
    with dm.phase(writes=False):
        out = model.generate(
            ids,
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
        )
    return tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()


@torch.no_grad()
def answer(
    model,
    tokenizer,
    dm: DeltaMem,
    conversation: Conversation,
    question,
    condition,
    *,
    write_length: int = 8192,
    max_new_tokens: int = 50,
) -> str:
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    device = next(model.parameters()).device
    stateful = condition in ("state_only", "full_state")
    if stateful:
        write_history(model, tokenizer, dm, conversation.history, write_length, device)
    visible = (conversation.history if condition.startswith("full") else "") + prompt(question)
    return generate(model, tokenizer, dm, visible, max_new_tokens, keep_state=stateful)


def evaluate_locomo(model, tokenizer, dm, conversations, condition, **kwargs) -> dict:
    """Predictions and F1 (per category and overall) of one condition."""
    questions, predictions = [], []
    for conversation in conversations:
        for question in conversation.questions:
            questions.append(question)
            predictions.append(
                answer(model, tokenizer, dm, conversation, question, condition, **kwargs)
            )
    return {
        "condition": condition,
        "f1": summarise(questions, predictions),
        "predictions": [
            {
                "sample_id": q.sample_id,
                "question": q.question,
                "answer": q.answer,
                "category": q.category,
                "prediction": p,
            }
            for q, p in zip(questions, predictions, strict=True)
        ],
    }


def released_adapter(repo_id: str) -> str:
    """The released adapter's weights file, from the hub (or the local HF cache)."""
    from pathlib import Path

    from huggingface_hub import snapshot_download

    files = sorted(Path(snapshot_download(repo_id)).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"{repo_id}: no .safetensors file in the snapshot")
    return str(files[0])


def _model_with_memory(model_id, device, dtype, memory, adapter, key_map):
    """The hub model with δ-Mem attached; ``adapter``: a local path, a hub repo id (the
    released adapter) or None (zero-initialised heads: the base model)."""
    import os

    from repro.delta_mem.fulltrain import load_adapter

    model, tokenizer = load_model(model_id, device, dtype)
    dm = DeltaMem(model, memory)
    if adapter:
        path = adapter if os.path.exists(adapter) else released_adapter(adapter)
        load_adapter(dm, path, key_map)
    return model, tokenizer, dm


def run_locomo(
    model_id,
    memory,
    adapter,
    locomo_path,
    shard,
    condition,
    output,
    *,
    key_map=None,
    device="auto",
    dtype="bfloat16",
    **kwargs,
) -> dict:
    """One conversation (``shard``) of LoCoMo under one condition; ``adapter``: a path, a
    hub repo id (the released adapter) or None (zero-initialised δ-Mem = the base)."""

    from repro.common.device import select_device
    from repro.common.io import write_json
    from repro.common.provenance import RunRecorder
    from repro.delta_mem.locomo import load

    dev = select_device(device)
    model, tokenizer, dm = _model_with_memory(model_id, dev, dtype, memory, adapter, key_map)
    conversation = load(locomo_path)[shard]
    with RunRecorder(
        config={"model": model_id, "adapter": adapter, "condition": condition}, device=dev
    ) as rec:
        result = evaluate_locomo(model, tokenizer, dm, [conversation], condition, **kwargs)
    result |= {"sample_id": conversation.sample_id, "provenance": rec.provenance()}
    write_json(output, result)
    return result


def summarise_shards(docs: list[dict]) -> dict:
    """F1 per (adapter/condition) over every conversation shard, recomputed from predictions."""
    from repro.delta_mem.locomo import Question

    out = {}
    for key in sorted({d["key"] for d in docs}):
        rows = [p for d in docs if d["key"] == key for p in d["predictions"]]
        questions = [
            Question(r["sample_id"], r["question"], r["answer"], r["category"]) for r in rows
        ]
        out[key] = summarise(questions, [r["prediction"] for r in rows])
    return out


@torch.no_grad()
def evaluate_mab(
    model,
    tokenizer,
    dm,
    episodes,
    condition,
    *,
    write_length: int = 8192,
    max_new_tokens: int = 4096,
) -> dict:
    """MemoryAgentBench episodes under one condition: the (clipped) context is written into
    the state once per episode (state conditions) and/or shown before each question."""
    from repro.delta_mem import memoryagentbench as mab

    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    device = next(model.parameters()).device
    stateful = condition in ("state_only", "full_state")
    rows = []
    for episode in episodes:
        if stateful:
            write_history(model, tokenizer, dm, episode.context, write_length, device)
        visible = episode.context if condition.startswith("full") else ""
        for q in episode.questions:
            text = mab.prompt(q, visible)
            pred = generate(model, tokenizer, dm, text, max_new_tokens, keep_state=stateful)
            rows.append(
                {
                    "split": episode.split,
                    "row": episode.row,
                    "source": q.source,
                    "question": q.question,
                    "answers": list(q.answers),
                    "prediction": pred,
                }
            )
    return {"condition": condition, "score": summarise_mab_rows(rows), "predictions": rows}


def summarise_mab_rows(rows: list[dict]) -> dict:
    from repro.delta_mem import memoryagentbench as mab

    questions = [mab.Question(r["source"], r["question"], tuple(r["answers"])) for r in rows]
    return mab.summarise([r["split"] for r in rows], questions, [r["prediction"] for r in rows])


def run_mab(
    model_id,
    memory,
    adapter,
    parquet,
    split,
    shard,
    shards,
    condition,
    output,
    *,
    key_map=None,
    device="auto",
    dtype="bfloat16",
    context_chars=120_000,
    **kwargs,
) -> dict:
    """Rows ``shard`` (mod ``shards``) of one MemoryAgentBench split under one condition."""

    from repro.common.device import select_device
    from repro.common.io import write_json
    from repro.common.provenance import RunRecorder
    from repro.delta_mem import memoryagentbench as mab

    dev = select_device(device)
    model, tokenizer, dm = _model_with_memory(model_id, dev, dtype, memory, adapter, key_map)
    episodes = mab.shard(mab.load(parquet, split, context_chars), shard, shards)
    with RunRecorder(
        config={"model": model_id, "adapter": adapter, "condition": condition, "split": split},
        device=dev,
    ) as rec:
        result = evaluate_mab(model, tokenizer, dm, episodes, condition, **kwargs)
    result |= {"split": split, "shard": shard, "provenance": rec.provenance()}
    write_json(output, result)
    return result


def summarise_mab_shards(docs: list[dict]) -> dict:
    """Score per (adapter/condition) over every split shard, recomputed from predictions."""
    return {
        key: summarise_mab_rows([r for d in docs if d["key"] == key for r in d["predictions"]])
        for key in sorted({d["key"] for d in docs})
    }
