"""Claim checks: a measured number against a criterion written in the config before the run.

Every paper writes ``results/<paper>/claims.json`` as a list of :class:`Claim`; the
workflow gathers them into ``results/claims.md`` with :func:`claims_markdown`.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTED = "not tested at this scale"

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


@dataclasses.dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    criterion: str
    verdict: str
    measured: float | None = None
    paper_value: Any = None
    details: str = ""


def check(
    claim_id: str,
    claim: str,
    measured: float,
    criterion: Mapping[str, Any],
    *,
    paper_value: Any = None,
    details: str = "",
) -> Claim:
    """Compare ``measured`` with ``criterion = {op, threshold, [description]}`` from config.

    A NaN measurement is a failed check, never a pass.
    """
    op = criterion["op"]
    if op not in _OPS:
        raise ValueError(f"claim {claim_id}: criterion op must be one of {sorted(_OPS)}")
    threshold = float(criterion["threshold"])
    measured = float(measured)
    text = f"{criterion.get('description', 'measured')} {op} {threshold:g}"
    held = not math.isnan(measured) and _OPS[op](measured, threshold)
    return Claim(
        id=claim_id,
        claim=claim,
        criterion=text,
        verdict=REPRODUCED if held else NOT_REPRODUCED,
        measured=measured,
        paper_value=paper_value,
        details=details,
    )


def not_tested(claim_id: str, claim: str, reason: str, *, paper_value: Any = None) -> Claim:
    return Claim(
        id=claim_id,
        claim=claim,
        criterion="",
        verdict=NOT_TESTED,
        paper_value=paper_value,
        details=reason,
    )


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def claims_markdown(papers: Iterable[tuple[str, list[Mapping[str, Any]]]]) -> str:
    """One table per paper, plus a count of verdicts, from the papers' claims.json lists."""
    lines = ["# Which claims held", ""]
    counts: dict[str, int] = {}
    sections = []
    for paper, claims in papers:
        sections += [
            f"## {paper}",
            "",
            "| claim | paper | measured | criterion | verdict | details |",
        ]
        sections.append("|---|---|---|---|---|---|")
        for c in claims:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
            cells = [
                c["claim"],
                c.get("paper_value"),
                c.get("measured"),
                c["criterion"],
                f"**{c['verdict']}**",
                c.get("details"),
            ]
            sections.append("| " + " | ".join(_cell(v) for v in cells) + " |")
        sections.append("")
    summary = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    lines += [f"Verdicts: {summary or 'no claims'}.", ""]
    return "\n".join(lines + sections)


def compare_methods(
    claim_id: str,
    claim: str,
    means: Mapping[str, float],
    stds: Mapping[str, float],
    *,
    method: str,
    baselines: list[str],
    lower_is_better: bool,
    criterion: Mapping[str, Any],
    statistic: str = "difference",
    paper_value: Any = None,
) -> Claim:
    """Compare ``method`` with the best of ``baselines`` on one metric (means over seeds).

    The measured number is how much worse ``method`` is than the best baseline:
    ``difference`` in the metric's units, or ``z``, that difference over the pooled
    seed-to-seed standard deviation. Negative means the method is better.
    """
    if statistic not in ("difference", "z"):
        raise ValueError(f"claim {claim_id}: statistic must be 'difference' or 'z'")
    sign = 1.0 if lower_is_better else -1.0
    best = min(baselines, key=lambda b: sign * means[b])
    gap = sign * (means[method] - means[best])
    pooled = math.sqrt((stds[method] ** 2 + stds[best] ** 2) / 2)
    if statistic == "z" and pooled == 0:  # one seed, or identical seeds: no spread
        measured = math.copysign(math.inf, gap) if gap else 0.0
    else:
        measured = gap / pooled if statistic == "z" else gap
    details = (
        f"{method} {means[method]:.4g} ± {stds[method]:.2g} vs best baseline {best} "
        f"{means[best]:.4g} ± {stds[best]:.2g} (mean ± sd over seeds)"
    )
    described = {
        **criterion,
        "description": criterion.get("description", f"shortfall vs best baseline ({statistic})"),
    }
    return check(claim_id, claim, measured, described, paper_value=paper_value, details=details)
