"""Claims and checks: measured numbers against criteria written in the config before the run.

A *claim* is an empirical statement of a paper whose outcome was not known when the code
was written. Its verdict is one of

- ``reproduced``: the measured number (with an interval: the whole interval) satisfies the
  criterion;
- ``contradicted``: the number (the whole interval) lies where the claim is false;
- ``inconclusive``: the interval straddles the criterion's boundary (too wide to tell);
- ``uninformative``: one of the claim's controls failed in this run, so its own verdict
  (kept beside) could not have come out the other way (:mod:`repro.common.controls`);
- ``not reproduced``: the claim could not be judged because a value it needs is missing
  (a NaN, a failed seed, a run that never trained), with the reason;
- ``not tested at this scale``, with the reason.

A point claim without an interval is reproduced or contradicted. A *check* is a property
that holds by construction unless there is a bug (verdict passed / failed); it is reported
apart and never counted as a claim. Every paper writes both to
``results/<paper>/claims.json``; :mod:`repro.common.ledger` gathers them.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import operator
from collections.abc import Mapping
from typing import Any

from repro.common import controls as ctl
from repro.common.stats import PairedDifference, paired_difference
from repro.common.verdicts import (  # noqa: F401 (the verdicts are imported from here too)
    CONTRADICTED,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PASSED,
    REPRODUCED,
    UNINFORMATIVE,
)

CLAIM, CHECK = "claim", "check"

log = logging.getLogger(__name__)

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
PAIRED_TESTS = ("beats", "matches", "at_least")
# Below this many paired units a percentile bootstrap under-covers (5 seeds: 0.84 for a
# nominal 0.95), so paired claims use Student's t there whatever the config asks.
MIN_BOOTSTRAP_UNITS = 20


@dataclasses.dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    criterion: str
    verdict: str
    measured: float | None = None
    paper_value: Any = None
    details: str = ""
    interval: tuple[float, float] | None = None  # the measured number's confidence interval
    type: str = CLAIM
    # filled by run_claims from the config and the controls (repro.common.controls)
    controls: tuple[dict, ...] = ()
    own_verdict: str = ""  # the claim's verdict before a failing control made it uninformative
    fragile: bool = False  # decided, but an interval end lies near the boundary
    registered: str = ""  # the date the criterion was written
    revised: tuple[dict, ...] = ()  # {date, what, why}: changes after results were seen
    at_registered_seeds: dict | None = None  # the verdict at the seeds first registered
    # part label ("" for a single comparison) -> {seed: A − B oriented so positive favours
    # A}: what a replication pools with another seed set's (repro.common.replication)
    differences: dict = dataclasses.field(default_factory=dict)


def _missing(value) -> bool:
    """None, or a NaN of any float type (a NumPy float32 NaN is not a Python float)."""
    if value is None:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def missing_seeds(values: Mapping[Any, Any]) -> list:
    """The keys (seeds, groups) whose value is missing: None or NaN."""
    return [k for k, v in values.items() if _missing(v)]


def over_seeds(values: Mapping[Any, Any], reduce) -> tuple[float | None, str]:
    """``reduce`` (min, max, a mean, ...) of per-seed values, NaN-aware: with a missing or NaN
    seed the result is None and the reason names the seeds, so that :func:`check` turns it
    into "not reproduced" instead of ``min`` silently skipping a NaN."""
    if not values:
        return None, "no seeds to aggregate"
    missing = missing_seeds(values)
    if missing:
        return None, f"seeds {missing} have no value (NaN or not computed)"
    return float(reduce([float(v) for v in values.values()])), ""


def check(
    claim_id: str,
    claim: str,
    measured: float | None,
    criterion: Mapping[str, Any],
    *,
    paper_value: Any = None,
    details: str = "",
) -> Claim:
    """Compare ``measured`` with ``criterion = {op, threshold, [description]}`` from config.

    A missing (None) or NaN measurement never holds: "not reproduced", with the reason.
    """
    op = criterion["op"]
    if op not in _OPS:
        raise ValueError(f"claim {claim_id}: criterion op must be one of {sorted(_OPS)}")
    threshold = float(criterion["threshold"])
    text = f"{criterion.get('description', 'measured')} {op} {threshold:g}"
    if _missing(measured):
        return Claim(
            claim_id,
            claim,
            text,
            NOT_REPRODUCED,
            None,
            paper_value,
            _join(details, "the measured value is missing (NaN or not computed)"),
        )
    measured = float(measured)
    held = _OPS[op](measured, threshold)
    return Claim(
        claim_id,
        claim,
        text,
        REPRODUCED if held else CONTRADICTED,
        measured,
        paper_value,
        details,
    )


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def check_spec(claim_id: str, spec: Mapping[str, Any], measured, details: str = "") -> Claim:
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
    """Check the least favourable of several settings' numbers (``pick`` = min or max); a
    missing setting makes it "not reproduced" (see :func:`over_seeds`)."""
    worst, reason = over_seeds(values, pick)
    return check_spec(claim_id, spec, worst, _join(details, reason))


def mean_claim(
    claim_id: str, spec: Mapping[str, Any], values: Mapping[Any, Any], details=""
) -> Claim:
    """A threshold criterion ``{op, threshold, [confidence]}`` on the mean over seeds of
    per-seed ``values``, with Student's t interval over the seeds (a point claim over
    repetitions): reproduced when the whole interval meets the criterion, contradicted when
    none of it does, else inconclusive. A missing seed, or fewer than two: not reproduced."""
    mean, reason = over_seeds(values, lambda v: sum(v) / len(v))
    if mean is not None and len(values) < 2:
        mean, reason = None, f"an interval needs two seeds or more, got {len(values)}"
    if mean is None:
        return check_spec(claim_id, spec, None, _join(details, reason))
    criterion = spec["criterion"]
    floats = {k: float(v) for k, v in values.items()}
    diff = paired_difference(
        floats, dict.fromkeys(floats, 0.0), confidence=criterion.get("confidence", 0.95)
    )
    claim = check_spec(claim_id, spec, diff.mean, details)
    held = [
        _OPS[criterion["op"]](end, float(criterion["threshold"])) for end in (diff.low, diff.high)
    ]
    verdict = REPRODUCED if all(held) else CONTRADICTED if not any(held) else INCONCLUSIVE
    shown = ", ".join(f"{k}: {v:.4g}" for k, v in floats.items())
    return dataclasses.replace(
        claim,
        verdict=verdict,
        interval=(diff.low, diff.high),
        details=_join(details, f"per seed {{{shown}}}; mean {diff.text(4)}"),
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


# --- paired comparisons over shared seeds ---------------------------------------------------
def _delta(criterion: Mapping[str, Any], min_effect: float | None) -> float:
    """The criterion's margin: the paper's own ``delta`` where the config gives one, else the
    metric's declared minimum effect (``beats``); ``matches``/``at_least`` need a delta."""
    if "delta" in criterion:
        return float(criterion["delta"])
    if min_effect is None:
        raise ValueError(
            f"a paired {criterion['test']!r} criterion needs a margin: the paper's own delta in "
            "the config, or the metric's minimum effect (MIN_EFFECTS in the paper's claims module)"
        )
    return float(min_effect)


