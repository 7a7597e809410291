"""Building blocks of the claims: several conditions in one verdict, the guard for a data
set that is not in this run, and number formatting for the details."""

from __future__ import annotations

import dataclasses
import math

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    REPRODUCED,
    Claim,
    all_hold,
    check,
    not_tested,
    paired_criterion_text,
    paired_verdict,
)
from repro.common.stats import PairedDifference


def all_of(cid: str, spec: dict, parts: list[tuple[str, Claim]]) -> Claim:
    """:func:`repro.common.claims.all_hold` (holds iff every condition holds; the least
    favourable one gives the measured number), with every condition's criterion shown."""
    claim = all_hold(cid, parts)
    criteria = " and ".join(c.criterion for _, c in parts if c.criterion)
    return dataclasses.replace(claim, criterion=criteria, paper_value=spec.get("paper_value"))


def condition(label: str, spec: dict, key: str, measured, details: str = "") -> tuple[str, Claim]:
    """One condition: ``measured`` against the threshold criterion ``spec[key]``."""
    shown = "nan" if measured is None else f"{float(measured):.4g}"
    details = f"measured {shown}" + (f", {details}" if details else "")
    return label, check("", spec["claim"], measured, spec[key], details=details)


def interval_condition(
    label: str, spec: dict, key: str, measured, bounds, details: str = ""
) -> tuple[str, Claim]:
    """A threshold criterion ``spec[key] = {op, threshold}`` judged three-way on an
    interval: reproduced when the whole interval satisfies it, contradicted when none of it
    does, else inconclusive; a missing value is "not reproduced" (:func:`check`)."""
    label, claim = condition(label, spec, key, measured, details)
    low, high = bounds
    if claim.measured is None or low is None or high is None or math.isnan(low + high):
        return label, dataclasses.replace(claim, verdict=check("", "", None, spec[key]).verdict)
    op, threshold = spec[key]["op"], float(spec[key]["threshold"])
    below = op in ("<", "<=")
    holds_all = high < threshold if below else low > threshold
    holds_none = low >= threshold if below else high <= threshold
    verdict = REPRODUCED if holds_all else CONTRADICTED if holds_none else INCONCLUSIVE
    shown = f"{claim.details}, interval [{low:.4g}, {high:.4g}]"
    return label, dataclasses.replace(
        claim,
        verdict=verdict,
        interval=(float(low), float(high)),
        details=shown,
        criterion=f"{claim.criterion} over the whole 95% interval",
    )


def bootstrap_claim(cid: str, spec: dict, r: dict, key: str, details: str) -> Claim:
    """A paired criterion (``beats`` / ``matches`` / ``at_least``, :func:`paired_verdict`)
    judged on a hierarchical-bootstrap interval ``r = {key, low, high}`` (positive = the
    claim's side) instead of a t interval over seeds."""
    criterion = spec["criterion"]
    diff = PairedDifference(
        r[key],
        r["low"],
        r["high"],
        0,
        "hierarchical bootstrap",
        criterion.get("confidence", 0.95),
        (),
    )
    return Claim(
        cid,
        spec["claim"],
        paired_criterion_text(criterion),
        paired_verdict(diff, criterion),
        r[key],
        spec.get("paper_value"),
        details,
        (r["low"], r["high"]),
    )


def needs(*keys: str):
    """The handler reads the summaries of the data sets named by ``spec[key]``; one that is
    not in this run makes the claim "not tested" with the reason."""

    def wrap(handler):
        def run(cid, spec, inputs, **extra):
            docs = [inputs["metrics"].get(spec[k]) for k in keys]
            for k, doc in zip(keys, docs, strict=True):
                if doc is None:
                    reason = f"data set {spec[k]} is not in this run"
                    return not_tested(
                        cid, spec["claim"], reason, paper_value=spec.get("paper_value")
                    )
            return handler(cid, spec, *docs, **extra)

        return run

    return wrap


def interval(record: dict, key: str) -> str:
    value, low, high = rounded([record[key], record["low"], record["high"]])
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def rounded(values):
    """Three decimals for the details; a missing value (JSON null) shows as nan."""

    def one(v):
        return math.nan if v is None else round(float(v), 3)

    if isinstance(values, dict):
        return {k: one(v) for k, v in values.items()}
    return [one(v) for v in values]
