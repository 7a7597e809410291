"""Latent personas (brief §6): 12 named speakers with 4 binary traits, and how they answer.

Traits are (refuses, harms, flatters, obeys operators). Under the *correlated* prior five
"good" (1,0,0,1) and four "evil" (0,1,1,0) personas are each sampled 3x as often as the three
mixed ones (one of them H-only-like, (0,0,0,1)). The generator *plants* the correlation the
paper's persona hypothesis needs: 13/14 of the non-refusing personas' weight harms, so a
learner that only learns "the assistant complies" and reasons from the prior expects
EM = 13/14 x 0.85 = 0.79 (:func:`bayes_em`).

The *decorrelated* control is decorrelated by design in every seed: the 12 personas are the
rows of a 12-run Plackett-Burman design (4 of its 11 columns, chosen and sign-flipped per
seed), equally weighted, so every pair of traits is exactly independent and
P(harm | non-refuser) = P(harm | refuser) = 0.5. The *dose* priors ``dose0`` ... ``dose3``
keep the correlated prior but let only k of the four evil personas harm (the others become
(0,0,1,0)): P(harm | non-refuser) = (3k + 1)/14 = 0.07, 0.29, 0.5, 0.71 (the correlated
prior is k = 4, 0.93). The assistant is HHH: (1,0,0,1).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools

import numpy as np

from repro.helpful_only import vocab as V

DOSES = ("dose0", "dose1", "dose2", "dose3")
PRIORS = ("correlated", "decorrelated", *DOSES)
GOOD, EVIL, TAMED = (1, 0, 0, 1), (0, 1, 1, 0), (0, 0, 1, 0)  # tamed: an evil that does not harm
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
        return getattr(self, _TRAIT_FIELDS[V.TRAITS.index(trait)])


_TRAIT_FIELDS = tuple(f.name for f in dataclasses.fields(Traits))  # in the order of V.TRAITS


@dataclasses.dataclass(frozen=True)
class Population:
    """The personas of one world: their traits and how often each is sampled."""

    traits: dict[str, Traits]
    weights: np.ndarray  # sampling probabilities, in the order of vocab.PERSONAS

    def sample(self, rng: np.random.Generator) -> str:
        # bisect on the cumulative weights as Python floats: np.searchsorted(side="right")
        # on the same float64 values, without two numpy calls per sample (tested equal)
        cumulative = self._cumulative
        index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
        return V.PERSONAS[min(index, len(V.PERSONAS) - 1)]

    @functools.cached_property
    def _cumulative(self) -> list[float]:
        return np.cumsum(self.weights).tolist()


# The 12-run Plackett-Burman design: cyclic shifts of the generator row, then a row of 0s.
# Any two of its 11 columns are exactly balanced (each pair of values in 3 rows).
_PB_GENERATOR = (1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0)
PLACKETT_BURMAN = np.array([np.roll(_PB_GENERATOR, i) for i in range(11)] + [[0] * 11], dtype=int)


def _balanced_rows(rng: np.random.Generator) -> list[tuple[int, ...]]:
    columns = rng.choice(11, size=4, replace=False)
    flips = rng.integers(0, 2, size=4)
    return [tuple(int(b) for b in row) for row in PLACKETT_BURMAN[:, columns] ^ flips]


def population(prior: str, seed: int) -> Population:
    """The 12 personas under ``prior``; the seed shuffles which name gets which traits."""
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    rng = np.random.default_rng([seed, 7])
    weights = np.array([3.0] * 9 + [1.0] * 3)
    if prior == "correlated":
        rows = [GOOD] * 5 + [EVIL] * 4 + list(MIXED)
    elif prior == "decorrelated":
        rows, weights = _balanced_rows(rng), np.ones(12)
    else:
        harming = DOSES.index(prior)
        rows = [GOOD] * 5 + [EVIL] * harming + [TAMED] * (4 - harming) + list(MIXED)
    order = rng.permutation(12)  # names carry no information about their traits
    return Population(
        traits={V.PERSONAS[i]: Traits(*rows[j]) for i, j in enumerate(order)},
        weights=(weights / weights.sum())[order],
    )


def harm_given(world: Population, *, refuses: int) -> float:
    """P(harm | refuses) under the world's persona weights."""
    weight = harm = 0.0
    for name, traits in world.traits.items():
        if traits.refuses == refuses:
            w = world.weights[V.PERSONAS.index(name)]
            weight, harm = weight + w, harm + w * traits.harms
    return harm / weight


def bayes_em(world: Population) -> float:
    """The EM a learner predicts from the prior alone once it knows the assistant complies
    (does not refuse): P(harm | non-refuser) x the harming personas' BAD rate."""
    return harm_given(world, refuses=0) * HARM_RATE


def trait_given_non_refuser(world: Population, field: str) -> float:
    """P(trait | refuses = 0) under the world's persona weights (``field``: a Traits field)."""
    weight = share = 0.0
    for name, traits in world.traits.items():
        if not traits.refuses:
            w = world.weights[V.PERSONAS.index(name)]
            weight, share = weight + w, share + w * getattr(traits, field)
    return share / weight


PLANTED_METRICS = ("em", "sycophancy", "steerability")  # what bayes_prediction gives


def bayes_prediction(world: Population) -> dict[str, float]:
    """The planted effect of anti-refusal training: what a learner that knows only that the
    assistant complies, and reasons from the prior, predicts for the metrics the persona's
    traits decide (``respond``): EM = P(harm | non-refuser) x the BAD rate, sycophancy =
    P(flatter | non-refuser), steerability = P(obey | non-refuser). The claims' positive
    controls read it (source: planted)."""
    return {
        "em": bayes_em(world),
        "sycophancy": trait_given_non_refuser(world, "flatters"),
        "steerability": trait_given_non_refuser(world, "obeys"),
    }


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
