"""Full scale: δ-Mem on MemoryAgentBench, under the LoCoMo conditions (``fullscale``).

Per episode the (clipped) context is written into the state once (``state_only``,
``history_replay``) and/or shown before each question (``history_replay``,
``official_prompt``: reset, one pass over context + question with writes on). Decoding is
greedy (the per-source generation settings of the official suite are not reproduced; see
docs/delta_mem.md).
"""

from __future__ import annotations

import argparse

from repro.delta_mem import memoryagentbench as mab
from repro.delta_mem.fullscale import STATEFUL, check_condition, model_with_memory
from repro.delta_mem.generation import Sampling, encode_chat, generate, ingest


def evaluate_mab(
    model, tokenizer, dm, episodes, condition, *, max_new_tokens=4096, ingest_chunk=None
) -> dict:
    check_condition(condition)
    device = next(model.parameters()).device
    sampling = Sampling(max_new_tokens=max_new_tokens, do_sample=False)
    rows = []
    for episode in episodes:
        dm.reset()
        if condition in STATEFUL:
            ids = encode_chat(tokenizer, [{"role": "user", "content": episode.context}], device)
            ingest(model, dm, ids, chunk=ingest_chunk)
        written = dm.states()
        visible = "" if condition in ("truncated", "state_only") else episode.context
        for q in episode.questions:
            dm.set_states(written)
            ids = encode_chat(
                tokenizer, [{"role": "user", "content": mab.prompt(q, visible)}], device
            )
            writes = condition == "official_prompt"
            pred = generate(model, tokenizer, dm, ids, sampling, seed=0, writes=writes)
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
    return {"condition": condition, "score": summarise_rows(rows), "predictions": rows}


def summarise_rows(rows: list[dict]) -> dict:
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
    device="auto",
    dtype="bfloat16",
    context_chars=mab.CONTEXT_CHARS,
    **kwargs,
) -> dict:
    """Rows ``shard`` (mod ``shards``) of one MemoryAgentBench split under one condition."""
    from repro.common.device import select_device
    from repro.common.io import write_json
    from repro.common.provenance import RunRecorder

    dev = select_device(device)
    model, tokenizer, dm = model_with_memory(model_id, dev, dtype, memory, adapter)
    episodes = mab.shard(mab.load(parquet, split, context_chars), shard, shards)
    config = {"model": model_id, "adapter": adapter, "condition": condition, "split": split}
    with RunRecorder(config=config, device=dev) as rec:
        result = evaluate_mab(model, tokenizer, dm, episodes, condition, **kwargs)
    result |= {"split": split, "shard": shard, "provenance": rec.provenance()}
    write_json(output, result)
    return result


def summarise_shards(docs: list[dict]) -> dict:
    """Score per (adapter/condition) over every split shard, recomputed from predictions."""
    return {
        key: summarise_rows([r for d in docs if d["key"] == key for r in d["predictions"]])
        for key in sorted({d["key"] for d in docs})
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="One MemoryAgentBench split shard, one condition")
    parser.add_argument("model", help="Hugging Face model id")
    parser.add_argument("parquet")
    parser.add_argument("split", choices=mab.SPLITS)
    parser.add_argument("condition")
    parser.add_argument("output")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument(
        "--adapter", help="an adapter directory / file or a hub repo id (none: base)"
    )
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=4096)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args()
    from repro.delta_mem.memory import MemoryConfig

    run_mab(
        args.model,
        MemoryConfig(rank=args.rank, init="base_slice_fixed"),
        args.adapter,
        args.parquet,
        args.split,
        args.shard,
        args.shards,
        args.condition,
        args.output,
        device=args.device,
        dtype=args.dtype,
        max_new_tokens=args.max_new_tokens,
    )


if __name__ == "__main__":
    main()
