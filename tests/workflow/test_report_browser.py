"""The report opens on the claims ledger, in a real browser.

The whole config/test.yaml DAG runs (the session's ``test_run``), then
``snakemake --report``; headless Chromium (Debian's package, driven by Playwright) opens the
HTML, finds the ledger's summary line on the front page, and under Results finds and opens a
figure of every paper. Skipped, with the reason, where no Chromium or Playwright is
installed (`.ci/run` installs both).
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest
import yaml

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


def _papers() -> list[tuple[str, str]]:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    enabled = [p for p, section in config["papers"].items() if section.get("enabled")]
    return [(p, importlib.import_module(f"repro.{p}").TITLE) for p in enabled]


def test_report_opens_on_the_ledger_and_shows_every_papers_figures(report, browser, test_run):
    summary = next(
        line
        for line in (test_run / "claims.md").read_text().splitlines()
        if line.startswith("Claims:")
    )
    page = browser.new_page()
    page.goto(report.as_uri())
    front = page.inner_text("#app")
    assert "Which claims held" in front
    assert summary in front.replace("\n", " ")
    for paper, title in _papers():
        assert title in front  # each paper's section of the ledger
        page.get_by_text("Results", exact=True).first.click()
        page.get_by_text(title, exact=True).first.click()
        row = page.locator("tr", has_text=f"results/{paper}/figures/").first
        row.wait_for(timeout=10_000)
        name = row.locator("td").first.inner_text().strip()
        assert name.endswith(".png"), name
        row.locator("a[iconname=eye]").click()  # show the figure
        image = page.locator(f"img[src^='data:image/png'][src*='filename={Path(name).name}']")
        image.first.wait_for(timeout=10_000)
        assert image.first.bounding_box()["width"] > 50
        page.get_by_text("Report", exact=True).first.click()  # back to the front page
    page.close()
