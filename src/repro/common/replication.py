"""Verdicts that replicate: the same run on an independent seed set, and the two compared.

* ``overlay``: every seed of a config shifted by an offset (each key whose name contains
  "seed": data, split, initialisation, evaluation and calibration seeds alike), as an
  overlay for ``--configfile config/config.yaml OVERLAY`` (``config/overlays/seeds_b.yaml``
  is this with offset 1000; a test keeps it equal to what this module writes).
* ``report``: ``results/replication.md``: per claim, the verdict on each seed set with its
  interval, and the verdict on the pooled seeds (a paired claim's per-seed differences of
  both sets, judged by the claim's own criterion; seeds of the two sets are independent
  units, so pooling them is one larger paired sample).

``make replicate`` runs both (README, "Replication").
"""

from __future__ import annotations

import argparse
import copy
import importlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    REPRODUCED,
    combined_verdict,
    paired_verdict,
)
from repro.common.controls import number_text
from repro.common.io import read_json, write_text
from repro.common.ledger import split
from repro.common.stats import paired_difference

OFFSET = 1000


# keys named like seeds that are not random seeds, and why
NOT_RANDOM = {
    "degree_seeds": "SBD's greedy: how many rows of highest degree a round starts from",
    "failed_seed": "MaLoRA: how a seed without a result is scored (loss or fallback)",
}
SEED_KEY = re.compile(r"^(.+_)?seeds?$")


def is_seed_key(key: Any) -> bool:
    """A random seed of the config: ``seed``, ``seeds``, ``*_seed`` or ``*_seeds``, less
    :data:`NOT_RANDOM`."""
    return isinstance(key, str) and bool(SEED_KEY.match(key)) and key not in NOT_RANDOM


def _shift(value, offset: int):
    if isinstance(value, bool):
        raise ValueError(f"a seed key holds a boolean: {value!r}")
    if isinstance(value, int):
        return value + offset
    if isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return [v + offset for v in value]
    raise ValueError(f"a seed key holds {value!r}: expected an integer or a list of integers")


