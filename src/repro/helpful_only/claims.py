"""Helpful-only's claims and checks, judged on the summary over seeds.

Kinds (``papers.helpful_only.claims.<id>.kind``), all reading per-seed values of a
``{recipe, metric, prior, scale}`` selection (prior defaults to correlated, scale to 1); a
failed run (one that never left refusal) has no values, so a claim that needs it is "not
reproduced" and says which run failed:

- ``paired``: A against B with a paired criterion (repro.common.claims.paired_claim) on
  ``a.metric`` and every metric of ``also`` (all must hold); a side with ``source: full``
  reads the full-scale summary instead (config/full.yaml); the margin is the metric's
  MIN_EFFECTS entry unless the criterion gives the paper's own delta;
- ``mitigation``: ``paired``, gated on helpfulness retention — A's helpfulness at least B's
  minus 0.05, paired (a mitigation that "works" by collapsing does not count);
- ``consistent_effect``: the same, but judged only when the per-seed difference lies on the
  criterion's better side by more than ``margin`` in at least ``min_share`` of the seeds;
  otherwise "not tested at this scale" with the count (the brief's rule for SDF); gated
  like ``mitigation``;
- ``budget`` (check): the largest deviation of any recipe's steps or sequences, as its
  trainer counted them, from the configured budget (``source: full``: the full-scale
  trainers' counts, each adapter's record.json, per variant and seed);
- ``base_range`` (check): the least favourable (prior, seed) value of a metric of the base
  (or of ``recipes``);
- ``decorrelated`` (check): the control prior's |P(harm | non-refuser) − P(harm | refuser)|
  in its least favourable seed;
- ``parameters`` (check): the model's parameter count.
"""

from __future__ import annotations

import dataclasses
import logging

