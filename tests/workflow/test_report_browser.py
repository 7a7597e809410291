"""The report as a person sees it, in a real browser.

The whole config/test.yaml DAG runs (the session's ``test_run``), then ``snakemake --report``;
headless Chromium (Debian's package, driven by Playwright) opens the HTML in a 1400×1000
window and checks what is on the screen, not only in the DOM:

* after load, the front page's summary line and its table of counts per paper lie inside the
  window and nothing covers the summary;
* each paper's Claims table is reachable from the front page (its name in the counts) and
  from the sidebar (its category, then the ledger page's entry): after the click (and a
  scroll, as a person would) the table's first row lies inside the window, it is that paper's
  first claim, and the sidebar covers no part of the table; the details column keeps to a
  readable width;
* every paper's first figure opens from its category;
* at 1400×1000 and 1366×768, every figure and table opens with its caption above it, and
  each figure's top and bottom can be scrolled into the window (none centred out of reach).

Screenshots of the front page and of each paper's page are saved in the test's temporary
folder (named in a failure's message). Skipped, with the reason, where no Chromium or
Playwright is installed (`.ci/run` installs both).
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from repro.common.ledger import NB_HYPHEN
from tests.conftest import ROOT, snakemake

pytestmark = pytest.mark.workflow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# flags for a closed network and a root user (see .library env notes)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
SIDEBAR = "#app nav >> nth=0"  # Snakemake's sidebar (its breadcrumbs are a nav inside it)
READABLE_PX = 600  # the details column may be at most this wide (about 80 characters)


@pytest.fixture(scope="module")
def report(test_run, test_config):
    workdir = test_run.parent
    snakemake(
        "--report", "report.html", "--configfile", str(test_config), workdir=workdir, timeout=300
    )
    return workdir / "report.html"


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_report(report, browser, tmp_path):
    """Opens a fresh page on the report; a screenshot of each page is kept in tmp_path."""
    pages = []

    def opener():
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(report.as_uri())
        page.locator("#app").wait_for()
        pages.append(page)
        return page

    yield opener
    for page in pages:
        page.close()


def _papers() -> list[tuple[str, str]]:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    enabled = [p for p, section in config["papers"].items() if section.get("enabled")]
    return [(p, importlib.import_module(f"repro.{p}").TITLE) for p in enabled]


def _shown(title: str) -> str:
    """The paper's name as its link on the front page shows it (hyphens that do not break)."""
    return title.replace("-", NB_HYPHEN)


def _inside_window(box: dict | None) -> bool:
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= VIEWPORT["width"] + 0.5
        and box["y"] + box["height"] <= VIEWPORT["height"] + 0.5
    )


def _shot(page, path: Path) -> str:
    page.screenshot(path=str(path))
    return f"(screenshot: {path})"


def test_report_opens_on_the_summary_and_counts_of_every_paper(open_report, test_run, tmp_path):
    summary = next(
        line
        for line in (test_run / "claims.md").read_text().splitlines()
        if line.startswith("Claims:")
    )
    page = open_report()
    line = page.locator("#app p", has_text="Claims:").first
    line.wait_for()
    shot = _shot(page, tmp_path / "front_page.png")
    assert " ".join(line.inner_text().split()) == summary, shot
    box = line.bounding_box()
    assert _inside_window(box), f"summary line at {box}, window {VIEWPORT} {shot}"
    on_top = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('p')?.innerText ?? ''",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert " ".join(on_top.split()) == summary, f"the summary line is covered {shot}"
    table = page.locator("#app table", has_text="checks passed").first
    assert _inside_window(table.bounding_box()), f"counts table {table.bounding_box()} {shot}"
    nav = page.locator(SIDEBAR).bounding_box()
    for what, left in (("summary line", box["x"]), ("counts", table.bounding_box()["x"])):
        assert left >= nav["x"] + nav["width"] - 0.5, f"sidebar {nav} over the {what} {shot}"
    for _, title in _papers():
        assert table.get_by_role("link", name=_shown(title), exact=True).count() == 1, title


def _first_claim(test_run: Path, paper: str) -> str:
    entries = json.loads((test_run / paper / "claims.json").read_text())
    return next(e["claim"] for e in entries if e.get("type", "claim") != "check")


def _assert_claims_table_visible(page, test_run, paper, shot_path):
    """The paper's page shows, inside the window and uncovered, its first claim's row."""
    frame_element = page.locator("iframe").last
    frame_element.wait_for()
    frame = frame_element.element_handle().content_frame()
    row = frame.locator("table.ledger tbody tr").first
    row.wait_for()
    row.scroll_into_view_if_needed()  # as a person would scroll to it
    shot = _shot(page, shot_path)
    cells = row.locator("td")
    assert " ".join(cells.first.inner_text().split()) == " ".join(
        _first_claim(test_run, paper).split()
    ), shot
    box = row.bounding_box()
    assert _inside_window(box), f"first row of {paper}'s claims at {box} {shot}"
    table = frame.locator("table.ledger").first.bounding_box()
    nav = page.locator(SIDEBAR).bounding_box()
    assert table["x"] >= nav["x"] + nav["width"] - 0.5, f"sidebar {nav} over table {table} {shot}"
    cell = cells.first.bounding_box()
    hit = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).tagName",
        [cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2],
    )
    assert hit == "IFRAME", f"{hit} lies over {paper}'s claims table {shot}"
    details = frame.locator("table.ledger td.details").first.bounding_box()
    assert details["width"] <= READABLE_PX, f"details column {details['width']} px {shot}"