def paired_criterion_text(criterion: Mapping[str, Any], min_effect: float | None = None) -> str:
    test = criterion["test"]
    if test not in PAIRED_TESTS:
        raise ValueError(f"paired criterion test must be one of {PAIRED_TESTS}, got {test!r}")
    delta = _delta(criterion, min_effect)
    pct = f"{100 * criterion.get('confidence', 0.95):g}%"
    what = criterion.get("description", "A − B")
    return {
        "beats": f"{what}: {pct} interval above the minimum effect {delta:g}",
        "matches": f"{what}: {pct} interval inside ±{delta:g}",
        "at_least": f"{what}: {pct} interval's lower end above −{delta:g}",
    }[test]


def paired_verdict(
    diff: PairedDifference, criterion: Mapping[str, Any], min_effect: float | None = None
) -> str:
    """The three-way verdict of an oriented difference (positive = A better).

    beats δ: reproduced when the interval lies above δ, contradicted when it lies below δ
    (A is not better by the minimum effect). matches ±δ: reproduced inside ±δ, contradicted
    when it lies wholly outside. at_least −δ: reproduced when its lower end is above −δ,
    contradicted when its upper end is below −δ. Anything else is inconclusive; a missing
    interval (one seed, a NaN) is "not reproduced".
    """
    delta = _delta(criterion, min_effect)
    paired_criterion_text(criterion, min_effect)  # validates the test
    if math.isnan(diff.low) or math.isnan(diff.high):
        return NOT_REPRODUCED
    held, false = {
        "beats": (diff.low > delta, diff.high < delta),
        "matches": (
            -delta < diff.low and diff.high < delta,
            diff.low >= delta or diff.high <= -delta,
        ),
        "at_least": (diff.low > -delta, diff.high < -delta),
    }[criterion["test"]]
    return REPRODUCED if held else CONTRADICTED if false else INCONCLUSIVE


