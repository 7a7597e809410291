"""One paper's page of the claims ledger: its full Claims and Checks tables as a standalone
HTML page (results/<paper>/claims.html), shown in the paper's category of the report.

Text columns are kept to a readable measure (they wrap instead of widening the table), the
header row stays in view while the tables scroll, and verdicts are coloured.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from repro.common.ledger import VOCABULARY, paper_summary, tables

# the narrowest and widest a column's text may run (details: about 30 to 65 characters a
# line), so that the table fits beside a wide sidebar and never runs wider than text is read
_WIDTHS = {
    "claim": ("10em", "24em"),
    "check": ("10em", "24em"),
    "paper": ("4em", "16em"),
    "criterion": ("6em", "16em"),
    "details": ("16em", "36em"),
    "controls": ("10em", "22em"),
}
STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1e293b;
       margin: 0; padding: 1rem 1rem 3rem; }
h1 { font-size: 1.4rem; margin: 0 0 .4rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
p { max-width: 48em; margin: .3rem 0; }
.vocabulary { color: #475569; font-size: 13px; }
table { border-collapse: collapse; }
th, td { border: 1px solid #cbd5e1; padding: .3rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f1f5f9; position: sticky; top: 0; }
td.claim div, td.check div, td.paper div, td.criterion div, td.details div, td.controls div {
    overflow-wrap: anywhere; }
.verdict { font-weight: 600; }
summary { cursor: pointer; }
.reproduced, .passed { color: #15803d; }
.contradicted, .failed, .not-reproduced { color: #b91c1c; }
.inconclusive, .uninformative { color: #b45309; }
.not-tested-at-this-scale { color: #64748b; }
""" + "".join(
    f"td.{c} div {{ min-width: {low}; max-width: {high}; }}\n" for c, (low, high) in _WIDTHS.items()
)


def _slug(text: str) -> str:
    return text.split(" ")[0] if text.startswith("measured") else text.replace(" ", "-")


# Text longer than this is folded: its first part shows, the rest opens on a click, so that
# one claim's per-condition listing (some run to 4,000 characters) or its criterion's
# revisions do not make its row taller than the window. The narrow columns fold sooner.
FOLD_AFTER = {"details": 360, "controls": 280, "criterion": 160}


def _folded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return html.escape(text)
    # at the last list separator in the second half of the limit, else at a word
    cuts = (text.rfind(sep, 0, limit) for sep in ("; ", " · ", " "))
    cut = next((c + 1 for c in cuts if c > limit // 2), limit)
    return (
        f"<details><summary>{html.escape(text[:cut])} … (more)</summary>"
        f"{html.escape(text[cut:])}</details>"
    )


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    classes = [_slug(c) for c in columns]
    lines = ['<table class="ledger">', "<thead><tr>"]
    lines += [f"<th>{html.escape(c)}</th>" for c in columns]
    lines.append("</tr></thead><tbody>")
    for row in rows:
        cells = []
        for name, text in zip(classes, row, strict=True):
            limit = FOLD_AFTER.get(name)
            content = _folded(str(text), limit) if limit else html.escape(str(text))
            if name == "verdict":  # coloured by the verdict itself, not its marks
                word = str(text).split(" · ")[0].split(" (")[0]
                content = f'<span class="verdict {_slug(word)}">{content}</span>'
            cells.append(f'<td class="{name}"><div>{content}</div></td>')
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</tbody></table>")
    return lines


def claims_page(title: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """The paper's page: its title, its counts, the verdict vocabulary, then the Claims table
    and (where there are checks) the Checks table."""
    heading = html.escape(f"{title}: which claims held")
    lines = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{heading}</title><style>{STYLE}</style></head><body>",
        f"<h1>{heading}</h1>",
        f'<p class="summary">{html.escape(paper_summary(entries))}</p>',
        f'<p class="vocabulary">{html.escape(" ".join(VOCABULARY))}</p>',
    ]
    for name, columns, rows in tables(entries):
        lines += [f'<h2 id="{name.lower()}">{name}</h2>', *_table(columns, rows)]
    lines.append("</body></html>\n")
    return "\n".join(lines)
