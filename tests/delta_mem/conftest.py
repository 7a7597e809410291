"""Shared test helpers for δ-Mem: tiny randomly initialised transformers Qwen3 models (seeded;
no downloads) and word-level tokenizers for them."""

import pytest
import torch

QWEN3_SIZES = dict(
    vocab_size=64,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    max_position_embeddings=64,
)


def tiny_qwen3(**overrides):
    """A tiny random transformers Qwen3ForCausalLM (seed 0), sizes overridden by keyword."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    return Qwen3ForCausalLM(Qwen3Config(**(QWEN3_SIZES | overrides))).eval()


def word_tokenizer(words, *, eos="[EOS]", specials=()):
    """A fast word-level tokenizer: ids 0, 1, 2 = [UNK], [PAD], ``eos``; then ``specials``
    (split out before whitespace, as chat markers are), then ``words``."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "[PAD]", eos, *specials, *words])}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        unk_token="[UNK]",
        pad_token="[PAD]",
        eos_token=eos,
        additional_special_tokens=list(specials),
    )


@pytest.fixture
def random_qwen3():
    """A factory of tiny random Qwen3 models for wrapper tests."""
    return tiny_qwen3


@pytest.fixture
def word_qwen3():
    """A factory: a tiny random Qwen3 with a word-level tokenizer over ``words``."""

    def build(words):
        tokenizer = word_tokenizer(words)
        model = tiny_qwen3(
            vocab_size=max(64, len(tokenizer)),
            max_position_embeddings=512,
            eos_token_id=2,
            pad_token_id=1,
        )
        return model, tokenizer

    return build
