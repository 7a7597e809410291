"""Every step a MaLoRA rule runs has a ``python -m repro.malora.<step> --help`` entry."""

from tests.conftest import assert_steps_answer_help

STEPS = [
    "sweep",
    "linear_merge",
    "digits_study",
    "evaluate",
    "figures",
    "claims",
    "nli_data",
    "fullscale",
]


def test_every_step_answers_help():
    usage = assert_steps_answer_help("malora", STEPS)
    assert all("--" in text for text in usage.values())
