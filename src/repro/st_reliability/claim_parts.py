"""Building blocks of the claims: several conditions in one verdict, the guard for a data
set that is not in this run, and number formatting for the details."""

from __future__ import annotations

import dataclasses
import math

from repro.common.claims import Claim, all_hold, check, not_tested


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


def needs(*keys: str):
    """The handler reads the summaries of the data sets named by ``spec[key]``; one that is
    not in this run makes the claim "not tested" with the reason."""

    def wrap(handler):
        def run(cid, spec, inputs):
            docs = [inputs["metrics"].get(spec[k]) for k in keys]
            for k, doc in zip(keys, docs, strict=True):
                if doc is None:
                    reason = f"data set {spec[k]} is not in this run"
                    return not_tested(
                        cid, spec["claim"], reason, paper_value=spec.get("paper_value")
                    )
            return handler(cid, spec, *docs)

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
