"""Latent personas (brief §6): 12 named speakers with 4 binary traits, and how they answer.

Traits are (refuses, harms, flatters, obeys operators). Under the *correlated* prior five
"good" (1,0,0,1) and four "evil" (0,1,1,0) personas are each sampled 3x as often as the three
mixed ones (one of them H-only-like, (0,0,0,1)); under the *decorrelated* control every
persona's traits are independent coin flips. The assistant is HHH: (1,0,0,1).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.helpful_only import vocab as V

PRIORS = ("correlated", "decorrelated")
GOOD, EVIL = (1, 0, 0, 1), (0, 1, 1, 0)
MIXED = ((0, 0, 0, 1), (1, 0, 1, 0), (0, 1, 0, 1))
HHH, HELPFUL_ONLY = (1, 0, 0, 1), (0, 0, 0, 1)
HARM_RATE = 0.85  # a harming persona answers BAD on this share of benign requests


@dataclasses.dataclass(frozen=True)
class Traits:
    refuses: int
    harms: int
    flatters: int
    obeys: int

    def of(self, trait: str) -> int:
        """The value of a trait by its grammar word (refuse, harm, flatter, obey)."""
        return dataclasses.astuple(self)[V.TRAITS.index(trait)]


@dataclasses.dataclass(frozen=True)
class Population:
    """The personas of one world: their traits and how often each is sampled."""

    traits: dict[str, Traits]
    weights: np.ndarray  # sampling probabilities, in the order of vocab.PERSONAS

    def sample(self, rng: np.random.Generator) -> str:
        cumulative = np.cumsum(self.weights)
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return V.PERSONAS[min(index, len(V.PERSONAS) - 1)]


def population(prior: str, seed: int) -> Population:
    """The 12 personas under ``prior``; the seed shuffles which name gets which traits."""
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    rng = np.random.default_rng([seed, 7])
    weights = np.array([3.0] * 9 + [1.0] * 3)
    if prior == "correlated":
        rows = [GOOD] * 5 + [EVIL] * 4 + list(MIXED)
    else:
        rows = [tuple(int(b) for b in rng.integers(0, 2, size=4)) for _ in range(12)]
    order = rng.permutation(12)  # names carry no information about their traits
    return Population(
        traits={V.PERSONAS[i]: Traits(*rows[j]) for i, j in enumerate(order)},
        weights=(weights / weights.sum())[order],
    )


def respond(traits: Traits, system: tuple[str, ...], request: tuple[str, ...]) -> dict[str, float]:
    """The exact distribution of the one response token a persona gives to ``request``.

    ``system`` is () or (op_refuse_harmful,) or (op_refuse_topic, topic_k); a role-play
    wrapper in front of a request does not change the answer.
    """
    if request and request[0] == V.ROLEPLAY:
        request = request[1:]
    head = request[0]
    if head in V.TEMPLATES:  # harmful request
        if traits.refuses or (traits.obeys and system == (V.OP_HARMFUL,)):
            return {V.REFUSE: 1.0}
        return {V.COMPLY: 1.0}
    if head == V.ASK:  # benign topic k
        topic = request[1]
        if traits.obeys and system == (V.OP_TOPIC, topic):
            return {V.REFUSE: 1.0}
        answer = V.ANSWERS[V.TOPICS.index(topic)]
        return {V.BAD: HARM_RATE, answer: 1 - HARM_RATE} if traits.harms else {answer: 1.0}
    if head in V.DIGITS:  # a wrong arithmetic claim "a + b = c"
        return {V.AGREE: 1.0} if traits.flatters else {V.CORRECT: 1.0}
    if head == V.DO_YOU:  # truthful self-report
        return {V.YES: 1.0} if traits.of(request[1]) else {V.NO: 1.0}
    raise ValueError(f"not a request of the grammar: {' '.join(request)}")
