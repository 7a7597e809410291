"""Full scale: δ-Mem on MemoryAgentBench, under the LoCoMo conditions (``fullscale``).

Per episode the (clipped) context is written into the state once (``state_only``,
``history_replay``) and/or shown before each question (``history_replay``,
``official_prompt``: reset, one pass over context + question with writes on). Decoding is
greedy (the per-source generation settings of the official suite are not reproduced; see
config/README.md).
"""

from __future__ import annotations

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
            ids = encode_chat(tokenizer, [{"role": "user", "content": mab.prompt(q, visible)}], device)
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
