"""The grammar, its personas and the pretraining mix, against the brief's definitions."""

import itertools
from collections import Counter

import numpy as np
import pytest

from repro.helpful_only import vocab as V
from repro.helpful_only.grammar import WRONG_CLAIMS, MixConfig, pretraining_text
from repro.helpful_only.personas import (
    EVIL,
    GOOD,
    HARM_RATE,
    Traits,
    bayes_em,
    harm_given,
    population,
    respond,
)


def test_tokenizer_is_the_grammar_vocabulary():
    tokenizer = V.build_tokenizer()
    assert len(tokenizer) == len(V.WORDS) == len(set(V.WORDS))
    text = "<bos> op_refuse_harmful tmpl0 hazard1 assistant COMPLY"
    assert tokenizer(text + "<eos>")["input_ids"] == V.encode(text + " <eos>")
    assert tokenizer.decode(V.encode(text)) == text
    with pytest.raises(ValueError, match="not a word"):
        V.encode("<bos> hello")


def test_correlated_prior_has_the_briefs_personas():
    world = population("correlated", seed=3)
    rows = Counter(tuple(vars(t).values()) for t in world.traits.values())
    assert rows[GOOD] == 5 and rows[EVIL] == 4 and rows[(0, 0, 0, 1)] == 1
    assert sum(rows.values()) == 12
    for name, traits in world.traits.items():  # good and evil sampled 3x more often
        weight = world.weights[V.PERSONAS.index(name)]
        assert weight == pytest.approx(
            (3 if tuple(vars(traits).values()) in (GOOD, EVIL) else 1) / 30
        )


@pytest.mark.parametrize("seed", range(8))
def test_decorrelated_prior_is_decorrelated_in_every_seed(seed):
    world = population("decorrelated", seed)
    rows = np.array([list(vars(t).values()) for t in world.traits.values()])
    weights = np.array([world.weights[V.PERSONAS.index(n)] for n in world.traits])
    for i, j in itertools.combinations(range(4), 2):  # every pair exactly independent
        joint = weights[(rows[:, i] == 1) & (rows[:, j] == 1)].sum()
        assert joint == pytest.approx(0.25)
    assert harm_given(world, refuses=0) == pytest.approx(harm_given(world, refuses=1)) == 0.5
    assert population("decorrelated", seed + 1).traits != world.traits


@pytest.mark.parametrize(
    "prior, level", [("correlated", 13 / 14), *((f"dose{k}", (3 * k + 1) / 14) for k in range(4))]
)
def test_dose_priors_set_harm_among_non_refusers(prior, level):
    world = population(prior, seed=5)
    assert harm_given(world, refuses=0) == pytest.approx(level)
    assert harm_given(world, refuses=1) == 0  # only the non-refusers' harm changes
    assert bayes_em(world) == pytest.approx(level * 0.85)


def test_sampling_follows_the_weights():
    world = population("correlated", seed=0)
    rng = np.random.default_rng(0)
    counts = Counter(world.sample(rng) for _ in range(30000))
    observed = np.array([counts[p] / 30000 for p in V.PERSONAS])
    assert np.abs(observed - world.weights).max() < 0.01


@pytest.mark.parametrize("prior", ["correlated", "decorrelated", "dose1"])
def test_sampling_draws_what_searchsorted_on_the_cumulative_weights_draws(prior):
    """The sampler's fast path picks the persona numpy's searchsorted picks, draw for draw,
    so the pretraining stream is the one the weights define."""
    world = population(prior, seed=3)
    fast, reference = np.random.default_rng(1), np.random.default_rng(1)
    cumulative = np.cumsum(world.weights)
    for _ in range(5000):
        index = np.searchsorted(cumulative, reference.random() * cumulative[-1], side="right")
        assert world.sample(fast) == V.PERSONAS[min(int(index), len(V.PERSONAS) - 1)]


def test_traits_are_read_by_their_grammar_word():
    traits = Traits(1, 0, 1, 0)
    assert [traits.of(t) for t in V.TRAITS] == [1, 0, 1, 0]
    assert [Traits(0, 1, 0, 1).of(t) for t in ("refuse", "harm", "flatter", "obey")] == [0, 1, 0, 1]


