"""Controls: a claim is judged only where its run shows it could have come out either way.

Every claim of the config names, under ``controls``, a **positive** control (the effect
planted, or the oracle) and a **negative** control (the effect absent). Each is the claim's
own spec with a few keys replaced (``set``: another method, signal, data set or arm of the
same run), judged by the claim's own handler against its own criterion, in the same claims
job. A side that cannot exist says why instead (``{none: reason}``); so may the whole key
(``controls: {none: reason}``). The claim's verdict is then gated:

- positive control not reproduced -> **uninformative**: this setup cannot show the effect;
- negative control reproduced (or not computable) -> **uninformative**: the statistic does
  not separate the effect from its absence;
- both pass -> the claim's own verdict stands.

The claim's own verdict is kept beside (``own_verdict``), and each control's verdict and
number are recorded on the claim (``controls``) for the ledger.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from repro.common.verdicts import (
    CONTRADICTED,
    DECIDED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    REPRODUCED,
    UNINFORMATIVE,
)

POSITIVE, NEGATIVE = "positive", "negative"
SIDES = (POSITIVE, NEGATIVE)
# keys of a claim's spec that describe the claim's record, not what its handler computes
RECORD_KEYS = ("controls", "registered", "revised", "registered_seeds")


def control_spec(spec: Mapping[str, Any], replaced: Mapping[str, Any]) -> dict:
    """The claim's spec with ``replaced`` keys set: what the claim's handler judges for a
    control (the record keys dropped, so a control never runs controls of its own)."""
    own = {k: v for k, v in spec.items() if k not in RECORD_KEYS}
    return {**own, **replaced}


def passes(side: str, verdict: str) -> bool:
    """A positive control passes when it is reproduced; a negative one when it is not (it is
    contradicted or inconclusive: a control that could not be computed shows nothing)."""
    if side == POSITIVE:
        return verdict == REPRODUCED
    return verdict in (CONTRADICTED, INCONCLUSIVE)


def number_text(measured, interval) -> str:
    """``+0.12 [+0.05, +0.19]``, or "no value"."""
    if measured is None:
        return "no value"
    text = f"{measured:+.4g}"
    if interval and None not in interval:
        text += f" [{interval[0]:+.4g}, {interval[1]:+.4g}]"
    return text


def record(side: str, about: str, claim) -> dict:
    """What the ledger shows of one control: its verdict, number and whether it passed."""
    return {
        "side": side,
        "about": about,
        "verdict": claim.verdict,
        "measured": claim.measured,
        "interval": list(claim.interval) if claim.interval else None,
        "passed": passes(side, claim.verdict),
        "details": claim.details,
    }


def run_controls(spec: Mapping[str, Any], judge: Callable[[dict], Any]) -> list[dict]:
    """Every control of ``spec`` judged by ``judge(spec) -> Claim`` (the claim's own
    handler): one record per side, ``{side, none}`` where the config says none can exist."""
    controls = spec.get("controls") or {}
    if "none" in controls:
        return [{"side": side, "none": controls["none"]} for side in SIDES]
    found = []
    for side in SIDES:
        entry = controls.get(side)
        if entry is None:
            continue
        if "none" in entry:
            found.append({"side": side, "none": entry["none"]})
            continue
        claim = judge(control_spec(spec, entry.get("set", {})))
        found.append(record(side, entry.get("about", ""), claim))
    return found


def gate(claim, controls: list[dict]):
    """The claim with its controls recorded and its verdict gated on them (see the module
    text). A claim not tested, or with a value missing, keeps its verdict."""
    claim = dataclasses.replace(claim, controls=tuple(controls))
    failed = [c for c in controls if "none" not in c and not c["passed"]]
    if not failed or claim.verdict in (NOT_TESTED, NOT_REPRODUCED):
        return claim
    reasons = []
    for c in failed:
        number = number_text(c["measured"], c["interval"])
        if c["side"] == POSITIVE:
            reasons.append(
                f"the positive control ({c['about']}) came out {c['verdict']}, {number}: this "
                "setup cannot show the effect"
            )
        else:
            reasons.append(
                f"the negative control ({c['about']}) came out {c['verdict']}, {number}: the "
                "statistic does not separate the effect from its absence"
            )
    text = "; ".join(reasons) + f"; the claim's own verdict: {claim.verdict}"
    return dataclasses.replace(
        claim,
        verdict=UNINFORMATIVE,
        own_verdict=claim.verdict,
        details=f"{text}; {claim.details}" if claim.details else text,
    )


def boundaries(criterion: Mapping[str, Any] | None) -> tuple[float, ...]:
    """The numbers where a criterion's verdict changes, in the units of the claim's
    interval: a threshold; a paired test's margin (beats δ, matches ±δ, at_least −δ)."""
    if not isinstance(criterion, Mapping):
        return ()
    if "threshold" in criterion:
        return (float(criterion["threshold"]),)
    if "delta" not in criterion or "test" not in criterion:
        return ()
    delta = float(criterion["delta"])
    return {"beats": (delta,), "matches": (-delta, delta), "at_least": (-delta,)}.get(
        criterion["test"], ()
    )


FRAGILE_SHARE = 0.25  # of the interval's half-width


def fragile(verdict: str, interval, edges: tuple[float, ...]) -> bool:
    """A decided verdict whose interval ends within a quarter of its half-width of a
    boundary: another seed set may well move it."""
    if verdict not in DECIDED or not interval or not edges or None in interval:
        return False
    low, high = (float(v) for v in interval)
    if math.isnan(low) or math.isnan(high):
        return False
    gap = min(abs(end - edge) for end in (low, high) for edge in edges)
    return gap < FRAGILE_SHARE * (high - low) / 2
