"""Hugging Face models with δ-Mem attached: chat encoding, one-pass history ingestion with a
KV cache, and (seeded) sampling as the official benchmark suite decodes.

Official references (declare-lab/delta-Mem at 5cd5d91): ``DeltaMemChatSession.
_ingest_full_ids`` (deltamem/runtime/session.py, 515–567) writes a whole token sequence in
one forward pass with ``use_cache=True``; ``generate_official_full_history_answer``
(deltamem/eval/locomo_delta.py, 420–479) decodes with ``model.generate`` given an
``attention_mask``, seeded by ``torch.manual_seed``, temperature 0.4, top-p 0.9, top-k 10.
"""

from __future__ import annotations

import dataclasses

import torch

from repro.delta_mem.wrapper import DeltaMem


@dataclasses.dataclass(frozen=True)
class Sampling:
    max_new_tokens: int = 50
    do_sample: bool = True
    temperature: float = 0.4
    top_p: float = 0.9
    top_k: int = 10
    seed: int = 42  # the official suite's; question i of a conversation uses seed + i

    def generate_kwargs(self) -> dict:
        kwargs = {"max_new_tokens": self.max_new_tokens, "do_sample": self.do_sample}
        if self.do_sample:
            kwargs |= {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k}
        return kwargs


def pad_id(tokenizer) -> int | None:
    """The pad token's id (0 is a valid id), else the end-of-sequence token's."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


def chat_text(tokenizer, messages: list[dict], *, generation_prompt: bool) -> str | None:
    """The chat template's text of ``messages``, None without a template. Thinking off:
    Qwen3's and SmolLM3's templates open the answer with reasoning unless
    ``enable_thinking=False`` (their generation prompt then holds an empty think block), and
    the benchmarks' short answers would be truncated reasoning; templates without the switch
    ignore it."""
    if not getattr(tokenizer, "chat_template", None):
        return None
    return tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=generation_prompt, enable_thinking=False
    )


def plain_chat_text(messages: list[dict]) -> str:
    """Messages as "role: content" lines, for tokenizers without a chat template."""
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages)


def encode_chat(tokenizer, messages: list[dict], device, *, generation_prompt=True):
    """(1, L) ids of chat messages. A chat template already holds the special tokens, so the
    rendered text is tokenised without adding them again; without a template, the messages
    are written as "role: content" lines and tokenised as plain text."""
    text = chat_text(tokenizer, messages, generation_prompt=generation_prompt)
    if text is not None:
        ids = tokenizer(text, add_special_tokens=False).input_ids
    else:
        ids = tokenizer(plain_chat_text(messages)).input_ids
    return torch.tensor([ids], device=device)


@torch.no_grad()
def ingest(model, dm: DeltaMem, ids: torch.Tensor, *, chunk: int | None = None) -> None:
    """Reset the state and write ``ids`` into it: one forward pass over the whole sequence
    (the official ingestion); ``chunk`` splits the pass into pieces that attend to the earlier
    ones through the KV cache (less activation memory, the same final state)."""
    from transformers import DynamicCache

    dm.reset()
    cache = DynamicCache(config=model.config)
    step = chunk or ids.shape[1]
    with dm.phase(writes=True):
        for start in range(0, ids.shape[1], step):
            model(input_ids=ids[:, start : start + step], cache=cache, use_cache=True)


@torch.no_grad()
def generate(
    model, tokenizer, dm: DeltaMem, ids, sampling: Sampling, *, seed: int, writes: bool
) -> str:
    """Decode after ``ids`` from the current state; ``writes``: the prompt and the new tokens
    are written into the state as they are read (the official full-prompt condition)."""
    device = ids.device
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), dm.phase(writes=writes):
        torch.manual_seed(seed)
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            pad_token_id=pad_id(tokenizer),
            **sampling.generate_kwargs(),
        )
    return tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()
