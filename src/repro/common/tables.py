"""A numeric table as data and as text: ``results/<paper>/tables/<name>.csv`` (for a reader's
own analysis) and ``.html`` (the report shows it as a table, readable at any window size,
where a table drawn as an image is scaled down to unreadable text).

A table is a title and its sections, each ``Section(heading, header, rows)``: ``header`` names
the columns, the first being the row label's; each row is that many cells, already written as
text (``0.812 ± 0.004``); ``bold`` marks cells (the best of a column) in the HTML. The CSV
holds every section's rows with the section's heading as its first column.
"""

from __future__ import annotations

import csv
import html
from dataclasses import dataclass
from pathlib import Path

STYLE = (
    "body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1rem; } "
    "table { border-collapse: collapse; margin-bottom: 1.5rem; } "
    "th, td { border: 1px solid #cbd5e1; padding: .25rem .5rem; text-align: right; "
    "white-space: nowrap; } "
    "th:first-child, td:first-child { text-align: left; } "
    "thead th { background: #f1f5f9; position: sticky; top: 0; } "
    "caption { text-align: left; font-weight: 600; padding: .25rem 0; }"
)


@dataclass(frozen=True)
class Section:
    heading: str
    header: list[str]
    rows: list[list[str]]
    bold: frozenset[tuple[int, int]] = frozenset()  # (row, column) of cells shown in bold


def _check(sections: list[Section]) -> None:
    for s in sections:
        bad = [r for r in s.rows if len(r) != len(s.header)]
        if bad:
            raise ValueError(f"{s.heading}: rows of {len(bad[0])} cells under {len(s.header)}")


def to_csv(path: str | Path, sections: list[Section]) -> None:
    """One CSV: a "table" column (the section's heading), then each section's own columns,
    its header repeated where a section's columns differ from the one before."""
    _check(sections)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        header = None
        for s in sections:
            if s.header != header:
                writer.writerow(["table", *s.header])
                header = s.header
            writer.writerows([s.heading, *row] for row in s.rows)


def to_html(title: str, sections: list[Section], note: str = "") -> str:
    """A standalone page: the title, the note, one HTML table per section."""
    _check(sections)
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h2>{esc(title)}</h2>",
    ]
    if note:
        parts.append(f"<p>{esc(note)}</p>")
    for s in sections:
        head = "".join(f"<th>{esc(h)}</th>" for h in s.header)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td><b>{esc(c)}</b></td>" if (i, j) in s.bold else f"<td>{esc(c)}</td>"
                for j, c in enumerate(row)
            )
            + "</tr>"
            for i, row in enumerate(s.rows)
        )
        parts.append(
            f"<table><caption>{esc(s.heading)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )
    return "".join([*parts, "</body></html>"])


def write(csv_path, html_path, title: str, sections: list[Section], note: str = "") -> None:
    to_csv(csv_path, sections)
    Path(html_path).parent.mkdir(parents=True, exist_ok=True)
    Path(html_path).write_text(to_html(title, sections, note), encoding="utf-8")
