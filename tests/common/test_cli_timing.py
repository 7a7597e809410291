"""repro.common.cli (the step CLIs' ``--config`` and ``papers.<paper>`` section) and
repro.common.timing (best of several calls, on a scripted clock)."""

import pytest
import yaml

from repro.common.cli import paper_section, step_parser
from repro.common.timing import best_time
from tests.conftest import ROOT


def test_paper_section_is_the_configs_section(tmp_path):
    config = ROOT / "config" / "test.yaml"
    expected = yaml.safe_load(config.read_text())["papers"]["sbd"]
    assert paper_section(str(config), "sbd") == expected
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump({"papers": {"plsa": {"enabled": True}}}))
    with pytest.raises(SystemExit, match=r"no papers\.sbd section"):
        paper_section(str(path), "sbd")
    with pytest.raises(SystemExit, match="--config is required"):
        paper_section(None, "sbd")


def test_step_parser_requires_config_unless_told(capsys):
    with pytest.raises(SystemExit) as done:
        step_parser("x", paper="sbd").parse_args([])
    assert done.value.code == 2 and "--config" in capsys.readouterr().err
    assert step_parser("x", paper="plsa", required=False).parse_args([]).config is None
    assert step_parser("x", paper="plsa").parse_args(["--config", "c.yaml"]).config == "c.yaml"
    assert "papers.plsa" in step_parser("x", paper="plsa").format_help()


def test_best_time_is_the_fastest_timed_call():
    ticks = iter([0.0, 3.0, 3.0, 4.0, 4.0, 6.0])  # calls of 3, 1 and 2 seconds
    calls = []
    assert best_time(lambda: calls.append(1), 3, clock=lambda: next(ticks)) == 1.0
    assert len(calls) == 3
    ticks = iter([10.0, 15.0])
    assert best_time(lambda: calls.append(1), 1, warmup=True, clock=lambda: next(ticks)) == 5.0
    assert len(calls) == 5  # the warm-up call is not timed
