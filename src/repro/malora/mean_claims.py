"""Verdicts on a per-seed statistic of MaLoRA's claims: a threshold criterion on its mean
over seeds judged on the mean's t interval (a point claim over repetitions gets an
interval), and the same statistic at the seeds first registered, set beside the claim."""

from __future__ import annotations

import dataclasses
import math

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    check,
    combined_verdict,
    missing_seeds,
)
from repro.common.controls import number_text
from repro.common.stats import paired_difference


def mean_interval(claim_id, spec, per_seed: dict, details: str = "") -> Claim:
    """A threshold criterion on the mean of per-seed values, judged on its t interval:
    reproduced when the whole interval meets the criterion, contradicted when none of it
    does, else inconclusive; a missing seed (or fewer than two) is "not reproduced"."""
    criterion = spec["criterion"]
    base = check(claim_id, spec["claim"], 0.0, criterion)  # the criterion's text, validated
    missing = missing_seeds(per_seed)
    if missing or len(per_seed) < 2:
        reason = f"seeds {missing} have no value" if missing else "fewer than two seeds"
        return dataclasses.replace(
            base,
            verdict=NOT_REPRODUCED,
            measured=None,
            details="; ".join(filter(None, [details, reason])),
        )
    diff = paired_difference(
        list(per_seed.values()), [0.0] * len(per_seed), confidence=criterion.get("confidence", 0.95)
    )
    ends = [
        check(claim_id, "", end, criterion).verdict == REPRODUCED for end in (diff.low, diff.high)
    ]
    verdict = REPRODUCED if all(ends) else CONTRADICTED if not any(ends) else INCONCLUSIVE
    return dataclasses.replace(
        base,
        verdict=verdict,
        measured=diff.mean,
        interval=(diff.low, diff.high),
        details="; ".join(
            filter(
                None, [details, f"per seed {[round(v, 4) for v in per_seed.values()]}", diff.text()]
            )
        ),
    )


def beside(claim: Claim, first: Claim, seeds) -> Claim:
    """``claim`` with ``first`` (the same statistic at the seeds first registered) beside."""
    found = {
        "seeds": list(seeds),
        "verdict": first.verdict,
        "measured": first.measured,
        "interval": list(first.interval) if first.interval else None,
    }
    shown = number_text(first.measured, first.interval)
    text = f"at the {len(seeds)} seeds registered first: {first.verdict}, {shown}"
    return dataclasses.replace(claim, at_registered_seeds=found, details=f"{claim.details}; {text}")


def at_registered(claim: Claim, spec, per_seed: dict) -> Claim:
    """The verdict of a per-seed mean at the seeds first registered, beside the claim's."""
    registered = spec.get("registered_seeds")
    if not registered or set(registered) == set(per_seed):
        return claim
    kept = {s: v for s, v in per_seed.items() if s in set(registered)}
    return beside(claim, mean_interval(claim.id, spec, kept), sorted(kept))


def _worse_end(criterion, measured, interval) -> float:
    """How far a part's interval reaches towards the wrong side of the threshold (larger:
    less favourable): its upper end for an upper bound (<, <=), else minus its lower end."""
    if not interval or any(math.isnan(v) for v in interval):
        return math.inf
    return interval[1] if criterion["op"] in ("<", "<=") else -interval[0]


def every_part(claim_id: str, criterion, parts: list[tuple[str, Claim]]) -> Claim:
    """One claim from threshold parts judged on intervals (overlaps): it holds iff every part
    holds; its number and interval, and those at the seeds registered first, are the least
    favourable part's, in the criterion's direction (``all_hold`` reads intervals as higher
    is better)."""
    verdict = combined_verdict([c.verdict for _, c in parts])
    label, worst = max(
        parts,
        key=lambda p: (
            p[1].verdict == verdict,
            _worse_end(criterion, p[1].measured, p[1].interval),
        ),
    )
    listed = "; ".join(f"{n}: {c.verdict}, {number_text(c.measured, c.interval)}" for n, c in parts)
    first = [c.at_registered_seeds for _, c in parts]
    registered = None
    if all(first):
        registered = dict(
            max(first, key=lambda r: _worse_end(criterion, r["measured"], r["interval"]))
        )
        registered["verdict"] = combined_verdict([r["verdict"] for r in first])
    return dataclasses.replace(
        worst,
        id=claim_id,
        verdict=verdict,
        details=f"{listed}; least favourable: {label}" if len(parts) > 1 else worst.details,
        at_registered_seeds=registered,
    )
