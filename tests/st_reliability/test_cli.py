"""Every step a rule runs is also a command: ``python -m repro.st_reliability.<step> --help``."""

import pytest

from tests.conftest import assert_steps_answer_help

STEPS = (
    "prepare",
    "train",
    "evaluate",
    "summarize",
    "figures",
    "claims",
    "swap_control",
    "se_embed",
)


def test_every_step_answers_help():
    assert_steps_answer_help("st_reliability", STEPS)


def test_public_api_imports_lazily():
    import repro.st_reliability as paper

    assert paper.TITLE == "ST reliability"
    assert set(paper.__all__) <= set(dir(paper))
    assert callable(paper.predicted_nn_distance) and callable(paper.loo_threshold_transfer)
    with pytest.raises(AttributeError):
        paper.not_exported  # noqa: B018
