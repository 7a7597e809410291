"""Every step a rule runs is also a command: ``python -m repro.r3_adapter.<step> --help``;
the package exports its public API lazily (the config check imports it at DAG time)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import assert_steps_answer_help

STEPS = ["prepare", "pretrain", "train", "evaluate", "figures", "claims", "fullrun",
         "fullrun code", "fullrun pairs", "fullrun run", "fullrun summary"]  # fmt: skip


def test_every_step_answers_help():
    assert_steps_answer_help("r3_adapter", STEPS)


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
