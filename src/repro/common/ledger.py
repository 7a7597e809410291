"""The claims ledger: every enabled paper's claims and checks counted and tabled.

* ``claims_markdown``: results/claims.md, the whole ledger (a per-paper counts table first,
  then each paper's Claims and Checks tables);
* ``claims_rst``: results/claims.rst, the report's short front page (the summary line, one
  row of counts per paper linking to that paper's page, the verdict vocabulary);
* each paper's full tables as an HTML page in its category of the report come from
  ``repro.common.ledger_page``.

The summary line counts claims only; checks are properties that hold by construction.
"""

from __future__ import annotations

import re
import urllib.parse
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
    UNINFORMATIVE,
)
from repro.common.controls import number_text

# "not reproduced" (a value the claim needs is missing) is counted only where it occurs
CLAIM_VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, UNINFORMATIVE, NOT_TESTED)
OPTIONAL_VERDICTS = (NOT_REPRODUCED,)
CHECK_VERDICTS = (PASSED, FAILED, NOT_TESTED)
NOT_RUN = "not run"  # an enabled paper whose claims do not exist yet
# (title, entries) per paper, in the order the ledger shows them
Papers = Iterable[tuple[str, Sequence[Mapping[str, Any]]]]

VOCABULARY = (
    "Reproduced: the 95% interval of the measured value (a point value where there is none) "
    "satisfies the criterion written in the config before the run; contradicted: it lies "
    "entirely where the claim is false; inconclusive: neither, the interval is too wide to "
    "tell.",
    "Uninformative: a control of the claim failed in this run, judged by the claim's own "
    "code and criterion: the positive control (the effect planted, or the oracle) was not "
    "reproduced, so this setup cannot show the effect, or the negative control (the effect "
    "absent) was, so the statistic cannot tell the effect from its absence; the claim's own "
    "verdict is shown beside. Fragile: a decided verdict whose interval ends within a quarter "
    "of its half-width of the criterion's boundary, which another seed set may move.",
    "Not tested at this scale: this config cannot test the claim (the reason is in its "
    "details); not reproduced: a value the claim needs is missing (a failed run, a NaN seed).",
)


