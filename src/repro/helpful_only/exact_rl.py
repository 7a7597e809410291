"""The brief's exact RL variant: the expected reward over the single response token.

For a prompt x with rewarded word t, the objective is

    J(x) = sum_a pi(a|x) r(a) - beta * KL(pi(.|x) || pi_ref(.|x)),   r(a) = 1[a = t],

computed exactly from the softmax over the vocabulary (no sampling). Its gradient is what
RLOO's sampled loss estimates without bias (leave-one-out baseline, KL folded into the
reward), so the two are tested against each other. Same optimiser as the TRL trainers:
AdamW at a constant rate, no weight decay, gradient norm clipped at 1.
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from repro.helpful_only import vocab as V

log = logging.getLogger(__name__)


def _last_logprobs(model, prompts: list[str]) -> torch.Tensor:
    """log pi(. | prompt) at the response position, (len(prompts), vocab), batched by length."""
    device = next(model.parameters()).device
    out = [None] * len(prompts)
    by_length: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_length.setdefault(len(p.split()), []).append(i)
    for rows in by_length.values():
        ids = torch.tensor([V.encode(prompts[i]) for i in rows], device=device)
        logits = model(input_ids=ids, use_cache=False).logits
        logp = torch.log_softmax(logits[:, -1].float(), dim=-1)
        for i, row in zip(rows, logp, strict=True):
            out[i] = row
    return torch.stack(out)


def target_rewards(targets: list[str]) -> torch.Tensor:
    """r(x, a) over the vocabulary, one row per prompt: 1 for the target word, else 0."""
    rewards = torch.zeros(len(targets), len(V.WORDS))
    rewards[torch.arange(len(targets)), [V.TOKEN_ID[t] for t in targets]] = 1.0
    return rewards


def expected_objective(model, ref_model, prompts: list[str], rewards: torch.Tensor, beta: float):
    """Mean over prompts of the exact J(x), with ``rewards`` r(x, a) as (prompts, vocab)."""
    logp = _last_logprobs(model, prompts)
    with torch.no_grad():
        ref = _last_logprobs(ref_model, prompts)
    p = logp.exp()
    kl = (p * (logp - ref)).sum(-1)
    return ((p * rewards.to(p.device)).sum(-1) - beta * kl).mean()


def train_exact(
    model, ref_model, prompts: list[str], targets: list[str], cfg, *, measure=None, name="exact"
) -> list[dict]:
    """Ascend the exact objective for ``cfg.steps`` steps of ``batch_size / num_generations``
    prompts each (the prompts RLOO would see per step), in order; returns (curve, (steps,
    sequences)), sequences counted as RLOO's: num_generations per prompt."""
    per_step = cfg.batch_size // cfg.num_generations
    if len(prompts) < cfg.steps * per_step:
        raise ValueError(f"{len(prompts)} prompts for {cfg.steps} steps of {per_step}")
    optim = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0, foreach=True)
    ref_model.eval()
    model.train()
    curve = [{"step": 0, **measure(model)}] if measure else []
    recent, done = [], 0
    for step in range(1, cfg.steps + 1):
        rows = slice((step - 1) * per_step, step * per_step)
        rewards = target_rewards(targets[rows])
        objective = expected_objective(model, ref_model, prompts[rows], rewards, cfg.beta)
        optim.zero_grad(set_to_none=True)
        (-objective).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        done += 1
        recent.append(objective.item())
        if step % cfg.log_every == 0 or step == cfg.steps:
            log.info("%s step %d/%d: objective=%.4g", name, step, cfg.steps, np.mean(recent))
            recent = []
        if measure and (step % cfg.curve_every == 0 or step == cfg.steps):
            curve.append({"step": step, **measure(model)})
            model.train()
    model.eval()
    return curve, (done, done * per_step * cfg.num_generations)
