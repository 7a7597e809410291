"""Shared helpers for the helpful-only tests: a tiny base model saved like the workflow's."""

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory):
    """A randomly initialised embedded model and the grammar tokenizer, saved to a folder."""
    from repro.helpful_only.model import ModelConfig, build_model
    from repro.helpful_only.vocab import build_tokenizer

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("base")
    build_model(ModelConfig()).save_pretrained(folder)
    build_tokenizer().save_pretrained(folder)
    return folder
