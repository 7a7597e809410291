"""The embedded model: a ~100k-parameter transformers causal LM built from a config.

No weights are downloaded: the architecture (Qwen2- or GPT-2-style) is instantiated from
its config class, over the grammar's vocabulary, and saved/loaded with ``save_pretrained``
(TRL's RL trainers rebuild their reference model from that folder).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import torch

from repro.helpful_only import vocab as V

ARCHITECTURES = ("qwen2", "gpt2")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    architecture: str = "qwen2"
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    intermediate: int = 176
    context: int = 40


def build_model(cfg: ModelConfig):
    """A freshly initialised causal LM (seed torch before calling for a reproducible init)."""
    ids = dict(
        vocab_size=len(V.WORDS),
        bos_token_id=V.TOKEN_ID[V.BOS],
        eos_token_id=V.TOKEN_ID[V.EOS],
        pad_token_id=V.TOKEN_ID[V.PAD],
    )
    if cfg.architecture == "qwen2":
        from transformers import Qwen2Config, Qwen2ForCausalLM

        config = Qwen2Config(
            hidden_size=cfg.hidden,
            num_hidden_layers=cfg.layers,
            num_attention_heads=cfg.heads,
            num_key_value_heads=cfg.heads,
            intermediate_size=cfg.intermediate,
            max_position_embeddings=cfg.context,
            tie_word_embeddings=True,
            **ids,
        )
        return Qwen2ForCausalLM(config)
    if cfg.architecture == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(
            n_embd=cfg.hidden,
            n_layer=cfg.layers,
            n_head=cfg.heads,
            n_inner=cfg.intermediate,
            n_positions=cfg.context,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            **ids,
        )
        return GPT2LMHeadModel(config)
    raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {cfg.architecture!r}")


def parameter_count(model) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.inference_mode()
def next_token_probs(model, prompts: list[str]) -> list[dict[str, float]]:
    """P(next word | prompt) over the whole vocabulary, for each prompt (in order).

    Prompts are batched by length, so no padding touches the numbers.
    """
    model.eval()
    device = next(model.parameters()).device
    by_length = defaultdict(list)
    for i, text in enumerate(prompts):
        by_length[len(text.split())].append(i)
    out: list[dict[str, float]] = [{} for _ in prompts]
    for rows in by_length.values():
        ids = torch.tensor([V.encode(prompts[i]) for i in rows], device=device)
        logits = model(input_ids=ids, use_cache=False).logits  # no KV cache: no copies
        probs = torch.softmax(logits[:, -1].float(), dim=-1).cpu()
        for i, p in zip(rows, probs.tolist(), strict=True):
            out[i] = dict(zip(V.WORDS, p, strict=True))
    return out
