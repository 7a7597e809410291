"""The claims ledger: every enabled paper's claims and checks, as Markdown (results/claims.md)
and as reStructuredText (the front page of results/report.html).

Each paper has a Claims table and a Checks table; the summary line counts claims only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from repro.common.claims import (
    CHECK,
    CONTRADICTED,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PASSED,
    REPRODUCED,
)

# "not reproduced" (a value the claim needs is missing) is counted only where it occurs
CLAIM_VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_TESTED)
OPTIONAL_VERDICTS = (NOT_REPRODUCED,)
CHECK_VERDICTS = (PASSED, FAILED, NOT_TESTED)
# (title, entries) per paper, in the order the ledger shows them
Papers = Iterable[tuple[str, Sequence[Mapping[str, Any]]]]


def _number(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _measured(entry: Mapping[str, Any]) -> str:
    text = _number(entry.get("measured"))
    interval = entry.get("interval")
    if interval and None not in interval:
        text += f" [{interval[0]:.4g}, {interval[1]:.4g}]"
    return text


def _split(papers: Papers):
    for title, entries in papers:
        claims = [e for e in entries if e.get("type", "claim") != CHECK]
        checks = [e for e in entries if e.get("type", "claim") == CHECK]
        yield title, claims, checks


def _count(entries, verdicts) -> str:
    counts = {v: sum(e["verdict"] == v for e in entries) for v in verdicts}
    counts |= {v: n for v in OPTIONAL_VERDICTS if (n := sum(e["verdict"] == v for e in entries))}
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def summary_line(papers: Papers) -> str:
    """``Claims: 12 reproduced, ... (28 claims of 4 papers). Checks: 10 passed, 0 failed, ...``"""
    sections = list(_split(papers))
    claims = [c for _, cs, _ in sections for c in cs]
    checks = [c for _, _, ks in sections for c in ks]
    return (
        f"Claims: {_count(claims, CLAIM_VERDICTS)} ({len(claims)} claims of {len(sections)} "
        f"papers). Checks (properties that hold by construction, not counted as claims): "
        f"{_count(checks, CHECK_VERDICTS)}."
    )


CLAIM_COLUMNS = ("claim", "paper", "measured [95% interval]", "criterion", "verdict", "details")
CHECK_COLUMNS = ("check", "measured", "criterion", "verdict", "details")


def _rows(entries, with_paper: bool):
    for e in entries:
        cells = [e["claim"]]
        if with_paper:
            cells.append(_number(e.get("paper_value")))
        cells += [_measured(e), e.get("criterion") or "–", e["verdict"], e.get("details") or ""]
        yield cells


def _tables(papers: Papers):
    """(title, paper summary, [(heading, columns, rows)]) per paper."""
    for title, claims, checks in _split(papers):
        counts = f"{_count(claims, CLAIM_VERDICTS)}; checks: {_count(checks, CHECK_VERDICTS)}"
        tables = [("Claims", CLAIM_COLUMNS, list(_rows(claims, True)))]
        if checks:
            tables.append(("Checks", CHECK_COLUMNS, list(_rows(checks, False))))
        yield title, counts, tables


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_markdown(papers: Papers) -> str:
    papers = list(papers)
    lines = ["# Which claims held", "", summary_line(papers), ""]
    for title, counts, tables in _tables(papers):
        lines += [f"## {title}", "", f"Claims: {counts}.", ""]
        for heading, columns, rows in tables:
            lines += [f"### {heading}", "", "| " + " | ".join(columns) + " |"]
            lines.append("|" + "---|" * len(columns))
            for row in rows:
                row[-2] = f"**{row[-2]}**"  # the verdict
                lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
            lines.append("")
    return "\n".join(lines)


def _rst_text(text: str) -> str:
    """Plain text in reST: inline markup characters escaped, one line."""
    return re.sub(r"([\\*`_|])", r"\\\1", str(text).replace("\n", " ")) or "–"


def _rst_heading(text: str, mark: str) -> list[str]:
    return [text, mark * max(len(text), 3), ""]


def claims_rst(papers: Papers) -> str:
    """The ledger as the report's front page (Snakemake's workflow description, reST)."""
    papers = list(papers)
    lines = _rst_heading("Which claims held", "=") + [_rst_text(summary_line(papers)), ""]
    lines += [
        "Each paper's criteria were written in the config before the run; comparisons over "
        "shared seeds are paired (mean per-seed difference with its 95% interval). The "
        "figures and their captions are under Results.",
        "",
    ]
    for title, counts, tables in _tables(papers):
        lines += _rst_heading(_rst_text(title), "-") + [_rst_text(f"Claims: {counts}."), ""]
        for heading, columns, rows in tables:
            lines += [f".. list-table:: {heading}", "   :header-rows: 1", ""]
            for row in [list(columns), *rows]:
                lines.append(f"   * - {_rst_text(row[0])}")
                lines += [f"     - {_rst_text(c)}" for c in row[1:]]
            lines.append("")
    return "\n".join(lines)