def _oriented(a: Mapping, b: Mapping, criterion: Mapping[str, Any]) -> PairedDifference:
    sign = 1.0 if criterion["higher_is_better"] else -1.0
    method = criterion.get("interval", "t")
    if len(a) < MIN_BOOTSTRAP_UNITS:
        method = "t"
    return paired_difference(
        {k: sign * float(v) for k, v in a.items()},
        {k: sign * float(v) for k, v in b.items()},
        confidence=criterion.get("confidence", 0.95),
        method=method,
    )


def paired_claim(
    claim_id: str,
    spec: Mapping[str, Any],
    a: Mapping,
    b: Mapping,
    details: str = "",
    *,
    min_effect: float | None = None,
) -> Claim:
    """A claim that A beats / matches / is at least B, judged on the per-seed differences.

    ``a`` and ``b`` map seed -> value over the same seeds; ``spec["criterion"]`` is a paired
    criterion ``{test, [delta], higher_is_better, confidence}``; a ``beats`` criterion without
    the paper's own ``delta`` uses ``min_effect``, the metric's declared minimum effect. The
    measured number is the mean difference oriented so that positive means A is better, with
    its interval (paired t below :data:`MIN_BOOTSTRAP_UNITS` seeds); the details give the
    half-width the seeds reached. Different seeds, fewer than two, or a missing value:
    "not reproduced" with the reason.
    """
    criterion = spec["criterion"]
    text = paired_criterion_text(criterion, min_effect)
    if set(a) != set(b) or len(a) < 2 or missing_seeds(a) or missing_seeds(b):
        reason = (
            "needs the same ≥ 2 seeds on both sides without missing values "
            f"(A: {dict(a)}, B: {dict(b)})"
        )
        return Claim(
            claim_id,
            spec["claim"],
            text,
            NOT_REPRODUCED,
            paper_value=spec.get("paper_value"),
            details=_join(details, reason),
        )
    diff = _oriented(a, b, criterion)
    claim = Claim(
        claim_id,
        spec["claim"],
        text,
        paired_verdict(diff, criterion, min_effect),
        diff.mean,
        spec.get("paper_value"),
        _join(details, f"per-seed differences {_fmt(diff.differences)}; {diff.text()}"),
        (diff.low, diff.high),
        differences={"": dict(zip(sorted(a), diff.differences, strict=True))},
    )
    registered = spec.get("registered_seeds")
    if registered and set(registered) != set(a):
        claim = _at_registered_seeds(claim, spec, a, b, registered, min_effect)
    return claim


def _at_registered_seeds(claim: Claim, spec, a, b, seeds, min_effect) -> Claim:
    """Where seeds were added after an inconclusive result, the verdict on the seeds first
    registered, beside the claim's (adding seeds until an interval decides leans towards
    a verdict)."""
    kept = [s for s in a if s in set(seeds)]
    found = {"seeds": kept, "verdict": NOT_REPRODUCED, "measured": None, "interval": None}
    if len(kept) >= 2:
        diff = _oriented({s: a[s] for s in kept}, {s: b[s] for s in kept}, spec["criterion"])
        found |= {
            "verdict": paired_verdict(diff, spec["criterion"], min_effect),
            "measured": diff.mean,
            "interval": [diff.low, diff.high],
        }
    shown = ctl.number_text(found["measured"], found["interval"])
    return dataclasses.replace(
        claim,
        at_registered_seeds=found,
        details=_join(
            claim.details, f"at the {len(kept)} seeds registered first: {found['verdict']}, {shown}"
        ),
    )


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:+.3g}" for v in values) + "]"


def _per_seed(document: Mapping[str, Any], method: str, metric: str) -> dict[int, float]:
    """seed -> value of one method's metric in a metrics document of the shared layout
    ``{seeds, methods: {m: {per_seed: [row per seed], mean, std}}}``."""
    rows = document["methods"][method]["per_seed"]
    return {int(s): row.get(metric) for s, row in zip(document["seeds"], rows, strict=True)}