def test_each_papers_claims_open_from_the_front_page(open_report, test_run, tmp_path):
    for paper, title in _papers():
        page = open_report()
        link = page.locator("#app table").get_by_role("link", name=_shown(title), exact=True)
        link.click()
        _assert_claims_table_visible(page, test_run, paper, tmp_path / f"{paper}_front.png")
        nav = page.locator(SIDEBAR)  # which shows the paper's category
        nav.locator("tr", has_text=f"results/{paper}/figures/").first.wait_for()


def test_each_papers_claims_and_figures_open_from_the_sidebar(open_report, test_run, tmp_path):
    for paper, title in _papers():
        page = open_report()
        nav = page.locator(SIDEBAR)
        nav.get_by_text(title, exact=True).first.click()  # its category under Results
        ledger = nav.locator("tr", has_text=f"results/{paper}/claims.html").first
        ledger.locator("a[iconname=eye]").click()
        _assert_claims_table_visible(page, test_run, paper, tmp_path / f"{paper}_sidebar.png")
        row = nav.locator("tr", has_text=f"results/{paper}/figures/").first
        name = row.locator("td").first.inner_text().strip()
        assert name.endswith(".png"), name
        row.locator("a[iconname=eye]").click()  # show the figure
        image = page.locator(f"img[src^='data:image/png'][src*='filename={Path(name).name}']")
        image.first.wait_for(timeout=10_000)
        assert image.first.bounding_box()["width"] > 50


# the two windows the figure view is checked in: a desktop and a common laptop screen
WINDOWS = ({"width": 1400, "height": 1000}, {"width": 1366, "height": 768})


def _results_of(nav, paper: str) -> list[str]:
    """The paper's figures and tables listed in its open category."""
    names = []
    for folder in ("figures", "tables"):
        rows = nav.locator("tr", has_text=f"results/{paper}/{folder}/")
        names += [rows.nth(i).locator("td").first.inner_text().strip() for i in range(rows.count())]
    return names


def _reachable(page, element, window: dict) -> tuple[bool, bool, dict]:
    """Whether the element's top, then its bottom, can be scrolled into the window."""
    element.evaluate("el => el.scrollIntoView({block: 'start'})")
    top = element.bounding_box()
    element.evaluate("el => el.scrollIntoView({block: 'end'})")
    bottom = element.bounding_box()
    top_in = top is not None and -0.5 <= top["y"] <= window["height"]
    bottom_in = bottom is not None and 0 <= bottom["y"] + bottom["height"] <= window["height"] + 0.5
    return top_in, bottom_in, {"top": top, "bottom": bottom}


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"{w['width']}x{w['height']}")
def test_every_figure_and_table_opens_with_its_caption_and_is_reachable(
    report, browser, tmp_path, window
):
    """Each figure of each paper opens with its caption above it (no separate button), and
    its top and bottom can both be scrolled into the window (none centred out of reach); each
    table opens as an HTML table under its caption."""
    for paper, title in _papers():
        page = browser.new_page(viewport=window)
        try:
            page.goto(report.as_uri())
            page.locator("#app").wait_for()
            _check_figures_of(page, paper, title, tmp_path, window)
        finally:
            page.close()


def _check_figures_of(page, paper: str, title: str, tmp_path: Path, window: dict) -> None:
    nav = page.locator(SIDEBAR)
    nav.get_by_text(title, exact=True).first.click()
    nav.locator("tr", has_text=f"results/{paper}/claims.html").first.wait_for()
    names = _results_of(nav, paper)
    assert any(n.endswith(".png") for n in names), f"{paper}: no figure in the report"
    for name in names:
        nav.locator("tr", has_text=name).first.locator("a[iconname=eye]").click()
        caption = page.locator(".repro-view .repro-caption").first
        caption.wait_for(timeout=10_000)
        shot = _shot(page, tmp_path / f"{paper}_{Path(name).stem}_{window['width']}.png")
        assert caption.inner_text().strip(), f"{name}: empty caption {shot}"
        if name.endswith(".png"):
            image = page.locator(f".repro-view img[src*='filename={Path(name).name}']")
            image.first.wait_for(timeout=10_000)
            top, bottom, boxes = _reachable(page, image.first, window)
            assert top and bottom, f"{name} out of reach in {window}: {boxes} {shot}"
            caption.evaluate("el => el.scrollIntoView({block: 'start'})")
            assert caption.bounding_box()["y"] >= -0.5, f"{name}: caption out of reach {shot}"
        else:  # a table: its HTML under the caption, its rows there
            frame = page.locator(".repro-view iframe").first
            frame.wait_for()
            rows = frame.element_handle().content_frame().locator("table tbody tr")
            rows.first.wait_for()
            assert rows.count() >= 1, f"{name}: no table rows {shot}"
