"""PLSA's estimator-study claims: each a statistic over the repetitions of the rate study
with an interval over them (:mod:`repro.plsa.repetitions`), judged per (shift, σ) setting;
every setting must hold, and the least favourable one's number is the claim's.

* ``small_edges_win``: the share of repetitions at the smallest |E| where ``estimator``'s
  error is below ``against``'s (Wilson interval);
* ``rate_slope``: |slope − ``rate``| of each of ``estimators``' log-log fits of error on |E|
  (from the slope's bootstrap interval over repetitions);
* ``hard_label_floor``: ``estimator``'s mean error over ``against``'s at the largest |E|
  (bootstrap interval over repetitions).

The estimators are the rate study's (:data:`repro.plsa.study.ESTIMATORS`), the planted
``population`` and ``source`` among them, so that a control is another estimator of the
same study. A missing error is "not reproduced" with the (n, seed) it lacks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.common import controls as ctl
from repro.common.claims import Claim, combined_verdict, missing_seeds, not_tested
from repro.common.verdicts import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    REPRODUCED,
)
from repro.plsa import repetitions as reps

_FAVOUR = {CONTRADICTED: 0, NOT_REPRODUCED: 1, INCONCLUSIVE: 2, REPRODUCED: 3}


def _settings(rate: dict, seeds=None) -> dict[str, dict[tuple[int, int], dict]]:
    """(shift, σ) label -> {(n, seed): row}, keeping only ``seeds`` when given."""
    out: dict = {}
    for row in rate["rows"]:
        if seeds is None or row["seed"] in seeds:
            label = f"{row['shift']}, σ={row['sigma']:g}"
            out.setdefault(label, {})[(row["n"], row["seed"])] = row
    return dict(sorted(out.items()))


def _matrix(rows: dict, sizes, seeds, read, what: str) -> np.ndarray | str:
    """(sizes, repetitions) values ``read(row)``, or the reason some cannot be read."""
    values = {(n, s): read(rows[(n, s)]) if (n, s) in rows else None for n in sizes for s in seeds}
    missing = missing_seeds(values)
    if missing:
        return f"{what}: no value at (n, seed) {missing}"
    return np.array([[values[(n, s)] for s in seeds] for n in sizes], dtype=float)


def _errors(rows: dict, estimator: str, sizes, seeds, label: str) -> np.ndarray | str:
    return _matrix(
        rows, sizes, seeds, lambda r: r["error"].get(estimator), f"{label} {estimator} error"
    )


def _bootstrap(spec, statistic, repetitions: int) -> tuple[float, float, float]:
    return reps.bootstrap(
        statistic,
        repetitions,
        resamples=spec["bootstrap"]["resamples"],
        seed=spec["bootstrap"]["seed"],
        confidence=spec["confidence"],
    )


def _grid(rows: dict) -> tuple[list[int], list[int]]:
    return sorted({n for n, _ in rows}), sorted({s for _, s in rows})


@dataclasses.dataclass(frozen=True)
class _Part:
    label: str
    verdict: str
    measured: float | None
    interval: tuple[float, float] | None
    text: str


def _part(spec, label, measured, low, high, text) -> _Part:
    criterion = spec["criterion"]
    verdict = reps.verdict(criterion["op"], float(criterion["threshold"]), low, high)
    return _Part(label, verdict, measured, (low, high), f"{label}: {text}, {verdict}")


def _criterion_text(spec, interval: str) -> str:
    criterion = spec["criterion"]
    what = criterion.get("description", "measured")
    pct = f"{100 * spec['confidence']:g}%"
    return f"{what} {criterion['op']} {float(criterion['threshold']):g} ({pct} {interval})"


def _combined(cid, spec, parts: list[_Part | str], interval: str, prefix: str) -> Claim:
    """Every setting must hold; the least favourable setting's number is the claim's (by
    verdict, then by the number itself: the smallest share or ratio, the largest distance).
    A part that is a string is the reason a value is missing: "not reproduced"."""
    text = _criterion_text(spec, interval)
    missing = [p for p in parts if isinstance(p, str)]
    if missing:
        return Claim(
            cid,
            spec["claim"],
            text,
            NOT_REPRODUCED,
            None,
            spec.get("paper_value"),
            "; ".join(missing),
        )
    lower_fails = spec["criterion"]["op"] in (">=", ">")

    def favour(part: _Part):  # the worst verdict, then the worst number, then interval end
        sign, end = (1, part.interval[0]) if lower_fails else (-1, part.interval[1])
        return (_FAVOUR.get(part.verdict, 0), sign * part.measured, sign * end)

    worst = min(parts, key=favour)
    details = prefix + "; ".join(p.text for p in parts)
    if len(parts) > 1:
        details += f"; the number shown is the worst of these: {worst.label}"
    return Claim(
        cid,
        spec["claim"],
        text,
        combined_verdict([p.verdict for p in parts]),
        worst.measured,
        spec.get("paper_value"),
        details,
        worst.interval,
    )


def _small_edges_win(cid, spec, rate, seeds=None) -> Claim:
    estimator, against = spec["estimator"], spec["against"]
    parts: list = []
    for label, rows in _settings(rate, seeds).items():
        sizes, kept = _grid(rows)
        errors = [_errors(rows, e, sizes[:1], kept, label) for e in (estimator, against)]
        if any(isinstance(e, str) for e in errors):
            parts += [e for e in errors if isinstance(e, str)]
            continue
        wins = int((errors[0][0] < errors[1][0]).sum())
        low, high = reps.wilson(wins, len(kept), spec["confidence"])
        share = wins / len(kept)
        text = f"n={sizes[0]}, {wins}/{len(kept)} = {share:.0%} [{low:.2f}, {high:.2f}]"
        parts.append(_part(spec, label, share, low, high, text))
    prefix = f"{estimator} < {against} at the smallest |E|: "
    return _combined(cid, spec, parts, "Wilson interval over repetitions", prefix)


def _rate_slope(cid, spec, rate, seeds=None) -> Claim:
    settings = {k: v for k, v in _settings(rate, seeds).items() if len(_grid(v)[0]) > 1}
    if not settings:
        return not_tested(cid, spec["claim"], "the estimator study has a single graph size")
    parts: list = []
    for label, rows in settings.items():
        sizes, kept = _grid(rows)
        edges = _matrix(rows, sizes, kept, lambda r: r["edges"], f"{label} edges")
        for estimator in spec["estimators"]:
            errors = _errors(rows, estimator, sizes, kept, label)
            if isinstance(errors, str) or isinstance(edges, str):
                parts.append(errors if isinstance(errors, str) else edges)
                continue
            x, y = np.log(edges), np.log(errors)
            slope, low, high = _bootstrap(
                spec, lambda draws, x=x, y=y: reps.slopes(x, y, draws), len(kept)
            )
            distance = abs(slope - spec["rate"])
            text = f"slope {slope:+.3f} [{low:+.3f}, {high:+.3f}], distance {distance:.3f}"
            low, high = reps.distance_interval(low, high, spec["rate"])
            parts.append(_part(spec, f"{label} {estimator}", distance, low, high, text))
    prefix = (
        f"log-log slopes over n = {sizes} and {len(kept)} repetitions, distance from "
        f"{spec['rate']:g}: "
    )
    return _combined(cid, spec, parts, "bootstrap interval over repetitions", prefix)


def _hard_label_floor(cid, spec, rate, seeds=None) -> Claim:
    estimator, against = spec["estimator"], spec["against"]
    parts: list = []
    for label, rows in _settings(rate, seeds).items():
        sizes, kept = _grid(rows)
        errors = [_errors(rows, e, sizes[-1:], kept, label) for e in (estimator, against)]
        if any(isinstance(e, str) for e in errors):
            parts += [e for e in errors if isinstance(e, str)]
            continue
        ratio, low, high = _bootstrap(
            spec,
            lambda draws, a=errors[0][0], b=errors[1][0]: a[draws].mean(1) / b[draws].mean(1),
            len(kept),
        )
        text = f"n={sizes[-1]}, {ratio:.2f} [{low:.2f}, {high:.2f}]"
        parts.append(_part(spec, label, ratio, low, high, text))
    prefix = f"{estimator} / {against} mean error at the largest |E|: "
    return _combined(cid, spec, parts, "bootstrap interval over repetitions", prefix)


def _with_registered_seeds(handler):
    """The handler's claim, and beside it its verdict on the repetitions first registered
    (``registered_seeds``), where repetitions were added after the claim was first judged."""

    def judge(cid, spec, inputs) -> Claim:
        claim = handler(cid, spec, inputs["rate"])
        registered = spec.get("registered_seeds")
        drawn = {row["seed"] for row in inputs["rate"]["rows"]}
        if not registered or set(registered) == drawn or claim.verdict == NOT_TESTED:
            return claim
        first = handler(cid, spec, inputs["rate"], set(registered))
        kept = sorted(drawn & set(registered))
        found = {
            "seeds": kept,
            "verdict": first.verdict,
            "measured": first.measured,
            "interval": list(first.interval) if first.interval else None,
        }
        shown = ctl.number_text(first.measured, first.interval)
        beside = f"at the {len(kept)} repetitions registered first: {first.verdict}, {shown}"
        return dataclasses.replace(
            claim, at_registered_seeds=found, details=f"{claim.details}; {beside}"
        )

    return judge


# The estimator-study claim kinds, each handler(id, spec, inputs).
KINDS = {
    "small_edges_win": _with_registered_seeds(_small_edges_win),
    "rate_slope": _with_registered_seeds(_rate_slope),
    "hard_label_floor": _with_registered_seeds(_hard_label_floor),
}
