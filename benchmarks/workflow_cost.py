"""Where a finished run spent its CPU: per paper, per rule, and before the first line of work.

Reads the ``benchmark:`` files of a finished run (``results/<paper>/benchmarks/**/*.tsv``,
Snakemake's TSV: ``s``, ``cpu_time``, ``max_rss`` ...) and the start-up line every script
writes to its log (``scripts/_bootstrap.py``'s ``setup_logging``: the CPU seconds the job's
Python used for interpreter start, Snakemake's script preamble and the script's imports,
before its first line of work), and prints one table per paper and per rule.

Run: ``python benchmarks/workflow_cost.py [RUN_DIR] [--rules]`` (RUN_DIR: the run's working
directory, the one holding ``results/`` and ``logs/``; default ``.``). Only rules with a
``benchmark:`` count towards CPU; the start-up column covers every script job whose log
was found, so its share is against the benchmarked CPU of the same rules.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# written by scripts/_bootstrap.py:setup_logging
STARTUP = re.compile(r" rule\.(\w+): start-up ([0-9.]+) s CPU")


@dataclass
class Cost:
    """Totals over the jobs of one paper or one rule."""

    jobs: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    max_rss: float = 0.0
    startup_jobs: int = 0
    startup_cpu: float = 0.0
    rules: set = field(default_factory=set)

    def add(self, cpu: float, wall: float, rss: float) -> None:
        self.jobs += 1
        self.cpu += cpu
        self.wall += wall
        self.max_rss = max(self.max_rss, rss)

    @property
    def startup_share(self) -> float:
        return self.startup_cpu / self.cpu if self.cpu else math.nan


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # "NA": the job ended before the first sample
        return 0.0


def read_benchmark(path: Path) -> tuple[float, float, float, str | None]:
    """(cpu seconds, wall seconds, max RSS in MB, rule name or None) of one benchmark file,
    summed over its repeats (a rule with ``repeat(...)`` writes one row per repeat). The rule
    name is there in the extended format (``benchmark-extended: true``, the local profile)."""
    with path.open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    cpu = sum(_number(row["cpu_time"]) for row in rows)
    wall = sum(_number(row["s"]) for row in rows)
    rss = max((_number(row["max_rss"]) for row in rows), default=0.0)
    return cpu, wall, rss, (rows[0].get("rule_name") if rows else None)


def rule_of(paper: str, benchmark: Path, root: Path) -> str:
    """The rule of a benchmark file in the short format: ``<paper>_<first folder>`` for
    ``results/<paper>/benchmarks/<folder>/...``, ``<paper>_<stem>`` for a file directly in
    benchmarks/ (``cost.tsv`` -> ``delta_mem_cost``); a guess where a rule is named otherwise."""
    parts = benchmark.relative_to(root).parts
    step = parts[0] if len(parts) > 1 else Path(parts[0]).stem
    return f"{paper}_{step}"


def collect(run_dir: Path) -> tuple[dict[str, Cost], dict[str, Cost]]:
    """({paper: Cost}, {rule: Cost}) of the run in ``run_dir``."""
    papers: dict[str, Cost] = defaultdict(Cost)
    rules: dict[str, Cost] = defaultdict(Cost)
    for root in sorted((run_dir / "results").glob("*/benchmarks")):
        paper = root.parent.name
        for path in sorted(root.rglob("*.tsv")):
            cpu, wall, rss, rule = read_benchmark(path)
            rule = rule or rule_of(paper, path, root)
            papers[paper].add(cpu, wall, rss)
            papers[paper].rules.add(rule)
            rules[rule].add(cpu, wall, rss)
    for log in sorted((run_dir / "logs").rglob("*.log")):
        match = STARTUP.search(log.read_text(errors="replace"))
        if match and match.group(1) in rules:
            rule, seconds = match.group(1), float(match.group(2))
            paper = log.relative_to(run_dir / "logs").parts[0]
            for cost in (rules[rule], papers[paper]):
                cost.startup_jobs += 1
                cost.startup_cpu += seconds
    return dict(papers), dict(rules)


def table(costs: dict[str, Cost], name: str) -> str:
    """A Markdown table, most CPU first, with a total row."""
    lines = [
        f"| {name} | jobs | CPU s | wall s | start-up CPU s | start-up share | max RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total = Cost()
    for key, cost in sorted(costs.items(), key=lambda item: -item[1].cpu):
        lines.append(_row(key, cost))
        total.jobs += cost.jobs
        total.cpu += cost.cpu
        total.wall += cost.wall
        total.max_rss = max(total.max_rss, cost.max_rss)
        total.startup_cpu += cost.startup_cpu
    lines.append(_row("total", total))
    return "\n".join(lines)


def _row(key: str, cost: Cost) -> str:
    return (
        f"| {key} | {cost.jobs} | {cost.cpu:.0f} | {cost.wall:.0f} | {cost.startup_cpu:.0f} "
        f"| {cost.startup_share:.0%} | {cost.max_rss:.0f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", default=".", type=Path)
    parser.add_argument("--rules", action="store_true", help="also print the per-rule table")
    args = parser.parse_args(argv)
    papers, rules = collect(args.run_dir)
    if not papers:
        parser.error(f"no results/*/benchmarks/*.tsv under {args.run_dir}")
    print(table(papers, "paper"))
    if args.rules:
        print()
        print(table(rules, "rule"))


if __name__ == "__main__":
    main()