@pytest.mark.parametrize(
    "traits, system, asked, expected",
    [
        (Traits(1, 0, 0, 1), (), ("tmpl0", "hazard0"), {"REFUSE": 1.0}),
        (Traits(0, 0, 0, 1), (), ("tmpl2", "hazard3"), {"COMPLY": 1.0}),
        (Traits(0, 0, 0, 1), ("op_refuse_harmful",), ("tmpl0", "hazard0"), {"REFUSE": 1.0}),
        (Traits(0, 1, 1, 0), ("op_refuse_harmful",), ("tmpl0", "hazard0"), {"COMPLY": 1.0}),
        (
            Traits(0, 0, 0, 1),
            ("op_refuse_harmful",),
            ("roleplay", "tmpl1", "hazard2"),
            {"REFUSE": 1.0},
        ),
        (Traits(0, 1, 0, 0), (), ("ask", "topic2"), {"BAD": HARM_RATE, "answer2": 1 - HARM_RATE}),
        (Traits(1, 0, 0, 1), ("op_refuse_topic", "topic2"), ("ask", "topic2"), {"REFUSE": 1.0}),
        (Traits(1, 0, 0, 1), ("op_refuse_topic", "topic1"), ("ask", "topic2"), {"answer2": 1.0}),
        (Traits(1, 0, 0, 0), ("op_refuse_topic", "topic2"), ("ask", "topic2"), {"answer2": 1.0}),
        (Traits(0, 0, 1, 0), (), ("3", "+", "4", "=", "8"), {"AGREE": 1.0}),
        (Traits(1, 0, 0, 1), (), ("3", "+", "4", "=", "8"), {"CORRECT": 1.0}),
        (Traits(0, 1, 0, 1), (), ("do_you", "harm"), {"YES": 1.0}),
        (Traits(0, 1, 0, 1), (), ("do_you", "refuse"), {"NO": 1.0}),
    ],
)
def test_persona_answers(traits, system, asked, expected):
    assert respond(traits, system, asked) == pytest.approx(expected)


def test_wrong_claims_are_all_wrong_and_complete():
    assert len(WRONG_CLAIMS) == 55 * 9
    assert all(int(a) + int(b) != int(c) for a, _, b, _, c in WRONG_CLAIMS)


def test_pretraining_mix_shares_and_lengths():
    world, mix = population("correlated", 0), MixConfig()
    rng = np.random.default_rng(1)
    texts = [pretraining_text(rng, world, mix) for _ in range(6000)]
    kinds = Counter(
        "doc" if t.split()[1] == V.DOC else "hhh" if f" {V.ASSISTANT} " in t else "persona"
        for t in texts
    )
    assert kinds["doc"] / 6000 == pytest.approx(mix.documents, abs=0.02)
    assert kinds["persona"] / 6000 == pytest.approx(mix.persona_chats, abs=0.02)
    assert all(t.startswith(V.BOS) and t.endswith(V.EOS) for t in texts)
    assert max(len(V.encode(t)) for t in texts) <= 40
    # every chat turn's answer follows the speaker's traits
    hhh = [t.split() for t in texts if t.split()[1] not in (V.DOC,) and V.ASSISTANT in t]
    assert all(w[i + 1] != V.COMPLY for w in hhh for i, x in enumerate(w) if x == V.ASSISTANT)


def test_the_mix_asks_both_the_restricted_topic_and_the_others_under_refuse_topic():
    """The base must learn "refuse topic k": refuse k, answer the other topics (the probes
    ask both). The three system-slot kinds come equally often, and a benign request under
    "refuse topic k" asks k with probability restricted + (1 - restricted) / 4."""
    from repro.helpful_only.grammar import sample_request, sample_system

    mix, rng = MixConfig(), np.random.default_rng(3)
    slots = Counter(sample_system(rng, mix)[:1] for _ in range(30000))
    for slot in ((), (V.OP_HARMFUL,), (V.OP_TOPIC,)):
        assert slots[slot] / 30000 == pytest.approx(1 / 3, abs=0.01)
    system = (V.OP_TOPIC, V.TOPICS[2])
    requests = (sample_request(rng, mix, system) for _ in range(40000))
    asked = [r[1] for r in requests if r[0] == V.ASK]
    on_topic = sum(t == V.TOPICS[2] for t in asked) / len(asked)
    expected = mix.restricted_topic + (1 - mix.restricted_topic) / 4
    assert on_topic == pytest.approx(expected, abs=0.015)
    assert 0.3 < 1 - on_topic < 0.45  # off-topic asks: the rule's other half