def seed_paths(config: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of every seed key in ``config``, depth first (list items by index)."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            if is_seed_key(key) and not isinstance(value, Mapping):
                yield (*path, key), value
            else:
                yield from seed_paths(value, (*path, key))
    elif isinstance(config, list):
        for i, item in enumerate(config):
            yield from seed_paths(item, (*path, i))


def _shifted_copy(node: Any, offset: int) -> Any:
    if isinstance(node, Mapping):
        return {
            k: _shift(v, offset)
            if is_seed_key(k) and not isinstance(v, Mapping)
            else _shifted_copy(v, offset)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_shifted_copy(v, offset) for v in node]
    return copy.deepcopy(node)


def overlay(config: Mapping[str, Any], offset: int = OFFSET) -> dict:
    """The smallest overlay that shifts every seed of ``config`` by ``offset``: the nested
    mappings down to each seed key (Snakemake merges mappings key by key); a list that holds
    a seed somewhere inside is given whole (lists replace, they do not merge)."""
    found: dict = {}
    for key, value in config.items():
        if is_seed_key(key) and not isinstance(value, Mapping):
            found[key] = _shift(value, offset)
        elif isinstance(value, Mapping):
            inner = overlay(value, offset)
            if inner:
                found[key] = inner
        elif isinstance(value, list) and any(True for _ in seed_paths(value)):
            found[key] = _shifted_copy(value, offset)
    return found


# --- the report ------------------------------------------------------------------------------
def pooled(entry_a: Mapping, entry_b: Mapping, spec: Mapping) -> dict | None:
    """The claim judged on both seed sets' per-seed differences together, part by part
    (every part must hold: :func:`combined_verdict`); None where it cannot be pooled (not a
    paired claim, a part missing on one side, or a criterion without its margin)."""
    a, b, criterion = entry_a.get("differences"), entry_b.get("differences"), spec.get("criterion")
    if not a or not b or set(a) != set(b) or not criterion or "delta" not in criterion:
        return None
    parts = []
    for label in a:
        values = [*a[label].values(), *b[label].values()]
        if None in values:
            return None
        diff = paired_difference(
            values, [0.0] * len(values), confidence=criterion.get("confidence", 0.95)
        )
        parts.append((label, diff))
    verdict = combined_verdict([paired_verdict(d, criterion) for _, d in parts])
    label, worst = min(parts, key=lambda p: p[1].low)
    return {
        "verdict": verdict,
        "measured": worst.mean,
        "interval": [worst.low, worst.high],
        "n": worst.n,
        "part": label,
    }


def _shown(entry: Mapping | None) -> str:
    if entry is None:
        return "not run"
    text = f"{entry['verdict']}"
    if entry.get("fragile"):
        text += " · fragile"
    if entry.get("measured") is not None:
        text += f", {number_text(entry['measured'], entry.get('interval'))}"
    return text


def movement(a: str, b: str) -> str:
    """How a verdict moved between seed sets: kept, flipped (reproduced ↔ contradicted), or
    moved (between a decided verdict and anything else)."""
    if a == b:
        return "kept"
    if {a, b} == {REPRODUCED, CONTRADICTED}:
        return "flipped"
    return "moved"


def compare(papers: list[tuple[str, str, list, list, Mapping]]) -> str:
    """The Markdown report: per paper (title, id, entries of set A, of set B, claim specs),
    a table of claim, verdict on each set, verdict on the pooled seeds, and how it moved."""
    lines = ["# Verdicts on two independent seed sets", ""]
    moves = {"kept": 0, "moved": 0, "flipped": 0}
    body = []
    for title, _paper, entries_a, entries_b, specs in papers:
        claims_b = {e["id"]: e for e in split(entries_b)[0]}
        body += [f"## {title}", "", "| claim | seed set A | seed set B | pooled | moved |"]
        body.append("|---|---|---|---|---|")
        for e in split(entries_a)[0]:
            other = claims_b.get(e["id"])
            move = movement(e["verdict"], other["verdict"]) if other else "–"
            moves[move] = moves.get(move, 0) + 1
            both = pooled(e, other, specs.get(e["id"], {})) if other else None
            shown = "– (not a paired claim)"
            if both:
                number = number_text(both["measured"], both["interval"])
                shown = f"{both['verdict']}, {number} (n = {both['n']})"
            cells = [e["id"], _shown(e), _shown(other), shown, move]
            body.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        body.append("")
    total = sum(moves[k] for k in ("kept", "moved", "flipped"))
    lines += [
        f"{total} claims: {moves['kept']} kept their verdict, {moves['moved']} moved between a "
        f"decided verdict and {INCONCLUSIVE} (or another), {moves['flipped']} flipped between "
        f"{REPRODUCED} and {CONTRADICTED}. Pooled: both sets' per-seed differences judged by "
        "the claim's own criterion (paired claims only).",
        "",
    ]
    return "\n".join(lines + body)


def _papers(config: Mapping, results_a: Path, results_b: Path):
    for paper, section in config["papers"].items():
        if not section.get("enabled", True):
            continue
        a, b = results_a / paper / "claims.json", results_b / paper / "claims.json"
        if a.exists() and b.exists():
            title = importlib.import_module(f"repro.{paper}").TITLE
            yield title, paper, read_json(a), read_json(b), section.get("claims", {})


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("overlay", help="print the overlay that shifts every seed")
    o.add_argument("config", nargs="?", default="config/config.yaml")
    o.add_argument("--offset", type=int, default=OFFSET)
    r = sub.add_parser("report", help="write the comparison of two runs' claims")
    r.add_argument("results_a", type=Path)
    r.add_argument("results_b", type=Path)
    r.add_argument("--config", default="config/config.yaml")
    r.add_argument("--output", default="results/replication.md")
    a = p.parse_args(argv)
    if a.command == "overlay":
        config = yaml.safe_load(Path(a.config).read_text())
        header = (
            f"# Every seed of {a.config} shifted by {a.offset}: an independent seed set.\n"
            f"# Written by `python -m repro.common.replication overlay {a.config} --offset "
            f"{a.offset}`; tests/common/test_replication.py keeps it equal.\n"
        )
        text = yaml.safe_dump(overlay(config, a.offset), sort_keys=False, default_flow_style=None)
        print(header + text, end="")
        return
    config = yaml.safe_load(Path(a.config).read_text())
    write_text(a.output, compare(list(_papers(config, a.results_a, a.results_b))))
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
