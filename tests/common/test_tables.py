"""Tables as CSV and HTML (repro.common.tables) and the metrics sections (mean ± sd per
method, the best of each column in bold) on a hand-made asymmetric case: the HTML shows
"mean ± sd" text, the CSV holds the numbers in their own columns."""

from __future__ import annotations

import csv
import html.parser

import pytest

from repro.common.plotting import metrics_sections
from repro.common.tables import Section, count, interval, mean_sd, to_html, write


class _Cells(html.parser.HTMLParser):
    """Every table cell's text, and the bold ones."""

    def __init__(self):
        super().__init__()
        self.cells, self.bold, self._in, self._b = [], [], False, False

    def handle_starttag(self, tag, attrs):
        self._in = self._in or tag in ("td", "th")
        self._b = self._b or tag == "b"

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in = False
        if tag == "b":
            self._b = False

    def handle_data(self, data):
        if self._in:
            self.cells.append(data)
            if self._b:
                self.bold.append(data)


def _doc(dataset, seeds, methods):
    return {
        "dataset": dataset,
        "seeds": seeds,
        "methods": {
            m: {"mean": dict(means), "std": {k: 0.001 for k in means}} for m, means in methods
        },
    }


# three methods, one metric where lower is better and one the oldest method lacks
DOCS = [
    _doc(
        "gompertz",
        [0, 1, 2],
        [
            ("a", {"ctd": 0.70, "ibs": 0.20}),
            ("b", {"ctd": 0.75, "ibs": 0.25}),
            ("c", {"ctd": 0.60}),
        ],
    ),
    _doc("weibull", [0, 1], [("a", {"ctd": 0.81, "ibs": 0.12}), ("b", {"ctd": 0.80, "ibs": 0.10})]),
]


def test_metrics_sections_bold_the_best_of_each_column_in_its_direction():
    sections = metrics_sections(
        DOCS, ["ctd", "ibs"], labels={"ctd": "Ctd ↑"}, higher_is_better={"ctd"}
    )
    first, second = sections
    assert first.heading == "gompertz (3 seeds)" and first.header == ["method", "Ctd ↑", "ibs"]
    assert [str(c) for c in first.rows[2]] == ["c", "0.6000 ± 0.0010", "–"]
    # gompertz: b has the highest Ctd (row 1), a the lowest IBS (row 0)
    assert first.bold == {(1, 1), (0, 2)}
    # weibull: a the highest Ctd, b the lowest IBS
    assert second.bold == {(0, 1), (1, 2)}


def test_csv_and_html_hold_every_cell(tmp_path):
    sections = metrics_sections(DOCS, ["ctd", "ibs"], labels={}, higher_is_better={"ctd"})
    write(tmp_path / "t.csv", tmp_path / "t.html", "Table 1", sections, note="n & m")
    rows = list(csv.reader(open(tmp_path / "t.csv", encoding="utf-8")))
    assert rows[0] == ["table", "method", "ctd mean", "ctd sd", "ibs mean", "ibs sd", "ibs note"]
    assert rows[3] == ["gompertz (3 seeds)", "c", "0.6", "0.001", "", "", "–"]
    assert rows[5] == ["weibull (2 seeds)", "b", "0.8", "0.001", "0.1", "0.001", ""]
    assert len(rows) == 1 + 3 + 2  # one header: both sections share their columns
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    parser = _Cells()
    parser.feed(page)
    assert parser.cells.count("0.7500 ± 0.0010") == 1 and "n &amp; m" in page
    assert parser.bold == [  # in reading order: a's IBS, b's Ctd, then weibull's
        "0.2000 ± 0.0010",
        "0.7500 ± 0.0010",
        "0.8100 ± 0.0010",
        "0.1000 ± 0.0010",
    ]


def test_a_row_of_the_wrong_width_and_markup_in_a_cell():
    with pytest.raises(ValueError, match="rows of 2 cells under 3"):
        to_html("t", [Section("s", ["m", "x", "y"], [["a", "1"]])])
    page = to_html("t", [Section("s", ["m", "x"], [["<script>", "1"]])])
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_numbers_stay_numbers_in_the_csv_and_text_in_the_html(tmp_path):
    """A count, an interval with n and a note, and text among numbers, unrounded in the CSV."""
    section = Section(
        "s",
        ["method", "params", "difference", "acc"],
        [
            ["a", count(16128), interval(0.0123456, -0.004, 0.0281, n=3, note=" (n = 3)"), "n/a"],
            ["b", count(15180), "—", mean_sd(0.30149, 0.01552)],
        ],
    )
    write(tmp_path / "t.csv", tmp_path / "t.html", "T", [section])
    rows = list(csv.reader(open(tmp_path / "t.csv", encoding="utf-8")))
    assert rows[0] == [
        "table", "method", "params", "difference mean", "difference low", "difference high",
        "difference n", "difference note", "acc mean", "acc sd", "acc note",
    ]  # fmt: skip
    assert rows[1] == ["s", "a", "16128", "0.0123456", "-0.004", "0.0281", "3", "", "", "", "n/a"]
    assert rows[2] == ["s", "b", "15180", "", "", "", "", "—", "0.30149", "0.01552", ""]
    parser = _Cells()
    parser.feed((tmp_path / "t.html").read_text(encoding="utf-8"))
    assert "16,128" in parser.cells and "+0.012 [-0.004, +0.028] (n = 3)" in parser.cells
    assert "0.301 ± 0.016" in parser.cells and "n/a" in parser.cells
