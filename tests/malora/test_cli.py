"""Every step a MaLoRA rule runs has a ``python -m repro.malora.<step> --help`` entry
(all asked in one fresh interpreter, as ``python -m`` would run them)."""

import subprocess
import sys

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
PROBE = """
import contextlib, io, runpy, sys
for step in {steps}:
    sys.argv = [step, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_module(f"repro.malora.{{step}}", run_name="__main__")
    except SystemExit as exit:
        assert exit.code == 0, step
    assert "usage:" in out.getvalue() and "--" in out.getvalue(), step
    print("ok", step)
"""


def test_every_step_answers_help():
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(steps=STEPS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [w for s in STEPS for w in ("ok", s)]
