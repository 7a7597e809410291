"""A run's figure-lint findings against the allow-list.

``save_figure`` writes each PNG's findings beside it (``results/<paper>/figures/<name>.lint.json``);
this gathers them per figure (``<paper>/<name>``) and compares them with
``repro.common.figure_lint_allowed.ALLOWED``: a finding whose check is not allowed for its
figure is *unexpected*; an allowed check that none of the figures it names shows any more is
*stale* (the allow-list only shrinks: a fixed figure leaves it). A figure PNG without
findings (not drawn through ``save_figure``) is *unlinted*.

    python -m repro.common.figure_lint_check results      # exit 1 on any of the three
    python -m repro.common.figure_lint_check results --all  # also list the allowed findings
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from repro.common.figure_lint_allowed import ALLOWED
from repro.common.io import read_json

LINT_SUFFIX = ".lint.json"


def figure_key(png: Path) -> str:
    """``results/<paper>/figures/<name>.png`` → ``<paper>/<name>``."""
    return f"{png.parent.parent.name}/{png.stem}"


def collect(results: Path) -> dict[str, list[dict]]:
    """{figure key: its findings} for every lint file under ``results/*/figures/``."""
    found = {}
    for path in sorted(results.glob(f"*/figures/*{LINT_SUFFIX}")):
        png = path.with_name(path.name.removesuffix(LINT_SUFFIX) + ".png")
        found[figure_key(png)] = read_json(path)["findings"]
    return found


def unlinted(results: Path) -> list[str]:
    """Figure PNGs with no findings file beside them."""
    return [
        figure_key(png)
        for png in sorted(results.glob("*/figures/*.png"))
        if not png.with_suffix(LINT_SUFFIX).exists()
    ]


def _allowed_checks(key: str, allowed: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    checks = {}
    for pattern, reasons in allowed.items():
        if fnmatch.fnmatchcase(key, pattern):
            checks.update(reasons)
    return checks


@dataclass
class Verdict:
    unexpected: list[str] = field(default_factory=list)  # "<figure>: <check>: <detail>"
    stale: list[str] = field(default_factory=list)  # "<pattern>: <check>"
    allowed: list[str] = field(default_factory=list)  # the allowed findings, listed

    @property
    def passed(self) -> bool:
        return not (self.unexpected or self.stale)


def judge(
    found: Mapping[str, list[dict]], allowed: Mapping[str, Mapping[str, str]] = ALLOWED
) -> Verdict:
    """Every finding against the allow-list; allowances judged only where this run drew a
    figure they name (a run of another config may draw other figures)."""
    verdict = Verdict()
    for key, findings in found.items():
        checks = _allowed_checks(key, allowed)
        for f in findings:
            line = f"{key}: {f['check']}: {f['detail']}"
            (verdict.allowed if f["check"] in checks else verdict.unexpected).append(line)
    for pattern, reasons in allowed.items():
        keys = [k for k in found if fnmatch.fnmatchcase(k, pattern)]
        for check in reasons:
            if keys and not any(f["check"] == check for k in keys for f in found[k]):
                verdict.stale.append(f"{pattern}: {check}")
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a run's results/ folder")
    parser.add_argument("--all", action="store_true", help="also list the allowed findings")
    args = parser.parse_args(argv)
    found = collect(args.results)
    verdict = judge(found)
    missing = unlinted(args.results)
    sections = [
        ("unexpected findings (fix the figure)", verdict.unexpected),
        ("stale allowances (remove them from figure_lint_allowed.py)", verdict.stale),
        ("figures without findings (not saved through save_figure)", missing),
    ]
    if args.all:
        sections.append(("allowed findings", verdict.allowed))
    for heading, lines in sections:
        if lines:
            print(f"{heading}:", *(f"  {line}" for line in lines), sep="\n")
    print(
        f"{len(found)} figures linted: {len(verdict.unexpected)} unexpected, "
        f"{len(verdict.allowed)} allowed findings, {len(verdict.stale)} stale allowances, "
        f"{len(missing)} unlinted"
    )
    return 0 if verdict.passed and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
