"""Full-scale δ-Mem training on chat episodes (the QASPER-derived set), episode mode.

An episode is ``{"messages": [{"role", "content"}, ...]}`` ending with an assistant turn.
Every earlier message is written into the state (token-state write, up to ``write_length``
tokens, the most recent kept); the visible window is the last user turn and the answer (at
most ``visible_length`` tokens); the loss is on the answer's tokens only. The write pass
keeps its graph: the write maps and gates learn through the state. The write-sparsity
regulariser of the official trainer (``write_sparsity_weight`` 0.01, target mean β 0.05;
weight 0 turns it off) is added to the loss: the mean over layers of (mean β − target)²,
with β from the last forward, the visible window (as ``get_delta_mem_write_regularization``
reads ``last_beta_mean``, delta_impl.py 1989–2005, in ``compute_loss``, delta_sft_experimental.py
1341–1347).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math

import torch
import torch.nn.functional as F

from repro.delta_mem.adapter import save_adapter
from repro.delta_mem.generation import chat_text, plain_chat_text
from repro.delta_mem.wrapper import DeltaMem

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class FullTrainConfig:
    lr: float = 2e-4
    epochs: int = 1
    grad_accum: int = 32
    warmup: float = 0.1
    write_length: int = 8192
    visible_length: int = 512
    write_sparsity_weight: float = 0.01
    write_sparsity_target: float = 0.05


def read_episodes(path: str) -> list[list[dict]]:
    with open(path) as handle:
        return [json.loads(line)["messages"] for line in handle if line.strip()]


def _text(tokenizer, messages, *, generation_prompt=False) -> str:
    """As generation encodes them (thinking off), so training sees the prompts it answers."""
    text = chat_text(tokenizer, messages, generation_prompt=generation_prompt)
    return plain_chat_text(messages) if text is None else text


def episode_tensors(tokenizer, messages, cfg: FullTrainConfig):
    """(history ids, visible ids, labels with -100 outside the answer), each (1, L)."""
    if messages[-1]["role"] != "assistant" or len(messages) < 2:
        raise ValueError("an episode ends with a user turn and the assistant's answer")
    prompt = _text(tokenizer, messages[-2:-1], generation_prompt=True)
    answer = messages[-1]["content"] + (tokenizer.eos_token or "")
    p_ids = tokenizer(prompt, add_special_tokens=False).input_ids
    a_ids = tokenizer(answer, add_special_tokens=False).input_ids
    visible = (p_ids + a_ids)[-cfg.visible_length :]
    labels = ([-100] * len(p_ids) + a_ids)[-cfg.visible_length :]
    history = tokenizer(_text(tokenizer, messages[:-2]), add_special_tokens=False).input_ids
    history = history[-cfg.write_length :]
    return tuple(torch.tensor([x]) for x in (history, visible, labels))


def episode_loss(
    model, dm: DeltaMem, history, visible, labels, cfg: FullTrainConfig
) -> torch.Tensor:
    dm.reset()
    if history.shape[1]:
        with dm.phase(writes=True):
            model(input_ids=history, use_cache=False)
    with dm.phase(writes=False):
        logits = model(input_ids=visible, use_cache=False).logits
    loss = F.cross_entropy(logits[0, :-1].float(), labels[0, 1:], ignore_index=-100)
    if cfg.write_sparsity_weight:
        loss = loss + cfg.write_sparsity_weight * dm.write_sparsity(cfg.write_sparsity_target)
    return loss


def train(model, tokenizer, dm: DeltaMem, episodes, cfg: FullTrainConfig) -> list[float]:
    """AdamW on δ-Mem's parameters, cosine decay after warm-up, gradient accumulation."""
    device = next(model.parameters()).device
    params = list(dm.parameters())
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    total = max(1, math.ceil(cfg.epochs * len(episodes) / cfg.grad_accum))
    warm = max(1, int(cfg.warmup * total))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: (
            (s + 1) / warm
            if s < warm
            else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))
        ),
    )
    losses, pending = [], 0
    for _ in range(cfg.epochs):
        for messages in episodes:
            tensors = [t.to(device) for t in episode_tensors(tokenizer, messages, cfg)]
            loss = episode_loss(model, dm, *tensors, cfg)
            (loss / cfg.grad_accum).backward()
            losses.append(float(loss.detach()))
            pending += 1
            if pending == cfg.grad_accum:
                optimizer.step()
                schedule.step()
                optimizer.zero_grad(set_to_none=True)
                pending = 0
                log.info(
                    "optimiser step %d, mean loss %.4f",
                    schedule.last_epoch,
                    sum(losses[-cfg.grad_accum :]) / cfg.grad_accum,
                )
    if pending:  # a last partial accumulation: average over its own episodes
        for p in params:
            if p.grad is not None:
                p.grad.mul_(cfg.grad_accum / pending)
        optimizer.step()
    return losses


def run(
    model_id: str,
    memory,
    cfg: FullTrainConfig,
    episodes_path: str,
    adapter: str,
    record: str,
    *,
    device: str = "auto",
    dtype: str = "bfloat16",
) -> None:
    """Train δ-Mem on a hub model (needs the network or a filled HF cache) and save it."""
    from repro.common.device import select_device
    from repro.common.io import write_json
    from repro.common.provenance import RunRecorder
    from repro.delta_mem.fullscale import load_model

    dev = select_device(device)
    model, tokenizer = load_model(model_id, dev, dtype)
    dm = DeltaMem(model, memory)
    with RunRecorder(config={"model": model_id, "train": cfg}, device=dev) as rec:
        losses = train(model, tokenizer, dm, read_episodes(episodes_path), cfg)
    save_adapter(dm, adapter)
    write_json(record, {"model": model_id, "losses": losses, **rec.provenance()})


def main() -> None:
    parser = argparse.ArgumentParser(description="Train δ-Mem on chat episodes (hub model)")
    parser.add_argument("model", help="Hugging Face model id")
    parser.add_argument("episodes", help="JSONL of {messages}")
    parser.add_argument("adapter", help="output .safetensors")
    parser.add_argument("record", help="output .json")
    parser.add_argument(
        "--config", help="JSON: FullTrainConfig fields and memory (MemoryConfig fields)"
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    from repro.delta_mem.memory import MemoryConfig

    cfg = json.loads(open(args.config).read()) if args.config else {}
    memory = MemoryConfig(**cfg.pop("memory", {}))
    run(
        args.model,
        memory,
        FullTrainConfig(**cfg),
        args.episodes,
        args.adapter,
        args.record,
        device=args.device,
        dtype=args.dtype,
    )


if __name__ == "__main__":
    main()
