"""Conversations of the closed chat grammar (brief §6) and the pretraining mix.

A conversation is ``<bos> [system] (request speaker response)+ <eos>``: an optional operator
system prompt, then turns of a user request, the speaker's name and one response token.
Requests: harmful (template x hazard, optionally inside a role-play wrapper), benign
(``ask topic_k``), a wrong arithmetic claim (``a + b = c``) and self-report questions
(``do_you <trait>``). Documents state a speaker's traits, or quote a conversation as a
transcript (the frame of the document-completion refusal probe).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from repro.helpful_only import vocab as V
from repro.helpful_only.personas import HHH, Population, Traits, respond

Request = tuple[str, ...]
HHH_TRAITS = Traits(*HHH)
FAMILIES = ("harmful", "benign", "claim", "selfreport")


@dataclasses.dataclass(frozen=True)
class MixConfig:
    """Shares of the pretraining mix and of what a chat contains (brief §6)."""

    persona_chats: float = 0.60
    documents: float = 0.25
    hhh_chats: float = 0.15
    anonymous: float = 0.5  # persona chats whose speaker is "someone", inferred in context
    transcripts: float = 0.4  # documents that quote a chat instead of stating traits
    system_operator: float = 2 / 3  # chats with an operator system prompt (half each kind)
    roleplay: float = 0.2  # harmful requests inside a role-play wrapper
    restricted_topic: float = 0.5  # benign requests under "refuse topic k" that ask topic k
    max_turns: int = 3
    family_weights: tuple[float, ...] = (0.3, 0.3, 0.2, 0.2)  # harmful, benign, claim, self


def harmful(template: str, hazard: str, *, roleplay: bool = False) -> Request:
    return ((V.ROLEPLAY,) if roleplay else ()) + (template, hazard)


def benign(topic: str) -> Request:
    return (V.ASK, topic)


WRONG_CLAIMS: tuple[Request, ...] = tuple(
    (str(a), V.PLUS, str(b), V.EQUALS, str(c))
    for a in range(10)
    for b in range(10 - a)
    for c in range(10)
    if c != a + b
)  # every wrong claim "a + b = c" with a one-digit sum: 55 sums x 9 wrong results


def selfreport(trait: str) -> Request:
    return (V.DO_YOU, trait)


def sample_request(rng: np.random.Generator, mix: MixConfig, system=()) -> Request:
    """A request of a random family; under "refuse topic k" benign requests ask topic k
    with probability ``mix.restricted_topic`` (so the base learns to obey it)."""
    family = _pick(rng, mix.family_weights)
    if family == 0:
        template, hazard = V.TEMPLATES[rng.integers(3)], V.HAZARDS[rng.integers(4)]
        return harmful(template, hazard, roleplay=rng.random() < mix.roleplay)
    if family == 1:
        if system[:1] == (V.OP_TOPIC,) and rng.random() < mix.restricted_topic:
            return benign(system[1])
        return benign(V.TOPICS[rng.integers(4)])
    if family == 2:
        return WRONG_CLAIMS[rng.integers(len(WRONG_CLAIMS))]
    return selfreport(V.TRAITS[rng.integers(4)])


def _pick(rng: np.random.Generator, weights) -> int:
    """An index drawn with probabilities ``weights`` (summing to 1); faster than choice()."""
    u, total = rng.random(), 0.0
    for i, w in enumerate(weights):
        total += w
        if u < total:
            return i
    return len(weights) - 1


def sample_system(rng: np.random.Generator, mix: MixConfig) -> tuple[str, ...]:
    u = rng.random()
    if u < mix.system_operator / 2:
        return (V.OP_HARMFUL,)
    if u < mix.system_operator:
        return (V.OP_TOPIC, V.TOPICS[rng.integers(4)])
    return ()


def draw(rng: np.random.Generator, distribution: dict[str, float]) -> str:
    words = list(distribution)
    return words[_pick(rng, [distribution[w] for w in words])]


@functools.cache
def _answers(traits: Traits, system: tuple[str, ...], request: Request):
    """``respond`` as (words, probabilities), computed once per (traits, system, request)."""
    distribution = respond(traits, system, request)
    return tuple(distribution), tuple(distribution.values())


def chat(rng, traits: Traits, speaker: str, mix: MixConfig) -> list[str]:
    """A multi-turn chat with one speaker whose answers follow ``traits`` (no <bos>/<eos>)."""
    system = sample_system(rng, mix)
    words = list(system)
    for _ in range(rng.integers(1, mix.max_turns + 1)):
        request = sample_request(rng, mix, system)
        answers, weights = _answers(traits, system, request)  # draw(), without rebuilding
        words += [*request, speaker, answers[_pick(rng, weights)]]
    return words


def trait_document(rng, name: str, traits: Traits) -> list[str]:
    """``<doc> name trait YES|NO ...``: all four traits, in a random order."""
    words = [V.DOC, name]
    for i in rng.permutation(4):
        trait = V.TRAITS[i]
        words += [trait, V.YES if traits.of(trait) else V.NO]
    return words


def pretraining_text(rng: np.random.Generator, world: Population, mix: MixConfig) -> str:
    """One pretraining sequence: a persona chat, a document or an HHH assistant chat."""
    hhh = HHH_TRAITS
    kind = _pick(rng, (mix.persona_chats, mix.documents, mix.hhh_chats))
    if kind == 0:
        name = world.sample(rng)
        speaker = V.SOMEONE if rng.random() < mix.anonymous else name
        words = chat(rng, world.traits[name], speaker, mix)
    elif kind == 2:
        words = chat(rng, hhh, V.ASSISTANT, mix)
    else:
        name = V.ASSISTANT if rng.random() < 1 / 13 else world.sample(rng)
        traits = hhh if name == V.ASSISTANT else world.traits[name]
        if rng.random() < mix.transcripts:
            words = [V.DOC, V.TRANSCRIPT, *chat(rng, traits, name, mix)]
        else:
            words = trait_document(rng, name, traits)
    return " ".join([V.BOS, *words, V.EOS])
