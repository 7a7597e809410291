"""Synthetic key–value dialogue (brief §6): facts [k v] and filler turns, then a query [Q k*].

Vocabulary: PAD, BOS, Q, 16 keys, 16 values, 16 fillers (51 tokens). A history has
max(min_turns, n_facts) two-token turns, n_facts of them facts (distinct keys) at random
places and the rest filler pairs. An overwrite episode appends one turn that re-assigns a
fact's key to a new value, and its query always asks for that key (answer: the new value).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

PAD, BOS, Q = 0, 1, 2
N_KEYS = N_VALUES = N_FILLERS = 16
KEY0, VALUE0, FILLER0 = 3, 3 + N_KEYS, 3 + N_KEYS + N_VALUES
VOCAB = FILLER0 + N_FILLERS


@dataclasses.dataclass
class Batch:
    history: torch.Tensor  # (B, H) BOS + turns, right-padded with PAD
    history_mask: torch.Tensor  # (B, H) True = real token
    query: torch.Tensor  # (B, 3) BOS Q k*
    full: torch.Tensor  # (B, F) history + Q k*, right-padded
    full_last: torch.Tensor  # (B,) index of k* in ``full`` (where the answer is predicted)
    answer: torch.Tensor  # (B,) v*
    stale: torch.Tensor  # (B,) the overwritten value, or -1
    overwrite: torch.Tensor  # (B,) bool


def episode(rng: np.random.Generator, n_facts: int, overwrite: bool, min_turns: int = 6):
    """(history tokens, query key, answer, stale value or -1) of one episode."""
    n_turns = max(min_turns, n_facts)
    keys = KEY0 + rng.choice(N_KEYS, size=n_facts, replace=False)
    values = VALUE0 + rng.integers(N_VALUES, size=n_facts)
    # one draw for every filler: the same numbers as one two-token draw per turn (a range of
    # 16 never rejects, so each 64-bit draw yields two tokens either way; tested)
    turns = FILLER0 + rng.integers(N_FILLERS, size=(n_turns, 2))
    slots = rng.choice(n_turns, size=n_facts, replace=False)
    turns[slots, 0], turns[slots, 1] = keys, values
    target = int(rng.integers(n_facts))
    key, answer, stale = int(keys[target]), int(values[target]), -1
    history = [BOS, *turns.ravel().tolist()]
    if overwrite:
        stale = answer
        answer = VALUE0 + int((answer - VALUE0 + 1 + rng.integers(N_VALUES - 1)) % N_VALUES)
        history += [key, answer]
    return history, key, answer, stale


def _pad(rows: list[list[int]]) -> torch.Tensor:
    out = np.full((len(rows), max(map(len, rows))), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out)


def make_batch(
    rng: np.random.Generator,
    size: int,
    n_facts: tuple[int, int] | int,
    *,
    overwrite: float | bool = 0.0,
    min_turns: int = 6,
) -> Batch:
    """``n_facts``: a fixed count or an inclusive (low, high) range sampled per episode;
    ``overwrite``: the probability of an overwrite episode (True/False: all or none)."""
    low, high = (n_facts, n_facts) if isinstance(n_facts, int) else n_facts
    counts = rng.integers(low, high + 1, size=size)
    flags = rng.random(size) < float(overwrite)
    episodes = [
        episode(rng, int(n), bool(o), min_turns) for n, o in zip(counts, flags, strict=True)
    ]
    history = _pad([h for h, *_ in episodes])
    full_rows = [h + [Q, k] for h, k, *_ in episodes]
    return Batch(
        history=history,
        history_mask=history != PAD,
        query=torch.tensor([[BOS, Q, k] for _, k, *_ in episodes]),
        full=_pad(full_rows),
        full_last=torch.tensor([len(r) - 1 for r in full_rows]),
        answer=torch.tensor([a for *_, a, _ in episodes]),
        stale=torch.tensor([s for *_, s in episodes]),
        overwrite=torch.tensor(flags),
    )
