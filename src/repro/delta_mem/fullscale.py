"""Full scale: δ-Mem on a Hugging Face Qwen3-style model, answering LoCoMo questions.

Conditions (brief §5 and the official suite's two full-history modes):
- ``truncated``: system prompt and question only, zero state.
- ``state_only``: the history (system prompt, one message per session) written into the
  state in one pass; then only the question is visible, writes off.
- ``history_replay``: the same write, then history + question in the window, writes off
  (``--full-history-mode history_replay``: write, then read).
- ``official_prompt``: the paper's LoCoMo condition (``--full-history-mode official_prompt``,
  the mode of the official benchmark scripts): reset, then one pass over δ-Mem's full
  prompt (system prompt; conversation + QA prompt) with writes on, the answer sampled
  (temperature 0.4, top-p 0.9, top-k 10, seeded per question) and canonicalised.
Every condition samples with the same settings and per-question seed. The base model's
rows are the ``base`` adapter: δ-Mem attached with zero heads, which is exactly the base
model in every condition (so base/official_prompt is the paper's base row).
Loading a hub model or adapter needs the network; everything else is tested offline on a
tiny random ``Qwen3Config`` model.
"""

from __future__ import annotations

import argparse
import dataclasses

import torch

from repro.delta_mem import locomo
from repro.delta_mem.generation import Sampling, encode_chat, generate, ingest
from repro.delta_mem.wrapper import DeltaMem

CONDITIONS = ("truncated", "state_only", "history_replay", "official_prompt")
STATEFUL = ("state_only", "history_replay")  # the history is written before reading


def load_model(model_id: str, device, dtype: str = "bfloat16"):
    """The frozen backbone and its tokenizer from the hub (or the local HF cache)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=getattr(torch, dtype))
    return model.to(device).eval(), AutoTokenizer.from_pretrained(model_id)


def context_window(model) -> int:
    """The official ``infer_model_context_window``: the model's position limit."""
    return int(getattr(model.config, "max_position_embeddings", None) or 32768)


def check_condition(condition: str) -> None:
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")


def answer_conversation(
    model,
    tokenizer,
    dm: DeltaMem,
    conversation: locomo.Conversation,
    condition: str,
    sampling: Sampling,
    *,
    ingest_chunk: int | None = None,
) -> list[str]:
    """Canonical answers to every question of one conversation under one condition."""
    check_condition(condition)
    device = next(model.parameters()).device
    history = locomo.history_messages(conversation)
    dm.reset()
    if condition in STATEFUL:  # written once; each question starts from that state
        ids = encode_chat(tokenizer, history, device, generation_prompt=False)
        ingest(model, dm, ids, chunk=ingest_chunk)
    written = dm.states()

    def count(text: str) -> int:
        return len(tokenizer.encode(text))

    answers = []
    for i, question in enumerate(conversation.questions):
        if condition == "official_prompt":
            messages = locomo.official_prompt_messages(
                conversation, question, count, context_window(model)
            )
        elif condition == "history_replay":
            messages = history + locomo.question_messages(question)[1:]
        else:
            messages = locomo.question_messages(question)
        dm.set_states(written)  # zero for truncated and official_prompt
        ids = encode_chat(tokenizer, messages, device)
        raw = generate(
            model,
            tokenizer,
            dm,
            ids,
            sampling,
            seed=sampling.seed + i,
            writes=condition == "official_prompt",
        )
        answers.append(locomo.canonical(raw))
    return answers


def evaluate_locomo(model, tokenizer, dm, conversations, condition, sampling, **kwargs) -> dict:
    """Predictions and F1 (per category and overall) of one condition."""
    questions, predictions = [], []
    for conversation in conversations:
        questions += conversation.questions
        predictions += answer_conversation(
            model, tokenizer, dm, conversation, condition, sampling, **kwargs
        )
    return {
        "condition": condition,
        "f1": locomo.summarise(questions, predictions),
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
    """The released adapter's directory (``delta_mem_adapter.pt`` + config), from the hub or
    the local HF cache."""
    from pathlib import Path

    from huggingface_hub import snapshot_download

    from repro.delta_mem.adapter import ADAPTER_FILE

    found = sorted(Path(snapshot_download(repo_id)).rglob(ADAPTER_FILE))
    if not found:
        raise FileNotFoundError(f"{repo_id}: no {ADAPTER_FILE} in the snapshot")
    return str(found[0].parent)


def model_with_memory(model_id, device, dtype, memory, adapter):
    """The hub model with δ-Mem attached; ``adapter``: a local path, a hub repo id (the
    released adapter) or None (zero heads: exactly the base model, in every condition)."""
    import os

    from repro.delta_mem.adapter import load_adapter

    model, tokenizer = load_model(model_id, device, dtype)
    if not adapter:
        memory = dataclasses.replace(memory, init="zero")
    dm = DeltaMem(model, memory)
    if adapter:
        load_adapter(dm, adapter if os.path.exists(adapter) else released_adapter(adapter))
    return model, tokenizer, dm


def run_locomo(
    model_id,
    memory,
    adapter,
    locomo_path,
    shard,
    condition,
    output,
    sampling: Sampling,
    *,
    ingest_chunk=None,
    device="auto",
    dtype="bfloat16",
) -> dict:
    """One conversation (``shard``) of LoCoMo under one condition."""
    from repro.common.device import select_device
    from repro.common.io import write_json
    from repro.common.provenance import RunRecorder

    dev = select_device(device)
    model, tokenizer, dm = model_with_memory(model_id, dev, dtype, memory, adapter)
    conversation = locomo.load(locomo_path)[shard]
    config = {"model": model_id, "adapter": adapter, "condition": condition, "sampling": sampling}
    with RunRecorder(config=config, device=dev) as rec:
        result = evaluate_locomo(
            model, tokenizer, dm, [conversation], condition, sampling, ingest_chunk=ingest_chunk
        )
    result |= {"sample_id": conversation.sample_id, "provenance": rec.provenance()}
    write_json(output, result)
    return result


def summarise_shards(docs: list[dict]) -> dict:
    """F1 per (adapter/condition) over every conversation shard, recomputed from predictions."""
    out = {}
    for key in sorted({d["key"] for d in docs}):
        rows = [p for d in docs if d["key"] == key for p in d["predictions"]]
        questions = [
            locomo.Question(r["sample_id"], r["question"], r["answer"], r["category"]) for r in rows
        ]
        out[key] = locomo.summarise(questions, [r["prediction"] for r in rows])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="One LoCoMo conversation under one condition")
    parser.add_argument("model", help="Hugging Face model id")
    parser.add_argument("locomo", help="locomo10.json")
    parser.add_argument("shard", type=int, help="the conversation's index")
    parser.add_argument("condition", choices=CONDITIONS)
    parser.add_argument("output")
    parser.add_argument(
        "--adapter", help="an adapter directory / file or a hub repo id (none: base)"
    )
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=50)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--ingest-chunk", type=int)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args()
    from repro.delta_mem.memory import MemoryConfig

    sampling = Sampling(max_new_tokens=args.max_new_tokens, seed=args.seed)
    run_locomo(
        args.model,
        MemoryConfig(rank=args.rank, init="base_slice_fixed"),
        args.adapter,
        args.locomo,
        args.shard,
        args.condition,
        args.output,
        sampling,
        ingest_chunk=args.ingest_chunk,
        device=args.device,
        dtype=args.dtype,
    )


if __name__ == "__main__":
    main()
