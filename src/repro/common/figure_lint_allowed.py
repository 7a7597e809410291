"""Figures allowed to fail a check of the figure lint for now, each with the reason; to be
emptied by each paper's figure fixes (``repro.common.figure_lint_check`` fails on an entry
that no longer occurs, so the list only shrinks).

Keys are ``<paper>/<figure name>`` (shell-style patterns allowed), values ``{check: why}``
with the checks of ``repro.common.figure_lint.CHECKS``.
"""

# Tables drawn for the paper's PDF; the report shows them as HTML tables instead.
_TABLE_IMAGE = {"small_text": "a table's image, not in the report (its HTML table is)"}

ALLOWED: dict[str, dict[str, str]] = {
    name: _TABLE_IMAGE for name in ("malora/table", "qsurv/metrics_table", "r3_adapter/table")
}