def comparison_claim(
    claim_id: str,
    spec: Mapping[str, Any],
    metrics: Mapping[str, Any],
    min_effects: Mapping[str, float],
) -> Claim:
    """A ``comparison`` claim: ``method`` against every one of ``baselines`` on one metric of
    one data set, paired over the data set's seeds (``criterion`` is a paired criterion;
    ``min_effects`` maps each metric to its declared minimum effect).

    It holds when it holds against every baseline; the measured number and interval are the
    least favourable baseline's. ``metrics`` maps data set names to metrics documents.
    A data set absent from this run makes the claim "not tested at this scale".
    """
    paper_value = spec.get("paper_value")
    if spec["dataset"] not in metrics:
        return not_tested(
            claim_id,
            spec["claim"],
            f"data set {spec['dataset']} is not in this run",
            paper_value=paper_value,
        )
    document, metric = metrics[spec["dataset"]], spec["metric"]
    if "test" not in spec["criterion"]:
        return _unpaired_comparison(claim_id, spec, document)
    a = _per_seed(document, spec["method"], metric)
    parts = [
        (
            f"vs {b}",
            paired_claim(
                claim_id,
                spec,
                a,
                _per_seed(document, b, metric),
                min_effect=min_effects.get(metric),
            ),
        )
        for b in spec["baselines"]
    ]
    merged = all_hold(claim_id, parts)
    values = {s: v if v is None else round(v, 4) for s, v in a.items()}
    return dataclasses.replace(
        merged,
        details=(
            f"{spec['dataset']}, {metric}, {spec['method']} per seed {values} "
            f"(A − B, positive = {spec['method']} better); {merged.details}"
        ),
    )


def combined_verdict(verdicts: list[str]) -> str:
    """The verdict of "every part holds": contradicted if any part is, not reproduced if any
    part could not be judged, reproduced if all are, else inconclusive."""
    for verdict in (CONTRADICTED, NOT_REPRODUCED):
        if verdict in verdicts:
            return verdict
    return REPRODUCED if all(v == REPRODUCED for v in verdicts) else INCONCLUSIVE


_FAVOUR = {CONTRADICTED: 0, NOT_REPRODUCED: 1, INCONCLUSIVE: 2, REPRODUCED: 3}


def all_hold(claim_id: str, parts: list[tuple[str, Claim]]) -> Claim:
    """One claim from several parts (baselines, settings): it holds iff every part holds
    (:func:`combined_verdict`); the measured number and interval are the least favourable
    part's (by verdict, then the lowest interval end), and the details list every part."""

    def favour(part):
        claim = part[1]
        low = claim.interval[0] if claim.interval else math.inf
        return (_FAVOUR.get(claim.verdict, 0), -math.inf if math.isnan(low) else low)

    label, worst = min(parts, key=favour)
    verdict = combined_verdict([c.verdict for _, c in parts])
    registered = [c.at_registered_seeds for _, c in parts]
    if all(registered):  # every part was also judged at the seeds registered first
        _, first = min(
            zip(parts, registered, strict=True),
            key=lambda pr: (
                _FAVOUR.get(pr[1]["verdict"], 0),
                (pr[1]["interval"] or [-math.inf])[0],
            ),
        )
        worst = dataclasses.replace(
            worst,
            at_registered_seeds={
                **first,
                "verdict": combined_verdict([r["verdict"] for r in registered]),
            },
        )
    listed = "; ".join(
        f"{name}: {c.verdict}, {c.measured:+.4g} [{c.interval[0]:+.4g}, {c.interval[1]:+.4g}]"
        if c.interval
        else f"{name}: {c.verdict} ({c.details})"
        for name, c in parts
    )
    return dataclasses.replace(
        worst,
        id=claim_id,
        verdict=verdict,
        details=f"{listed}; least favourable: {label}" if len(parts) > 1 else worst.details,
        differences=_part_differences(parts),
    )


def _part_differences(parts: list[tuple[str, Claim]]) -> dict:
    """Every paired part's per-seed differences under its label; empty when a part has none
    (a threshold condition: the claim cannot be pooled over seed sets)."""
    if not all(c.differences for _, c in parts):
        return {}
    return {
        "/".join(x for x in (label, inner) if x): values
        for label, c in parts
        for inner, values in c.differences.items()
    }


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
    """Unpaired comparison with the best of ``baselines`` (means over seeds); kept only while
    a paper's config still has threshold criteria for comparisons."""
    if statistic not in ("difference", "z"):
        raise ValueError(f"claim {claim_id}: statistic must be 'difference' or 'z'")
    values = [means[m] for m in [method, *baselines]] + [stds[m] for m in [method, *baselines]]
    if any(_missing(v) for v in values):
        return check(claim_id, claim, None, criterion, paper_value=paper_value)
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


