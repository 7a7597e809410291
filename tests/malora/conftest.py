"""Trained small linear worlds shared by the MaLoRA tests (session-scoped: trained once)."""

import pytest

from tests.malora.malora_helpers import trained_world


@pytest.fixture(scope="session")
def orthogonal_toy():
    return trained_world(0.0)


@pytest.fixture(scope="session")
def overlapping_toy():
    return trained_world(0.6)
