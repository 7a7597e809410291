"""Every step a rule runs is also a command: ``python -m repro.r3_adapter.<step> --help``;
the package exports its public API lazily (the config check imports it at DAG time)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

STEPS = ["prepare", "pretrain", "train", "evaluate", "figures", "claims", "fullrun"]


@pytest.mark.parametrize("step", STEPS)
def test_step_has_a_help(step, capsys):
    module = importlib.import_module(f"repro.r3_adapter.{step}")
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_package_exports_without_importing_torch():
    code = (
        "import sys, repro.r3_adapter as r, repro.r3_adapter.configcheck\n"
        "assert 'torch' not in sys.modules, 'the DAG-time import pulled in torch'\n"
        "from repro.r3_adapter import build_method, RelationalConfig, make_scenes\n"
        "assert RelationalConfig().candidates == 6 and callable(build_method)\n"
        "print(r.TITLE)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3R-Adapter"
