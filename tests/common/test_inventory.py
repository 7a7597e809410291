"""The figure inventory of each paper's docs page (repro.common.inventory) and its place on
the paper's page in the report."""

from __future__ import annotations

import re

import pytest
import yaml

from repro.common.inventory import figure_inventory
from repro.common.ledger_page import claims_page
from tests.conftest import ROOT

PAPERS = sorted(yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"])

PAGE = """# P

## Figure inventory

Intro.

| the brief's item | ours |
| --- | --- |
| Fig. 1: error vs \\|E\\| | `figures/a.png` (mean of h(t \\| x)) |
| Table 2 | not regenerated at this scale: no data |

## Configuration keys

| key | meaning |
| --- | --- |
| a | b |
"""


def test_rows_are_read_in_plain_text_and_the_section_ends_at_the_next_heading():
    assert figure_inventory(PAGE) == [
        ("Fig. 1: error vs |E|", "figures/a.png (mean of h(t | x))"),
        ("Table 2", "not regenerated at this scale: no data"),
    ]
    assert figure_inventory("# P\n\nno inventory\n") == []
    with pytest.raises(ValueError, match="needs 2 cells"):
        figure_inventory(PAGE.replace("| Table 2 |", "| Table | 2 |"))


@pytest.mark.parametrize("paper", PAPERS)
def test_each_papers_inventory_names_figures_that_exist_or_says_why_not(paper):
    rows = figure_inventory((ROOT / "docs" / f"{paper}.md").read_text(encoding="utf-8"))
    assert len(rows) >= 4, paper
    for item, ours in rows:
        files = re.findall(r"(figures|tables)/([\w<>]+)\.(?:png|html)", ours)
        assert files or "not regenerated" in ours, (item, ours)
        for folder, name in files:  # each file named is a report result with a caption
            stem = name.replace("_<family>", "")
            captions = list((ROOT / "workflow" / "report").glob(f"{paper}_{stem}.rst"))
            assert captions, f"{paper}: {folder}/{name} has no caption (is it a figure?)"


def test_the_papers_page_shows_the_inventory_after_its_tables():
    page = claims_page("P", [], figure_inventory(PAGE))
    assert page.index('<h2 id="figures">') > 0
    assert "<td>Fig. 1: error vs |E|</td><td>figures/a.png (mean of h(t | x))</td>" in page
    assert "<td>not regenerated at this scale: no data</td>" in page
