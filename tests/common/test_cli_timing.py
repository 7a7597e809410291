"""repro.common.cli (the step CLIs' ``--config`` and ``papers.<paper>`` section) and
repro.common.timing (interleaved calls and the best of several, on a scripted clock)."""

import pytest
import yaml

from repro.common.cli import paper_section, step_parser
from repro.common.timing import (
    best_time,
    cpu_clock,
    interleaved_times,
    ratio_of_minima,
    summary,
)
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


def test_interleaved_calls_alternate_after_untimed_warmup_rounds():
    order, ticks = [], iter(range(100))
    fns = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    times = interleaved_times(fns, 3, warmup=2, clock=lambda: next(ticks))
    assert order == ["a", "b"] * 5  # two untimed rounds, then three timed ones
    assert times == {"a": [1, 1, 1], "b": [1, 1, 1]}
    durations = iter([5.0, 1.0, 3.0, 2.0])  # a timer (e.g. CUDA events) replaces the clock
    times = interleaved_times(fns, 2, warmup=0, timer=lambda fn: (fn(), next(durations))[1])
    assert times == {"a": [5.0, 3.0], "b": [1.0, 2.0]}
    assert ratio_of_minima(times, "a", "b") == 3.0  # fastest a over fastest b
    with pytest.raises(ValueError, match="repeats"):
        interleaved_times(fns, 0)


def test_summary_and_the_clock_for_the_thread_count():
    assert summary([4.0, 1.0, 3.0, 2.0, 5.0]) == {
        "min_ms": 1.0, "q25_ms": 2.0, "median_ms": 3.0, "q75_ms": 4.0
    }  # fmt: skip
    assert cpu_clock(1)[1] == "process CPU time" and cpu_clock(4)[1] == "wall time"
