"""The figure lint on every figure of the config/test.yaml DAG (the session's ``test_run``).

``save_figure`` lints each figure as the report shows it and writes the findings beside the
PNG; here every figure of the run must have them, and every finding must be allowed, with
its reason, in ``repro.common.figure_lint_allowed`` (an allowance no figure needs any more
fails too, so the list only shrinks). The checks themselves are tested on planted defects in
``tests/common/test_figure_lint.py``.
"""

from __future__ import annotations

import pytest

from repro.common.figure_lint_check import collect, judge, unlinted

pytestmark = pytest.mark.workflow


def test_every_figure_of_the_run_passes_the_figure_lint(test_run):
    found = collect(test_run)
    assert len(found) >= 8, f"too few figures linted: {sorted(found)}"
    assert not unlinted(test_run), "figures not saved through save_figure"
    verdict = judge(found)
    assert not verdict.unexpected, "\n".join(["findings to fix:", *verdict.unexpected])
    assert not verdict.stale, "\n".join(["allowances to remove:", *verdict.stale])
