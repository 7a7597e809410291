"""The claims ledger's three renderings (repro.common.ledger, repro.common.ledger_page).

* ``claims_markdown``: the per-paper counts table first (counted by hand), then every claim
  and check of every paper in its own table; "not reproduced" gets a column only when it
  occurs.
* ``claims_rst`` (the report's front page): renders with docutils without a warning, also
  after Snakemake's Jinja pass; it is short (counts, no claim text), and each paper's link is
  the report-app call that opens that paper's page.
* ``claims_page``: one paper's Claims and Checks tables as HTML, escaped, with the readable
  widths in its style sheet.
"""

import dataclasses
import html.parser
import re
import urllib.parse

import jinja2
import pytest
from docutils.core import publish_parts

from repro.common.claims import (
    CONTRADICTED,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PASSED,
    REPRODUCED,
    UNINFORMATIVE,
    as_check,
    check,
    not_tested,
)
from repro.common.ledger import (
    FRONT_STYLE,
    NB_HYPHEN,
    VOCABULARY,
    claims_markdown,
    criterion_text,
    claims_rst,
    summary_line,
)
from repro.common.ledger_page import FOLD_AFTER, claims_page


def _entry(id, verdict, claim=None, **extra):
    return {
        "id": id,
        "type": "claim",
        "claim": claim or f"claim {id}",
        "criterion": "A − B > 0.01",
        "verdict": verdict,
        "measured": 0.02,
        "interval": [0.01, 0.03],
        "details": "mean of 5 paired seeds",
        **extra,
    }


def _check(id, verdict):
    return {**_entry(id, verdict, claim=f"check {id}"), "type": "check", "interval": None}


PAPERS = [
    (
        "δ-Mem",
        [
            _entry("a", REPRODUCED, claim="A *beats* B_1 | `x` <script>{{ y }}</script>"),
            _entry("b", CONTRADICTED),
            _entry("c", INCONCLUSIVE),
            _entry("d", NOT_TESTED),
            _check("k", PASSED),
            _check("l", FAILED),
        ],
    ),
    ("Helpful-only fine-tuning", [_entry("e", REPRODUCED), _entry("f", REPRODUCED)]),
]
PAGES = ["results/delta_mem/claims.html", "results/helpful_only/claims.html"]


def test_markdown_counts_each_paper_then_lists_every_claim():
    claims_a = [
        check("a1", "GL beats trapezoid", 50.0, {"op": ">=", "threshold": 10}),
        check("a2", "no | pipes break", float("nan"), {"op": "<", "threshold": 1}),
        not_tested("a3", "ten times faster", "no SODEN"),
        as_check(check("a4", "exact reconstruction", 0.0, {"op": "<=", "threshold": 0})),
    ]
    claims_b = [check("b1", "lower IBS", 0.1, {"op": "<=", "threshold": 0.2})]
    text = claims_markdown(
        [
            ("QSurv", [dataclasses.asdict(c) for c in claims_a]),
            ("ST reliability", [dataclasses.asdict(c) for c in claims_b]),
        ]
    )
    lines = text.splitlines()
    assert lines[2] == summary_line(
        [
            ("QSurv", [dataclasses.asdict(c) for c in claims_a]),
            ("ST reliability", [dataclasses.asdict(c) for c in claims_b]),
        ]
    )
    header = (
        f"| paper | {REPRODUCED} | {CONTRADICTED} | {INCONCLUSIVE} | {UNINFORMATIVE} | "
        f"{NOT_TESTED} | "
    )
    assert lines[4] == header + f"{NOT_REPRODUCED} | checks passed |"
    assert lines[6] == "| [QSurv](#qsurv) | 1 | 0 | 0 | 0 | 1 | 1 | 1 of 1 |"
    assert lines[7] == "| [ST reliability](#st-reliability) | 1 | 0 | 0 | 0 | 0 | 0 | 0 of 0 |"
    assert VOCABULARY[0] in text and VOCABULARY[1] in text
    assert "## QSurv" in text and "## ST reliability" in text
    for claim in ("GL beats trapezoid", "no \\| pipes break", "ten times faster", "lower IBS"):
        assert claim in text
    assert (
        f"Claims: 2 {REPRODUCED}, 0 {CONTRADICTED}, 0 {INCONCLUSIVE}, 0 {UNINFORMATIVE}, "
        f"1 {NOT_TESTED}, 1 {NOT_REPRODUCED} (4 claims of 2 papers)"
    ) in text  # the NaN claim (a missing value) is the one not reproduced
    qsurv = text.split("## QSurv")[1].split("## ST reliability")[0]
    claims_table, checks_table = qsurv.split("### Claims")[1].split("### Checks")
    assert "exact reconstruction" in checks_table and "exact reconstruction" not in claims_table
    assert "GL beats trapezoid" in claims_table and "GL beats trapezoid" not in checks_table
    assert len([line for line in lines if line.startswith("| ") and "**" in line]) == 5
    assert "(0 claims of 0 papers)" in claims_markdown([])


def test_markdown_has_a_not_reproduced_column_only_when_one_occurs():
    header = claims_markdown(PAPERS).splitlines()[4]
    assert NOT_REPRODUCED not in header and header.endswith("| checks passed |")
    assert "| [δ-Mem](#δ-mem) | 1 | 1 | 1 | 0 | 1 | 1 of 2 |" in claims_markdown(PAPERS)


def _snakemake_render(text: str) -> str:
    """As Snakemake renders the workflow description: Jinja (with its category link targets
    appended), then docutils, stopping at the first warning."""
    targets = "\n".join(
        f".. _{title}: javascript:app.showCategory('{title}')" for title, _ in PAPERS
    )
    return _publish(jinja2.Environment().from_string(text + "\n" + targets + "\n").render())