def _number(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def measured_text(entry: Mapping[str, Any]) -> str:
    text = _number(entry.get("measured"))
    interval = entry.get("interval")
    if interval and None not in interval:
        text += f" [{interval[0]:.4g}, {interval[1]:.4g}]"
    return text


def split(entries: Sequence[Mapping[str, Any]]) -> tuple[list, list]:
    """(claims, checks) of one paper's claims.json entries."""
    claims = [e for e in entries if e.get("type", "claim") != CHECK]
    checks = [e for e in entries if e.get("type", "claim") == CHECK]
    return claims, checks


def counts(entries, verdicts) -> dict[str, int]:
    """{verdict: number} for each of ``verdicts``, plus "not reproduced" where it occurs."""
    found = {v: sum(e["verdict"] == v for e in entries) for v in verdicts}
    return found | {
        v: n for v in OPTIONAL_VERDICTS if (n := sum(e["verdict"] == v for e in entries))
    }


def count_text(entries, verdicts) -> str:
    """``3 reproduced, 1 contradicted, ...``"""
    return ", ".join(f"{n} {v}" for v, n in counts(entries, verdicts).items())


def summary_line(papers: Papers, not_run: Sequence[str] = ()) -> str:
    """``Claims: 12 reproduced, ... (28 claims of 4 papers; 4 not run). Checks: 10 passed, ...``"""
    sections = [split(entries) for _, entries in papers]
    claims = [c for cs, _ in sections for c in cs]
    checks = [c for _, ks in sections for c in ks]
    others = f"; {len(not_run)} not run" if not_run else ""
    return (
        f"Claims: {count_text(claims, CLAIM_VERDICTS)} ({len(claims)} claims of "
        f"{len(sections)} papers{others}). Checks (properties that hold by construction, not "
        f"counted as claims): {count_text(checks, CHECK_VERDICTS)}."
    )


def counts_table(
    papers: Papers, not_run: Sequence[str] = ()
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The per-paper counts: (columns, [(title, cells)]); one column per claim verdict ("not
    reproduced" only where some paper has one), then the checks passed of all checks; a
    paper of ``not_run`` (titles) gets a row that says so."""
    papers = list(papers)
    verdicts = list(CLAIM_VERDICTS)
    if any(e["verdict"] == NOT_REPRODUCED for _, entries in papers for e in split(entries)[0]):
        verdicts.append(NOT_REPRODUCED)
    rows = []
    for title, entries in papers:
        claims, checks = split(entries)
        found = counts(claims, verdicts)
        passed = sum(c["verdict"] == PASSED for c in checks)
        rows.append((title, [str(found[v]) for v in verdicts] + [f"{passed} of {len(checks)}"]))
    rows += [(title, [NOT_RUN] + ["–"] * len(verdicts)) for title in not_run]
    return ["paper", *verdicts, "checks passed"], rows


CLAIM_COLUMNS = (
    "claim",
    "paper",
    "measured [95% interval]",
    "criterion",
    "verdict",
    "controls",
    "details",
)
CHECK_COLUMNS = ("check", "measured", "criterion", "verdict", "details")


def verdict_text(entry: Mapping[str, Any]) -> str:
    """The verdict, marked fragile where it is, and with the claim's own verdict beside an
    uninformative one."""
    text = entry["verdict"]
    if entry.get("fragile"):
        text += " · fragile"
    if entry.get("own_verdict"):
        text += f" (own: {entry['own_verdict']})"
    return text


def controls_text(entry: Mapping[str, Any]) -> str:
    """``positive ✓ (the oracle): reproduced, +0.52 [+0.41, +0.63]; negative ✓ ...``, or
    ``none: reason``; "–" for an entry without controls (a check, a claim not tested)."""
    found = entry.get("controls") or []
    if found and all("none" in c for c in found) and len({c["none"] for c in found}) == 1:
        return f"none: {found[0]['none']}"
    parts = []
    for c in found:
        if "none" in c:
            parts.append(f"{c['side']}: none ({c['none']})")
            continue
        mark = "✓" if c["passed"] else "✗"
        number = number_text(c.get("measured"), c.get("interval"))
        parts.append(f"{c['side']} {mark} ({c['about']}): {c['verdict']}, {number}")
    return "; ".join(parts) or "–"


def criterion_text(entry: Mapping[str, Any]) -> str:
    """The criterion, the date it was registered and every revision after results were seen."""
    text = entry.get("criterion") or "–"
    if entry.get("registered"):
        text += f" · registered {entry['registered']}"
    for r in entry.get("revised") or []:
        text += f" · revised {r['date']}: {r['what']} ({r['why']})"
    return text


def rows(entries, with_paper: bool):
    """Table cells per entry, in the order of CLAIM_COLUMNS (``with_paper``) or CHECK_COLUMNS."""
    for e in entries:
        cells = [e["claim"]]
        if with_paper:
            cells.append(_number(e.get("paper_value")))
        cells += [measured_text(e), criterion_text(e), verdict_text(e)]
        if with_paper:
            cells.append(controls_text(e))
        cells.append(e.get("details") or "")
        yield cells


def tables(entries):
    """[(heading, columns, rows)]: the Claims table, and the Checks table where there are
    checks."""
    claims, checks = split(entries)
    found = [("Claims", CLAIM_COLUMNS, list(rows(claims, True)))]
    if checks:
        found.append(("Checks", CHECK_COLUMNS, list(rows(checks, False))))
    return found


def paper_summary(entries) -> str:
    claims, checks = split(entries)
    return (
        f"Claims: {count_text(claims, CLAIM_VERDICTS)}; checks: "
        f"{count_text(checks, CHECK_VERDICTS)}."
    )


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_anchor(title: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives the heading ``## title``."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _md_table(columns, cells) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in cells]


def claims_markdown(papers: Papers, not_run: Sequence[str] = ()) -> str:
    """The whole ledger; the papers of ``not_run`` (titles) are in the counts table only."""
    papers = list(papers)
    columns, count_rows = counts_table(papers, not_run)
    lines = ["# Which claims held", "", summary_line(papers, not_run), ""]
    lines += _md_table(
        columns,
        [[f"[{title}](#{_md_anchor(title)})", *cells] for title, cells in count_rows[: len(papers)]]
        + [[title, *cells] for title, cells in count_rows[len(papers) :]],
    )
    lines += ["", *VOCABULARY, ""]
    for title, entries in papers:
        lines += [f"## {title}", "", paper_summary(entries), ""]
        for heading, header, cells in tables(entries):
            verdict = header.index("verdict")
            for row in cells:
                row[verdict] = f"**{row[verdict]}**"
            lines += [f"### {heading}", "", *_md_table(header, cells), ""]
    return "\n".join(lines)


def _rst_text(text: str) -> str:
    """Plain text in reST: inline markup characters escaped, one line."""
    return re.sub(r"([\\*`_|<>])", r"\\\1", str(text).replace("\n", " ")) or "–"


def _open_page(title: str, path: str) -> str:
    """A javascript: link that opens the paper's page in the report (Snakemake's report app:
    its category in the sidebar, the page as the content, as clicking its entry there does).

    Percent-encoded, because reST drops spaces from a URI and the browser decodes it."""
    script = (
        "void(((c,p)=>app.setView({navbarMode:'subcategory',category:c,"
        "subcategory:Object.keys(categories[c]).find(s=>categories[c][s].includes(p)),"
        "content:'html',contentPath:results[p].data_uri,resultPath:p}))"
        f"({_js_string(title)},{_js_string(path)}))"
    )
    return "javascript:" + urllib.parse.quote(script, safe="():,.'[]{}=/_-")


def _js_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# Snakemake's report centres the front page's text and the rule graph in the window, so text
# taller than the window, or a rule graph wider than the room beside the sidebar, is pushed
# above the top and under the sidebar, where no scrolling reaches it. The front page brings
# this style (in effect only while it is shown): top-left, scrolling, a wider text column.
FRONT_STYLE = (
    "#app .items-center.justify-center.h-screen "
    "{ align-items: flex-start; justify-content: flex-start; } "
    "#app .prose.max-w-lg { max-width: 44rem; }"
)
# the front page's narrow column has room for short headers (the vocabulary has the full names)
_FRONT_HEADERS = {NOT_TESTED: "not tested"}
NB_HYPHEN = "\u2011"


def claims_rst(papers: Papers, pages: Sequence[str], not_run: Sequence[str] = ()) -> str:
    """The report's front page (Snakemake's workflow description, reST): the summary line,
    one row of counts per paper (its name opens ``pages[i]``, the paper's page in the report;
    a paper of ``not_run`` has no page), and the verdict vocabulary. The text is
    Jinja-escaped, as Snakemake renders it with Jinja."""
    papers = list(papers)
    columns, count_rows = counts_table(papers, not_run)
    lines = [".. {% raw %}", "", ".. raw:: html", "", f"   <style>{FRONT_STYLE}</style>", ""]
    lines += ["Which claims held", "=================", ""]
    widths = " ".join(["25", *["12"] * (len(columns) - 2), "15"])
    lines += [_rst_text(summary_line(papers, not_run)), "", ".. list-table::", "   :header-rows: 1"]
    lines += [f"   :widths: {widths}", ""]
    columns = [_FRONT_HEADERS.get(c, c) for c in columns]
    # a paper's name opens its page (papers not run have none); non-breaking hyphens: a name
    # wraps at its spaces only
    links = [_rst_text(title.replace("-", NB_HYPHEN)) for title, _ in count_rows]
    for i, page in enumerate(pages):
        links[i] = f"`{links[i]} <{_open_page(count_rows[i][0], page)}>`__"
    for row in [
        columns,
        *([link, *cells] for link, (_, cells) in zip(links, count_rows, strict=True)),
    ]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {_rst_text(c)}" for c in row[1:]]
    lines += ["", *(f"{_rst_text(s)}\n" for s in VOCABULARY)]
    lines += [
        "A paper's name opens its Claims and Checks tables (the paper's number, ours with its "
        "interval, the criterion, the details); its figures are beside them under Results.",
        "",
        ".. {% endraw %}",
        "",
    ]
    return "\n".join(lines)
