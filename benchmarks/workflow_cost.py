"""Where a finished run spent its CPU: per paper, per rule, and before the first line of work.

Every script job logs two lines (``scripts/_bootstrap.py``): its start-up (the CPU its
Python used for interpreter start, Snakemake's script preamble and the script's imports,
before the first line of work) and, at exit, the job's whole CPU (its own and its finished
child processes', from ``getrusage``). Those are the CPU columns, for every script job. The
``benchmark:`` files (``results/<paper>/benchmarks/**/*.tsv``) add wall time and peak RSS of
the rules that have one, and their own ``cpu_time`` for comparison: Snakemake samples a
job's CPU every 0.5 s for 15 s and then every 30 s, so a job longer than 15 s loses the CPU
it used after its last sample (up to 30 s a job).

Run: ``python benchmarks/workflow_cost.py [RUN_DIR] [--rules] [--readme README.md]`` (RUN_DIR:
the run's working directory, the one holding ``results/`` and ``logs/``; default ``.``).
``--readme`` rewrites the README's block between ``<!-- cost -->`` and ``<!-- /cost -->``: the
CPU per paper against its budget, the whole run's, and the span from the first job's start
to the last job's end, stamped with the run's commit.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

# written by scripts/_bootstrap.py
STARTUP = re.compile(r" rule\.(\w+): start-up ([0-9.]+) s CPU")
JOB_CPU = re.compile(r" rule\.(\w+): job CPU ([0-9.]+) s in all")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d{3} ", re.M)  # the logging module's
BLOCK = re.compile(r"(<!-- cost -->\n).*?(<!-- /cost -->)", re.S)
# the developers' guide: the whole embedded default and each paper, job CPU-s
BUDGET_RUN, BUDGET_PAPER = 3100, 600


@dataclass
class Cost:
    """Totals over the jobs of one paper or one rule."""

    jobs: int = 0  # script jobs whose log has the job-CPU line
    cpu: float = 0.0
    startup_cpu: float = 0.0
    bench_jobs: int = 0
    bench_cpu: float = 0.0
    bench_wall: float = 0.0
    max_rss: float = 0.0

    def add_bench(self, cpu: float, wall: float, rss: float) -> None:
        self.bench_jobs += 1
        self.bench_cpu += cpu
        self.bench_wall += wall
        self.max_rss = max(self.max_rss, rss)

    def add(self, other: Cost) -> None:
        for name in ("jobs", "cpu", "startup_cpu", "bench_jobs", "bench_cpu", "bench_wall"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.max_rss = max(self.max_rss, other.max_rss)

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
    """({paper: Cost}, {rule: Cost}) of the run in ``run_dir``. A log directly under logs/
    (the workflow's own rules, e.g. the claims report) counts as paper ``workflow``."""
    papers: dict[str, Cost] = defaultdict(Cost)
    rules: dict[str, Cost] = defaultdict(Cost)
    logs = run_dir / "logs"
    for log in sorted(logs.rglob("*.log")):
        text = log.read_text(errors="replace")
        job = JOB_CPU.search(text)
        if not job:
            continue
        parts = log.relative_to(logs).parts
        paper = parts[0] if len(parts) > 1 else "workflow"
        startup = STARTUP.search(text)
        for cost in (rules[job.group(1)], papers[paper]):
            cost.jobs += 1
            cost.cpu += float(job.group(2))
            cost.startup_cpu += float(startup.group(2)) if startup else 0.0
    for root in sorted((run_dir / "results").glob("*/benchmarks")):
        paper = root.parent.name
        for path in sorted(root.rglob("*.tsv")):
            cpu, wall, rss, rule = read_benchmark(path)
            for cost in (rules[rule or rule_of(paper, path, root)], papers[paper]):
                cost.add_bench(cpu, wall, rss)
    return dict(papers), dict(rules)


def table(costs: dict[str, Cost], name: str) -> str:
    """A Markdown table, most CPU first, with a total row."""
    lines = [
        f"| {name} | jobs | CPU s | start-up CPU s | start-up share | benchmarked jobs "
        "| their wall s | their benchmark-file CPU s | max RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = Cost()
    for key, cost in sorted(costs.items(), key=lambda item: -item[1].cpu):
        lines.append(_row(key, cost))
        total.add(cost)
    lines.append(_row("total", total))
    return "\n".join(lines)


def _row(key: str, cost: Cost) -> str:
    return (
        f"| {key} | {cost.jobs} | {cost.cpu:.0f} | {cost.startup_cpu:.0f} "
        f"| {cost.startup_share:.0%} | {cost.bench_jobs} | {cost.bench_wall:.0f} "
        f"| {cost.bench_cpu:.0f} | {cost.max_rss:.0f} |"
    )


def span(run_dir: Path) -> tuple[str, str]:
    """The first and the last time stamp of the run's job logs (``YYYY-MM-DD HH:MM:SS``)."""
    stamps = [
        stamp
        for log in (run_dir / "logs").rglob("*.log")
        for stamp in STAMP.findall(log.read_text(errors="replace"))
    ]
    return min(stamps), max(stamps)


def readme_block(papers: dict[str, Cost], run_dir: Path, note: str = "") -> str:
    """The README's table: per paper its jobs and CPU against the budget, most CPU first;
    ``note``: what the numbers do not say themselves (e.g. what else ran on the machine)."""
    from datetime import datetime

    commit = subprocess.run(
        ["git", "-C", str(run_dir), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    first, last = span(run_dir)
    minutes, seconds = divmod(
        round((datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()), 60
    )
    total = Cost()
    rows = []
    for name, cost in sorted(papers.items(), key=lambda item: -item[1].cpu):
        total.add(cost)
        over = "" if name == "workflow" or cost.cpu <= BUDGET_PAPER else " (over)"
        rows.append(f"| {name} | {cost.jobs} | {cost.cpu:,.0f}{over} |")
    over = "" if total.cpu <= BUDGET_RUN else " (over)"
    return "\n".join(
        [
            f"Measured by `benchmarks/workflow_cost.py` on a run of `{commit or 'unknown'}`: first "
            f"job {first}, last {last} ({minutes} min {seconds:02d} s); budget {BUDGET_PAPER} "
            f"CPU-s per paper, {BUDGET_RUN:,} in all." + (f" {note}" if note else ""),
            "",
            "| paper | script jobs | job CPU-s |",
            "|---|---:|---:|",
            *rows,
            f"| total | {total.jobs} | {total.cpu:,.0f}{over} |",
            "",
        ]
    )


def rewrite_readme(readme: Path, block: str) -> None:
    text = readme.read_text()
    if not BLOCK.search(text):
        raise SystemExit(f"{readme}: no <!-- cost --> ... <!-- /cost --> block to rewrite")
    readme.write_text(BLOCK.sub(lambda m: m.group(1) + block + m.group(2), text))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", default=".", type=Path)
    parser.add_argument("--rules", action="store_true", help="also print the per-rule table")
    parser.add_argument("--readme", type=Path, help="rewrite this file's <!-- cost --> block")
    parser.add_argument("--note", default="", help="a sentence added to the README block")
    args = parser.parse_args(argv)
    papers, rules = collect(args.run_dir)
    if not papers:
        parser.error(f"no job logs with a job-CPU line under {args.run_dir}/logs")
    print(table(papers, "paper"))
    if args.rules:
        print()
        print(table(rules, "rule"))
    if args.readme:
        rewrite_readme(args.readme, readme_block(papers, args.run_dir, args.note))


if __name__ == "__main__":
    main()
