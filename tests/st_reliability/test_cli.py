"""Every step a rule runs is also a command: ``python -m repro.st_reliability.<step> --help``."""

import importlib

import pytest

STEPS = ("prepare", "train", "evaluate", "summarize", "figures", "claims")


@pytest.mark.parametrize("step", STEPS)
def test_step_has_help(step, capsys):
    module = importlib.import_module(f"repro.st_reliability.{step}")
    with pytest.raises(SystemExit) as exit_:
        module.main(["--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_public_api_imports_lazily():
    import repro.st_reliability as paper

    assert paper.TITLE == "ST reliability"
    assert set(paper.__all__) <= set(dir(paper))
    assert callable(paper.predicted_nn_distance) and callable(paper.loo_threshold_transfer)
    with pytest.raises(AttributeError):
        paper.not_exported  # noqa: B018
