"""A paper's figure inventory, read from its page of the docs (``docs/<paper>.md``, section
"Figure inventory": a two-column Markdown table, the brief's item and our file or why it is
not regenerated), for the paper's page in the report."""

from __future__ import annotations

import re

HEADING = "## Figure inventory"
_CELL_SPLIT = re.compile(r"(?<!\\)\|")  # a cell ends at a pipe that is not escaped


def figure_inventory(markdown: str) -> list[tuple[str, str]]:
    """The section's rows as (the brief's item, ours), in plain text: escaped pipes become
    pipes, code spans lose their backticks. No section: no rows."""
    if HEADING not in markdown:
        return []
    section = markdown.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip().replace("\\|", "|").replace("`", "") for c in _CELL_SPLIT.split(line)]
        cells = cells[1:-1]  # the pipes that open and close the row
        if len(cells) != 2:
            raise ValueError(f"a figure inventory row needs 2 cells: {line!r}")
        if set(cells[0]) <= {"-", " "}:  # the header's rule
            continue
        rows.append((cells[0], cells[1]))
    return rows[1:]  # without the header row
