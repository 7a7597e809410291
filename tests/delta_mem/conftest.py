"""Shared test helpers for δ-Mem."""

import pytest
import torch


@pytest.fixture
def random_qwen3():
    """A factory of tiny randomly initialised Qwen3 (seeded; no downloads) for wrapper tests."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    def build(**overrides):
        torch.manual_seed(0)
        cfg = Qwen3Config(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            **{"max_position_embeddings": 64, **overrides},
        )
        return Qwen3ForCausalLM(cfg).eval()

    return build
