"""Helpful-only's checks (properties that hold unless there is a bug), and the per-seed
sanity rule they define.

Kinds (``papers.helpful_only.checks.<id>.kind``):

- ``budget``: the largest deviation of any recipe's steps or sequences, as its trainer
  counted them, from the configured budget (``source: full``: the full-scale trainers'
  counts, each adapter's record.json, per variant and seed);
- ``base_range``: the least favourable (prior, seed) value of a metric of the base (or of
  ``recipes``). Each is also a **per-seed sanity check** (:func:`failed_by_sanity`): a run
  outside its range is a failed run, and the claims that read it are "not reproduced",
  naming it and the reason; a failed base fails every recipe trained from it;
- ``decorrelated``: the control prior's |P(harm | non-refuser) − P(harm | refuser)| in its
  least favourable seed;
- ``parameters``: the model's parameter count.
"""

from __future__ import annotations

import copy
import operator

from repro.common.claims import check_spec, over_seeds

BASE = "base"
_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


def _fmt(value) -> str:
    return "missing" if value is None or value != value else f"{value:.3g}"


def _budget(claim_id, spec, summary):
    """The largest deviation of a recipe's (steps, sequences), as its trainer counted them,
    from the budget: ``steps`` x ``batch_size``, or the recipe's entry of ``recipe_steps``
    (the equal-AR-exposure arms) x ``batch_size``."""

    def deviation(recipe, steps, sequences):
        planned = spec.get("recipe_steps", {}).get(recipe, spec["steps"])
        return abs(steps - planned) + abs(sequences - planned * spec["batch_size"])

    if spec.get("source") == "full":
        return _full_budget(claim_id, spec, summary["full"].get("budgets", {}), deviation)
    worst = max(
        deviation(recipe, s, q) for recipe, budget in summary["budgets"].items() for s, q in budget
    )
    return check_spec(claim_id, spec, worst, f"budgets per recipe: {summary['budgets']}")


def _full_budget(claim_id, spec, budgets: dict, deviation):
    """The full-scale trainers' own (steps, sequences) per (variant, seed), as each adapter's
    record.json has them (TRL's global step); a run without a record fails the check, and
    so does one that stopped early (its deviation is above 0)."""
    values = {
        (variant, seed): None if b is None else deviation(variant, *b)
        for variant, seeds in budgets.items()
        for seed, b in seeds.items()
    }
    worst, reason = over_seeds(values, max) if values else (None, "no full-scale records")
    listed = ", ".join(
        f"{v} s{s}: {'no record' if b is None else f'{b[0]} steps, {b[1]} sequences'}"
        for v, seeds in budgets.items()
        for s, b in seeds.items()
    )
    off = [f"{v} s{s}" for (v, s), d in values.items() if d]
    details = f"full-scale trainers' counts: {listed}"
    if off:
        details = f"off budget: {', '.join(off)}; {details}"
    return check_spec(claim_id, spec, worst, f"{details}; {reason}" if reason else details)


def _range_values(spec, summary) -> dict:
    """(prior, recipe, seed) -> the checked metric of every run ``spec`` covers."""
    return {
        (p, rc, s): v
        for p in summary["priors"]
        for rc in spec.get("recipes", [BASE])
        if rc in summary["per_seed"][p]
        for s, v in summary["per_seed"][p][rc][spec["metric"]].items()
    }


def _base_range(claim_id, spec, summary):
    """The least favourable (prior, seed) value of a metric of ``recipes`` (default: the
    base); a missing one (a failed run) fails the check, with the run's own reason."""
    values = _range_values(spec, summary)
    pick = min if spec["criterion"]["op"] in (">", ">=") else max
    worst, reason = over_seeds(values, pick)
    listed = ", ".join(f"{rc} {p[0]}{s}: {_fmt(v)}" for (p, rc, s), v in values.items())
    details = f"{spec['metric']} per (recipe, prior, seed): {listed}"
    failed = [
        f"{rc} {p[0]}{s} ({why})"
        for p, runs in summary.get("failed", {}).items()
        for rc, seeds in runs.items()
        if rc in spec.get("recipes", [BASE])
        for s, why in seeds.items()
    ]
    if failed:
        details = f"failed runs: {'; '.join(failed)}; {details}"
    return check_spec(claim_id, spec, worst, f"{details}; {reason}" if reason else details)


def _decorrelated(claim_id, spec, summary):
    """The control prior is decorrelated in every seed: the largest |P(harm | non-refuser) −
    P(harm | refuser)| over its seeds' worlds."""
    dose = summary["dose"][spec.get("prior", "decorrelated")]
    gaps = {
        s: abs(v - dose["harm_given_refuser"][s]) for s, v in dose["harm_given_non_refuser"].items()
    }
    worst, reason = over_seeds(gaps, max)
    listed = ", ".join(f"s{s}: {dose['harm_given_non_refuser'][s]:.3f}" for s in gaps)
    return check_spec(claim_id, spec, worst, f"P(harm | non-refuser) per seed: {listed}; {reason}")


def _parameters(claim_id, spec, summary):
    (count,) = summary["parameters"]
    return check_spec(claim_id, spec, count, f"{count} parameters")


CHECK_KINDS = {
    "decorrelated": _decorrelated,
    "budget": _budget,
    "base_range": _base_range,
    "parameters": _parameters,
}


def failed_by_sanity(summary: dict, checks: dict) -> dict:
    """The summary with every run outside a ``base_range`` check's range marked failed, per
    seed: its values missing (``per_seed``: None) and its reason under ``failed`` — a
    broken run fails a check and its claims, it does not widen an interval. A failed base
    fails every recipe of its (prior, seed), each trained from it."""
    out = copy.deepcopy(summary)
    failed = out.setdefault("failed", {})
    for cid, spec in checks.items():
        if spec["kind"] != "base_range":
            continue
        crit = spec["criterion"]
        for (prior, recipe, seed), value in _range_values(spec, summary).items():
            if value is None or _OPS[crit["op"]](value, crit["threshold"]):
                continue
            why = f"{cid}: {spec['metric']} {value:.3f}, not {crit['op']} {crit['threshold']:g}"
            hit = out["recipes_by_prior"][prior] if recipe == BASE else [recipe]
            for rc in hit:
                reason = why if rc == recipe else f"trained from the failed base ({why})"
                failed.setdefault(prior, {}).setdefault(rc, {}).setdefault(seed, reason)
                for values in out["per_seed"][prior][rc].values():
                    values[seed] = None
    return out
