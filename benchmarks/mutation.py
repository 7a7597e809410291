"""Mutation score of the modules that decide reported numbers: how many of the small bugs that
mutmut plants (an operator flipped, a constant moved, an argument dropped) the unit tests catch.

The modules, the unit tests run against each module's mutants, and the surviving mutants
accepted as equivalent (with the reason no test can tell them apart) are listed in
``benchmarks/mutation.yaml``. Each module runs on its own, in a scratch copy of the
repository (mutmut writes its ``mutants/`` folder there, never into the tree): mutmut 3
mutates that one file, runs the listed tests once to learn which test reaches which
function, then runs, for every mutant, the tests that reach its function (first failure
stops). A mutant that a test fails on, or that makes the tests time out, is killed.

Run: ``make mutation`` (every module) or ``python benchmarks/mutation.py [PAPER|MODULE ...]
[--jobs N] [--keep DIR]``; it prints a table of scores per module, then every survivor that
is not listed as equivalent with its diff, and exits 1 if a module scores below
``--min-score`` (default 80 %) or has a survivor that is not explained. Slow (minutes per
module): not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ROOT / "benchmarks" / "mutation.yaml"
# what the unit tests read besides src/ and tests/ (the configs, the schema)
COPIED = ("src", "tests", "config", "workflow", "rules", "Snakefile", "pyproject.toml")
DETECTED = ("killed", "timeout", "segfault", "caught by type check")
RESULT_LINE = re.compile(r"^\s+(\S+): (.+)$")


@dataclass
class Score:
    module: str
    statuses: dict[str, str]  # mutant name -> mutmut's status
    equivalent: dict[str, str]  # mutant name -> why no test can kill it
    seconds: float
    unexplained: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.unexplained = [
            name
            for name, status in sorted(self.statuses.items())
            if status not in DETECTED and name not in self.equivalent
        ]

    @property
    def killed(self) -> int:
        return sum(status in DETECTED for status in self.statuses.values())

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / len(self.statuses) if self.statuses else 0.0

    def stale(self) -> list[str]:
        """Listed equivalents that are no longer survivors (killed, or renamed by a change
        to their function): the list must follow the code."""
        return sorted(
            n for n in self.equivalent if n not in self.statuses or self.statuses[n] in DETECTED
        )


def load_targets(path: Path = TARGETS) -> dict[str, dict]:
    """paper -> module path -> {tests, equivalent}."""
    return yaml.safe_load(path.read_text())


def select(targets: dict[str, dict], wanted: list[str]) -> dict[str, dict]:
    """The modules named (a paper name selects all of its modules); none named: all."""
    modules = {m: spec for paper in targets.values() for m, spec in paper.items()}
    if not wanted:
        return modules
    chosen = {}
    for name in wanted:
        if name in targets:
            chosen |= targets[name]
        elif name in modules:
            chosen[name] = modules[name]
        else:
            raise SystemExit(f"{name!r} is neither a paper nor a module of {TARGETS.name}")
    return chosen


def mutmut_settings(module: str, tests: list[str]) -> str:
    """The [tool.mutmut] table: mutate one module, select its tests, one pytest process (the
    project's addopts ask for two xdist workers; mutmut forks its own)."""
    quoted = ", ".join(f'"{t}"' for t in tests)
    copied = ", ".join(f'"{name}"' for name in COPIED if name not in ("src", "tests"))
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"also_copy = [{copied}]\n"
        f'only_mutate = ["{module}"]\n'
        f"pytest_add_cli_args_test_selection = [{quoted}]\n"
        'pytest_add_cli_args = ["-n", "0", "-p", "no:cacheprovider"]\n'
    )


def prepare(scratch: Path, module: str, tests: list[str]) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, scratch / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, scratch / name)
    with open(scratch / "pyproject.toml", "a") as handle:
        handle.write(mutmut_settings(module, tests))


def mutmut(scratch: Path, *args: str, capture: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=scratch,
        env=env,
        text=True,
        capture_output=capture,
        check=False,
    )


def parse_results(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in map(RESULT_LINE.match, text.splitlines()) if m}


def score_module(module: str, spec: dict, scratch: Path, jobs: int) -> Score:
    prepare(scratch, module, spec["tests"])
    started = time.perf_counter()
    run = mutmut(scratch, "run", "--max-children", str(jobs))
    seconds = time.perf_counter() - started
    if run.returncode != 0:  # no score: reported as a module with no mutant killed
        print(f"mutmut failed on {module} (exit {run.returncode}); see above", flush=True)
        return Score(module, {}, spec.get("equivalent") or {}, seconds)
    statuses = parse_results(mutmut(scratch, "results", "--all", "true", capture=True).stdout)
    return Score(module, statuses, spec.get("equivalent") or {}, seconds)


def report(scores: list[Score], scratch_of: dict[str, Path]) -> None:
    print(
        f"\n{'module':44} {'mutants':>7} {'killed':>6} {'equiv.':>6} {'other':>5} "
        f"{'killed %':>8} {'minutes':>7}"
    )
    for s in scores:
        explained = sum(n in s.equivalent and st not in DETECTED for n, st in s.statuses.items())
        print(
            f"{s.module:44} {len(s.statuses):7d} {s.killed:6d} {explained:6d} "
            f"{len(s.unexplained):5d} {s.percent:8.1f} {s.seconds / 60:7.1f}"
        )
    for s in scores:
        for name in s.stale():
            print(f"\n{s.module}: listed as equivalent but not a survivor now: {name}")
        for name in s.unexplained:
            shown = mutmut(scratch_of[s.module], "show", name, capture=True).stdout
            print(f"\n{s.module}: {s.statuses[name]}, not explained\n{shown.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="papers or module paths (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once")
    parser.add_argument("--min-score", type=float, default=80.0, help="killed %% required")
    parser.add_argument("--keep", type=Path, help="keep each module's scratch copy under DIR")
    args = parser.parse_args(argv)
    modules = select(load_targets(), args.names)
    scores, scratch_of = [], {}
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        base = args.keep or Path(tmp)
        for module, spec in modules.items():
            scratch = base / module.replace("/", "_").removesuffix(".py")
            if scratch.exists():
                shutil.rmtree(scratch)
            scratch.mkdir(parents=True)
            print(f"== {module} against {' '.join(spec['tests'])}", flush=True)
            scores.append(score_module(module, spec, scratch, args.jobs))
            scratch_of[module] = scratch
        report(scores, scratch_of)
    failing = [s.module for s in scores if s.percent < args.min_score or s.unexplained]
    if failing:
        print(f"\nbelow {args.min_score:g} % killed or with unexplained survivors: {failing}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