def _publish(text: str) -> str:
    """reST to HTML, stopping at the first warning."""
    settings = {"report_level": 2, "halt_level": 2}
    return publish_parts(text, writer="html", settings_overrides=settings)["html_body"]


@pytest.mark.parametrize("jinja", [False, True])
def test_front_page_renders_cleanly_and_is_short(jinja):
    text = claims_rst(PAPERS, PAGES)
    body = _snakemake_render(text) if jinja else _publish(text)
    plain = re.sub(r"<[^>]+>", " ", body)
    plain = " ".join(plain.replace("&quot;", '"').split())
    assert summary_line(PAPERS) in plain
    assert body.count("<table") == 1  # the counts; the claims are on the papers' pages
    assert "claim a" not in plain and "beats" not in plain
    assert body.count("<tr>") == 3  # header + one row per paper
    assert f"δ{NB_HYPHEN}Mem 1 1 1 0 1 1 of 2" in plain  # a name breaks at spaces only
    assert f"Helpful{NB_HYPHEN}only fine{NB_HYPHEN}tuning 2 0 0 0 0 0 of 0" in plain
    assert all(" ".join(sentence.split()) in plain for sentence in VOCABULARY)
    assert "{%" not in plain  # the Jinja guards are comments
    assert f"<style>{FRONT_STYLE}</style>" in body  # top-left, not centred under the sidebar


def test_front_page_links_open_each_papers_page():
    body = _snakemake_render(claims_rst(PAPERS, PAGES))
    links = re.findall(r'href="(javascript:[^"]+)"', body)
    opened = [urllib.parse.unquote(html.unescape(link)) for link in links]
    for (title, _), page in zip(PAPERS, PAGES, strict=True):
        call = next(js for js in opened if f"'{page}'" in js)
        assert call.startswith("javascript:void(") and "app.setView(" in call
        assert f"('{title}','{page}')" in call
        assert "content:'html'" in call and "results[p].data_uri" in call
    assert not any(" " in link for link in links)  # reST would have dropped spaces


def test_papers_not_run_are_listed_as_such():
    not_run = ["QSurv", "PLSA"]
    markdown = claims_markdown(PAPERS[:1], not_run)
    assert "(4 claims of 1 papers; 2 not run)" in markdown
    assert "| QSurv | not run | – | – | – | – | – |" in markdown
    assert "## QSurv" not in markdown and "## δ-Mem" in markdown
    body = _snakemake_render(claims_rst(PAPERS[:1], PAGES[:1], not_run))
    plain = " ".join(re.sub(r"<[^>]+>", " ", body).split())
    assert body.count("<tr>") == 4  # header, the paper that ran, the two that did not
    assert "QSurv not run – – – – – " in plain + " "
    assert body.count("javascript:") == 1  # only the paper that ran has a page to open


class _Cells(html.parser.HTMLParser):
    """The text of every table cell, per table."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_paper_page_has_both_tables_escaped_and_readable_widths():
    title, entries = PAPERS[0]
    page = claims_page(title, entries)
    assert "<script>" not in page  # the claim's text is escaped, shown literally
    parser = _Cells()
    parser.feed(page)
    claims, checks = parser.tables
    assert len(claims) == 7 * 5 and len(checks) == 5 * 3  # header + rows, per column
    assert claims[7] == "A *beats* B_1 | `x` <script>{{ y }}</script>"
    assert claims[7 + 2] == "0.02 [0.01, 0.03]" and claims[7 + 4] == REPRODUCED
    assert [checks[5 + 3], checks[10 + 3]] == [PASSED, FAILED]
    assert "td.details div { min-width: 16em; max-width: 36em; }" in page
    assert f'<span class="verdict {CONTRADICTED}">' in page
    assert "<h2" in page and page.index('id="claims"') < page.index('id="checks"')
    only_claims = _Cells()
    only_claims.feed(claims_page(*PAPERS[1]))
    assert len(only_claims.tables) == 1


def test_long_details_fold_so_that_a_row_stays_shorter_than_the_window():
    parts = [f"condition {i}: inconclusive, +0.01 [-0.02, +0.04]" for i in range(80)]
    long = "; ".join(parts)
    page = claims_page("P", [_entry("c", INCONCLUSIVE, details=long)])
    assert page.count("<details>") == 1
    folded = re.search(r"<summary>(.*?)</summary>(.*?)</details>", page, re.S)
    shown, rest = (html.unescape(g) for g in folded.groups())
    assert len(shown) <= FOLD_AFTER["details"] + len(" … (more)") and shown.endswith(" … (more)")
    assert shown.startswith("condition 0:") and shown[: -len(" … (more)")].endswith(";")
    assert shown[: -len(" … (more)")] + rest == long  # nothing lost, it opens on a click
    short = claims_page("P", [_entry("c", INCONCLUSIVE, details=parts[0])])
    assert "<details>" not in short and parts[0] in html.unescape(short)


def test_a_long_criterion_folds_after_its_registration():
    """Revisions recorded on a criterion open on a click: the narrow column stays short."""
    revised = [{"date": "2026-12-01", "what": "criterion: " + "x " * 80, "why": "issue 11"}]
    entry = _entry("c", INCONCLUSIVE, criterion="delta > 0", registered="2026-11-29")
    page = claims_page("P", [{**entry, "revised": revised}])
    shown, rest = (
        html.unescape(g) for g in re.search(r"<summary>(.*?)</summary>(.*?)</details>", page).groups()
    )
    assert shown.startswith("delta > 0 · registered 2026-11-29 · revised 2026-12-01")
    assert len(shown) <= FOLD_AFTER["criterion"] + len(" … (more)")
    assert shown[: -len(" … (more)")] + rest == criterion_text({**entry, "revised": revised})
