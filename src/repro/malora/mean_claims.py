"""Verdicts on a per-seed statistic of MaLoRA's claims: a threshold criterion on its mean
over seeds judged on the mean's t interval (a point claim over repetitions gets an
interval), and the same statistic at the seeds first registered, set beside the claim."""

from __future__ import annotations

import dataclasses

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    check,
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
