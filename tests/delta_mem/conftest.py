"""Shared test helpers for δ-Mem."""

import pytest
import torch


@pytest.fixture
def random_qwen3():
    """A factory of tiny randomly initialised Qwen3 (seeded; no downloads) for wrapper tests."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    def build(**overrides):
        torch.manual_seed(0)
        sizes = dict(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            max_position_embeddings=64,
        )
        cfg = Qwen3Config(**(sizes | overrides))
        return Qwen3ForCausalLM(cfg).eval()

    return build


@pytest.fixture
def word_qwen3(random_qwen3):
    """A factory: a tiny random Qwen3 with a word-level tokenizer over ``words``."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    def build(words):
        vocab = {w: i for i, w in enumerate(["[UNK]", "[PAD]", "[EOS]", *words])}
        raw = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
        )
        model = random_qwen3(
            vocab_size=max(64, len(vocab)),
            max_position_embeddings=512,
            eos_token_id=2,
            pad_token_id=1,
        )
        return model, tokenizer

    return build