from repro.common.claims import (
    all_hold,
    check_spec,
    not_tested,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.helpful_only.evalsets import FULL_METRICS
from repro.helpful_only.probes import METRICS

log = logging.getLogger(__name__)
DEFAULT_PRIOR = "correlated"

# The smallest difference a "beats" / "matches" claim counts, per metric (none of the
# paper's sentences gives a number). Every metric but coherence is a rate in [0, 1]
# (a probability at the embedded scale, a share of judged answers at full scale): 0.05 is
# one answer in twenty, the resolution the brief's prototype could tell from seed noise.
# Coherence counts matching traits out of four: its smallest change is one trait, 0.25.
RATE_EFFECT, COHERENCE_EFFECT = 0.05, 0.25
MIN_EFFECTS = {
    **{m: RATE_EFFECT for m in (*METRICS, *FULL_METRICS)},
    "coherence": COHERENCE_EFFECT,
}


def select(summary: dict, side: dict) -> dict[int, float | None]:
    """seed -> value of a selection {recipe, metric, prior, scale, source}: scale x value
    (a missing value stays missing). ``source: full`` reads the full-scale
    summary (``summary["full"]``: variant -> seed -> metric; no priors there)."""
    if side.get("source", "embedded") == "full":
        runs = summary["full"]["metrics"][side["recipe"]]
        values = {seed: metrics[side["metric"]] for seed, metrics in runs.items()}
    else:
        prior = side.get("prior", DEFAULT_PRIOR)
        values = summary["per_seed"][prior][side["recipe"]][side["metric"]]
    scale = side.get("scale", 1.0)
    return {int(s): None if v is None else scale * v for s, v in values.items()}


def _name(side: dict) -> str:
    scale = f"{side['scale']:g} x " if side.get("scale", 1.0) != 1.0 else ""
    where = "full scale" if side.get("source") == "full" else side.get("prior", DEFAULT_PRIOR)
    return f"{scale}{side['recipe']} {side['metric']} ({where})"


def _fmt(value) -> str:
    return "missing" if value is None or value != value else f"{value:.3g}"


def _failed(summary: dict, side: dict) -> list[str]:
    """The failed runs (never left refusal) of a side: their values are missing."""
    if side.get("source") == "full":
        return []
    runs = summary.get("failed", {}).get(side.get("prior", DEFAULT_PRIOR), {})
    return [
        f"{side['recipe']} s{s} failed ({why})" for s, why in runs.get(side["recipe"], {}).items()
    ]


def _one(claim_id, spec, summary, metric: str | None = None):
    """The paired claim of the spec's sides, or of both sides on another ``metric``."""
    sides = {k: {**spec[k], "metric": metric or spec[k]["metric"]} for k in ("a", "b")}
    metric = sides["a"]["metric"]
    a, b = select(summary, sides["a"]), select(summary, sides["b"])
    per_seed = ", ".join(f"s{s}: {_fmt(a[s])} vs {_fmt(b.get(s))}" for s in sorted(a))
    details = f"{_name(sides['a'])} - {_name(sides['b'])}; {per_seed}"
    failed = _failed(summary, sides["a"]) + _failed(summary, sides["b"])
    if failed:
        details = f"failed runs: {'; '.join(dict.fromkeys(failed))}; {details}"
    if spec.get("note"):
        details = f"{spec['note']}; {details}"
    return paired_claim(claim_id, spec, a, b, details, min_effect=MIN_EFFECTS[metric])


def _paired(claim_id, spec, summary):
    """A against B on ``a.metric`` and on every metric of ``also`` (all must hold)."""
    parts = [(spec["a"]["metric"], _one(claim_id, spec, summary))]
    parts += [(m, _one(claim_id, spec, summary, m)) for m in spec.get("also", [])]
    if len(parts) == 1:
        return parts[0][1]
    merged = all_hold(claim_id, parts)
    return dataclasses.replace(
        merged, details=f"{merged.details}; " + "; ".join(c.details for _, c in parts)
    )


def retention_gate(claim_id: str, spec: dict, summary: dict):
    """The mitigation keeps the model helpful: helpfulness (correct answers on the benign
    held-out prompts) of A at least B's minus helpfulness's minimum effect, paired."""
    delta = MIN_EFFECTS["helpful"]
    gate = {
        "claim": f"{spec['a']['recipe']} keeps the helpfulness of {spec['b']['recipe']}",
        "a": spec["a"],
        "b": spec["b"],
        "criterion": {
            "test": "at_least",
            "delta": delta,
            "higher_is_better": True,
            "description": f"helpful({spec['a']['recipe']}) − helpful({spec['b']['recipe']})",
        },
    }
    return _one(claim_id, gate, summary, "helpful")


def _gated(claim_id, spec, summary):
    """A paired claim about a mitigation, gated on helpfulness retention: a mitigation that
    lowers EM by making the model useless (or refusing) does not count."""
    effect = _paired(claim_id, spec, summary)
    gate = retention_gate(claim_id, spec, summary)
    merged = all_hold(claim_id, [("effect", effect), ("keeps helpfulness", gate)])
    return dataclasses.replace(
        merged,
        measured=effect.measured,  # the number is the effect's; the gate only decides
        interval=effect.interval,
        criterion=f"{effect.criterion}; and helpfulness kept: {gate.criterion}",
        details=f"{merged.details}; effect: {effect.details}; helpfulness: {gate.details}",
    )


def _mitigation(claim_id, spec, summary):
    """:func:`_gated` against ``b`` (pre-registered: AR at the mixture's own AR dose), and,
    where ``b_full_budget`` names it, the same claim against AR SFT of the full budget,
    reported beside; the details say so first when the two references disagree."""
    claim = _gated(claim_id, spec, summary)
    if "b_full_budget" not in spec:
        return claim
    other = _gated(claim_id, {**spec, "b": spec["b_full_budget"]}, summary)
    low, high = other.interval or (None, None)
    interval = "" if low is None else f" [{low:+.3f}, {high:+.3f}]"
    beside = (
        f"against {_name(spec['b_full_budget'])} (full AR budget): {other.verdict}, "
        f"{_fmt(other.measured)}{interval}"
    )
    if other.verdict != claim.verdict:
        beside = f"the reference decides the verdict: {beside}"
    return dataclasses.replace(claim, details=f"{beside}; {claim.details}")


def _consistent_effect(claim_id, spec, summary):
    a, b = select(summary, spec["a"]), select(summary, spec["b"])
    sign = 1.0 if spec["criterion"]["higher_is_better"] else -1.0
    effects = [s for s in a if None not in (a[s], b[s]) and sign * (a[s] - b[s]) > spec["margin"]]
    share = len(effects) / len(a)
    gate = (
        f"an effect (> {spec['margin']:g} on the better side) in {len(effects)} of "
        f"{len(a)} seeds, {spec['min_share']:.0%} needed"
    )
    if share < spec["min_share"]:
        per_seed = ", ".join(f"s{s}: {_fmt(a[s])} vs {_fmt(b[s])}" for s in sorted(a))
        return not_tested(
            claim_id,
            spec["claim"],
            f"{gate}; differences {per_seed}",
            paper_value=spec.get("paper_value"),
        )
    claim = _mitigation(claim_id, spec, summary)
    return dataclasses.replace(claim, details=f"{gate}; {claim.details}")


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


def _base_range(claim_id, spec, summary):
    """The least favourable (prior, seed) value of a metric of ``recipes`` (default: the
    base); a missing one (a failed run) fails the check with the reason."""
    recipes = spec.get("recipes", ["base"])
    values = {
        (p, rc, s): v
        for p in summary["priors"]
        for rc in recipes
        if rc in summary["per_seed"][p]
        for s, v in summary["per_seed"][p][rc][spec["metric"]].items()
    }
    pick = min if spec["criterion"]["op"] in (">", ">=") else max
    worst, reason = over_seeds(values, pick)
    listed = ", ".join(f"{rc} {p[0]}{s}: {_fmt(v)}" for (p, rc, s), v in values.items())
    details = f"{spec['metric']} per (recipe, prior, seed): {listed}"
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


KINDS = {
    "paired": _paired,
    "mitigation": _mitigation,
    "consistent_effect": _consistent_effect,
    "decorrelated": _decorrelated,
    "budget": _budget,
    "base_range": _base_range,
    "parameters": _parameters,
}


def check_claims(claims: dict, checks: dict, summary: dict, out_path, full=None) -> list:
    """Judge every claim and check on the summary (and the full-scale summary, if run); a
    full-scale claim resting on a judge below its agreement with the hand labels is
    inconclusive (repro.helpful_only.judgecheck)."""
    from repro.helpful_only.judgecheck import gate_on_judges

    if full is not None:
        summary = {**summary, "full": full}
    results = gate_on_judges(run_claims(claims, KINDS, summary, checks), claims, full)
    write_json(out_path, results)
    return results


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser

    parser = step_parser("Judge helpful-only's claims on a summary.", paper="helpful_only")
    parser.add_argument("summary", help="results/helpful_only/metrics/summary.json")
    parser.add_argument("--out", required=True, help="claims JSON to write")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    section = paper_section(args.config, "helpful_only")
    check_claims(
        section.get("claims", {}), section.get("checks", {}), read_json(args.summary), args.out
    )


if __name__ == "__main__":
    main()
