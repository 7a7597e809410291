"""Claim checks: a measured number against a criterion written in the config before the run.

Every paper writes ``results/<paper>/claims.json`` as a list of :class:`Claim`; the
workflow gathers them into ``results/claims.md`` with :func:`claims_markdown`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTED = "not tested at this scale"

log = logging.getLogger(__name__)

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


def check_spec(claim_id: str, spec: Mapping[str, Any], measured: float, details: str = "") -> Claim:
    """:func:`check` of a claim as written in config (claim, criterion, paper_value)."""
    return check(
        claim_id,
        spec["claim"],
        measured,
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=details,
    )


def check_worst(
    claim_id: str, spec: Mapping[str, Any], values: Mapping[Any, float], pick, details: str
) -> Claim:
    """Check the least favourable of several settings' numbers (``pick`` = min or max)."""
    return check_spec(claim_id, spec, values[pick(values, key=values.get)], details)


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


def comparison_claim(claim_id: str, spec: Mapping[str, Any], metrics: Mapping[str, Any]) -> Claim:
    """A ``comparison`` claim from config: ``spec`` names dataset, metric, method, baselines,
    lower_is_better, criterion (and optionally statistic, paper_value); ``metrics`` maps data
    set names to metrics documents {methods: {m: {mean, std, [selection]}}}.

    A data set or method absent from this run makes the claim "not tested at this scale";
    methods that do not report the metric (ERM estimates no π̂) are left out.
    """
    paper_value = spec.get("paper_value")
    if spec["dataset"] not in metrics:
        return not_tested(
            claim_id,
            spec["claim"],
            f"data set {spec['dataset']} is not in this run",
            paper_value=paper_value,
        )
    metric = spec["metric"]
    methods = {m: v for m, v in metrics[spec["dataset"]]["methods"].items() if metric in v["mean"]}
    missing = [m for m in [spec["method"], *spec["baselines"]] if m not in methods]
    if missing:
        return not_tested(
            claim_id,
            spec["claim"],
            f"{missing} report no {metric} in this run",
            paper_value=paper_value,
        )
    claim = compare_methods(
        claim_id,
        spec["claim"],
        {m: v["mean"][metric] for m, v in methods.items()},
        {m: v["std"][metric] for m, v in methods.items()},
        method=spec["method"],
        baselines=spec["baselines"],
        lower_is_better=spec["lower_is_better"],
        criterion=spec["criterion"],
        statistic=spec.get("statistic", "difference"),
        paper_value=paper_value,
    )
    context = f"{spec['dataset']}, {metric}"
    selection = methods[spec["method"]].get("selection")
    if selection:
        context += f", model selection on {selection} labels"
    return dataclasses.replace(claim, details=f"{context}: {claim.details}")


SHARED_KINDS = ("not_tested",)


def claim_kinds(kinds: Mapping[str, Any]) -> tuple[str, ...]:
    """Every kind a paper's config may name: its own (``repro.<paper>.claims.KINDS``) and the
    shared ones. The config check derives the allowed kinds from this, nothing else lists them."""
    return (*kinds, *SHARED_KINDS)


def run_claims(
    specs: Mapping[str, Mapping[str, Any]], kinds: Mapping[str, Any], inputs: Any
) -> list[Claim]:
    """Check every configured claim with its kind's handler, ``handler(id, spec, inputs)``
    (``not_tested`` built in); ``inputs`` is whatever the paper's handlers read."""
    claims = []
    for claim_id, spec in specs.items():
        if spec["kind"] == "not_tested":
            claim = not_tested(
                claim_id, spec["claim"], spec["reason"], paper_value=spec.get("paper_value")
            )
        elif spec["kind"] in kinds:
            claim = kinds[spec["kind"]](claim_id, spec, inputs)
        else:
            raise ValueError(f"claim {claim_id}: unknown kind {spec['kind']!r}")
        log.info("%s: %s (%s)", claim_id, claim.verdict, claim.details)
        claims.append(claim)
    return claims