def _unpaired_comparison(claim_id, spec, document) -> Claim:
    metric = spec["metric"]
    methods = {m: v for m, v in document["methods"].items() if metric in v["mean"]}
    missing = [m for m in [spec["method"], *spec["baselines"]] if m not in methods]
    if missing:
        return not_tested(
            claim_id,
            spec["claim"],
            f"{missing} report no {metric} in this run",
            paper_value=spec.get("paper_value"),
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
        paper_value=spec.get("paper_value"),
    )
    context = f"{spec['dataset']}, {metric}"
    selection = methods[spec["method"]].get("selection")
    if selection:
        context += f", model selection on {selection} labels"
    return dataclasses.replace(claim, details=f"{context}: {claim.details}")


# --- running a paper's claims and checks ------------------------------------------------------
SHARED_KINDS = ("not_tested",)


def claim_kinds(kinds: Mapping[str, Any]) -> tuple[str, ...]:
    """Every kind a paper's config may name: its own (``repro.<paper>.claims.KINDS``) and the
    shared ones. The config check derives the allowed kinds from this, nothing else lists them."""
    return (*kinds, *SHARED_KINDS)


def as_check(claim: Claim) -> Claim:
    """The same result reported as a check: passed / failed instead of a claim's verdict
    (anything short of reproduced fails a check)."""
    verdict = PASSED if claim.verdict == REPRODUCED else claim.verdict
    if verdict in (CONTRADICTED, INCONCLUSIVE, NOT_REPRODUCED):
        verdict = FAILED
    return dataclasses.replace(claim, type=CHECK, verdict=verdict)


def _judge(claim_id, spec, kinds, inputs) -> Claim:
    """A claim judged by its handler, then gated on its controls (each judged by the same
    handler, :mod:`repro.common.controls`), marked fragile where its interval ends near the
    criterion's boundary, with its registration date and revisions from the config."""
    claim = _run_one(claim_id, spec, kinds, inputs)
    if claim.verdict != NOT_TESTED and spec.get("controls"):
        found = ctl.run_controls(spec, lambda s: _run_one(claim_id, s, kinds, inputs))
        claim = ctl.gate(claim, found)
    edges = ctl.boundaries(spec.get("criterion"))
    return dataclasses.replace(
        claim,
        fragile=ctl.fragile(claim.verdict, claim.interval, edges),
        registered=str(spec.get("registered", "")),
        revised=tuple(spec.get("revised", ())),
    )


def _run_one(claim_id, spec, kinds, inputs) -> Claim:
    if spec["kind"] == "not_tested":
        return not_tested(
            claim_id, spec["claim"], spec["reason"], paper_value=spec.get("paper_value")
        )
    if spec["kind"] not in kinds:
        raise ValueError(f"claim {claim_id}: unknown kind {spec['kind']!r}")
    try:
        return kinds[spec["kind"]](claim_id, spec, inputs)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, IndexError) as error:
        # a value the run did not produce: a verdict with the reason, not a crashed job
        log.warning("%s could not be computed", claim_id, exc_info=True)
        return Claim(
            claim_id,
            spec["claim"],
            "",
            NOT_REPRODUCED,
            paper_value=spec.get("paper_value"),
            details=f"not computable from this run's metrics: {type(error).__name__}: {error}",
        )


def run_claims(
    specs: Mapping[str, Mapping[str, Any]],
    kinds: Mapping[str, Any],
    inputs: Any,
    checks: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Claim]:
    """Every configured claim, then every check, with its kind's handler
    ``handler(id, spec, inputs)`` (``not_tested`` built in); ``inputs`` is whatever the
    paper's handlers read. Checks come back with type "check" and verdict passed / failed."""
    results = [_judge(cid, spec, kinds, inputs) for cid, spec in specs.items()]
    results += [
        as_check(_run_one(cid, spec, kinds, inputs)) for cid, spec in (checks or {}).items()
    ]
    for r in results:
        log.info("%s %s: %s (%s)", r.type, r.id, r.verdict, r.details)
    return results
