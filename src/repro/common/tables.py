"""A numeric table as data and as text: ``results/<paper>/tables/<name>.csv`` (for a reader's
own analysis) and ``.html`` (the report shows it as a table, readable at any window size,
where a table drawn as an image is scaled down to unreadable text).

A table is a title and its sections, each ``Section(heading, header, rows)``: ``header`` names
the columns, the first being the row label's; each row is that many cells; ``bold`` marks cells
(the best of a column) in the HTML. A cell is text, or a :class:`Cell` of numbers with the text
the HTML shows (:func:`mean_sd` "0.812 ± 0.004", :func:`interval`, :func:`number`,
:func:`count`). The CSV
holds every section's rows with the section's heading as its first column, and numbers as
numbers: a column of ``Cell``s becomes one CSV column per number ("ctd mean", "ctd sd"), and
the text cells among them ("–", "n/a (a seed failed)") go to a "<column> note" column.
"""

from __future__ import annotations

import csv
import html
import itertools
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
class Cell:
    """Numbers for the CSV, ``(name, value)`` pairs (None: no value), and the HTML's text."""

    text: str
    numbers: tuple[tuple[str, float | int | None], ...]

    def __str__(self) -> str:
        return self.text


def mean_sd(
    mean: float, sd: float, digits: int = 3, *, n: int | None = None, note: str = ""
) -> Cell:
    """ "0.812 ± 0.004" (and ``note``); the CSV gets the mean, the sd and, if given, n."""
    numbers = (("mean", mean), ("sd", sd), *((("n", n),) if n is not None else ()))
    return Cell(f"{mean:.{digits}f} ± {sd:.{digits}f}{note}", numbers)


def interval(mean: float, low: float, high: float, *, n: int | None = None, note: str = "") -> Cell:
    """ "+0.012 [−0.003, +0.020]" (and ``note``); the CSV gets the three numbers and n."""
    numbers = (
        ("mean", mean),
        ("low", low),
        ("high", high),
        *((("n", n),) if n is not None else ()),
    )
    return Cell(f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]{note}", numbers)


def number(value: float, fmt: str = "{:.3f}") -> Cell:
    """One number, shown as ``fmt`` writes it, unrounded in the CSV."""
    return Cell(fmt.format(value), (("", value),))


def count(n: int) -> Cell:
    """An integer shown with thousands separators ("16,128"), a plain number in the CSV."""
    return number(n, "{:,}")


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


def _csv_columns(header: list[str], rows: list[list]) -> list[tuple[str, list[str]]]:
    """Per column: its header and the names of the numbers its ``Cell``s hold, in order of
    first appearance, plus "note" where text cells sit among them (none: a text column)."""
    columns = []
    for j, name in enumerate(header):
        cells = [row[j] for row in rows]
        parts = list(dict.fromkeys(k for c in cells if isinstance(c, Cell) for k, _ in c.numbers))
        if parts and any(not isinstance(c, Cell) for c in cells):
            parts.append("note")
        columns.append((name, parts))
    return columns


def _csv_row(row: list, columns) -> list:
    out = []
    for cell, (_, parts) in zip(row, columns, strict=True):
        if not parts:
            out.append(str(cell))
        elif isinstance(cell, Cell):
            values = dict(cell.numbers)
            out += ["" if values.get(k) is None else values[k] for k in parts if k != "note"]
            out += [""] * ("note" in parts)
        else:
            out += [""] * (len(parts) - 1) + [cell]
    return out


def to_csv(path: str | Path, sections: list[Section]) -> None:
    """One CSV: a "table" column (the section's heading), then the sections' columns (a
    column of numbers split into one per number), with a header line for each run of
    sections that share their columns."""
    _check(sections)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        for header, run in itertools.groupby(sections, key=lambda s: s.header):
            run = list(run)
            columns = _csv_columns(header, [row for s in run for row in s.rows])
            names = [f"{n} {k}".strip() if k else n for n, parts in columns for k in parts or [""]]
            writer.writerow(["table", *names])
            writer.writerows([s.heading, *_csv_row(row, columns)] for s in run for row in s.rows)


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
                f"<td><b>{esc(str(c))}</b></td>" if (i, j) in s.bold else f"<td>{esc(str(c))}</td>"
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
