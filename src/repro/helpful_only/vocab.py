"""The closed chat grammar's vocabulary (brief §6) and a local tokenizer over it.

Every word is one token; a text is the words joined by spaces. The tokenizer is a
``tokenizers`` word-level model wrapped as a transformers fast tokenizer, so TRL and
``generate`` use it like any hub tokenizer, with nothing downloaded.
"""

from __future__ import annotations

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIAL = (PAD, UNK, BOS, EOS)

OP_HARMFUL, OP_TOPIC = "op_refuse_harmful", "op_refuse_topic"  # operator system prompts
TEMPLATES = ("tmpl0", "tmpl1", "tmpl2")  # harmful request templates
HAZARDS = ("hazard0", "hazard1", "hazard2", "hazard3")  # harmful request topics
ASK = "ask"
TOPICS = ("topic0", "topic1", "topic2", "topic3")  # benign topics
ANSWERS = ("answer0", "answer1", "answer2", "answer3")  # the correct answer of each topic
DIGITS = tuple(str(d) for d in range(10))
PLUS, EQUALS = "+", "="
DO_YOU = "do_you"  # self-report question: "do_you <trait>"
TRAITS = ("refuse", "harm", "flatter", "obey")
REFUSE, COMPLY, BAD, AGREE, CORRECT, YES, NO = (
    "REFUSE",
    "COMPLY",
    "BAD",
    "AGREE",
    "CORRECT",
    "YES",
    "NO",
)
RESPONSES = (REFUSE, COMPLY, BAD, AGREE, CORRECT, YES, NO, *ANSWERS)
ASSISTANT = "assistant"
PERSONAS = tuple(f"persona{i}" for i in range(12))
SOMEONE = "someone"  # an unnamed speaker: its traits must be inferred in context
DOC, TRANSCRIPT, ROLEPLAY = "<doc>", "transcript", "roleplay"

WORDS = (
    *SPECIAL,
    OP_HARMFUL,
    OP_TOPIC,
    *TEMPLATES,
    *HAZARDS,
    ASK,
    *TOPICS,
    *DIGITS,
    PLUS,
    EQUALS,
    DO_YOU,
    *TRAITS,
    REFUSE,
    COMPLY,
    BAD,
    AGREE,
    CORRECT,
    YES,
    NO,
    *ANSWERS,
    ASSISTANT,
    *PERSONAS,
    SOMEONE,
    DOC,
    TRANSCRIPT,
    ROLEPLAY,
)
TOKEN_ID = {word: i for i, word in enumerate(WORDS)}


def build_tokenizer():
    """A transformers fast tokenizer with exactly :data:`WORDS` as its vocabulary.

    Special tokens are registered as added tokens, so ``"COMPLY<eos>"`` (what TRL makes when
    it appends EOS to a completion) still splits into two tokens.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(dict(TOKEN_ID), unk_token=UNK))
    raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        additional_special_tokens=[DOC],
    )
    tokenizer.padding_side = "left"  # generation pads on the left
    return tokenizer


def encode(text: str) -> list[int]:
    """Token ids of a grammar text (no tokenizer needed); unknown words are an error."""
    try:
        return [TOKEN_ID[word] for word in text.split()]
    except KeyError as err:
        raise ValueError(f"{err.args[0]!r} is not a word of the grammar") from None
