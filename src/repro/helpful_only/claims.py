"""Helpful-only's claims and checks, judged on the summary over seeds.

Kinds (``papers.helpful_only.claims.<id>.kind``), all reading per-seed values of a
``{recipe, metric, prior, scale}`` selection (prior defaults to correlated, scale to 1):

- ``paired``: A against B with a paired criterion (repro.common.claims.paired_claim); a side
  with ``source: full`` reads the full-scale summary instead (config/full.yaml);
- ``consistent_effect``: the same, but judged only when the per-seed difference lies on the
  criterion's better side by more than ``margin`` in at least ``min_share`` of the seeds;
  otherwise "not tested at this scale" with the count (the brief's rule for SDF);
- ``budget`` (check): the largest deviation of any recipe's steps or sequences from the
  configured budget;
- ``base_range`` (check): the least favourable seed's value of a base-model metric;
- ``parameters`` (check): the model's parameter count.
"""

from __future__ import annotations

import dataclasses
import logging

from repro.common.claims import check_spec, not_tested, over_seeds, paired_claim, run_claims
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


def _paired(claim_id, spec, summary):
    a, b = select(summary, spec["a"]), select(summary, spec["b"])
    per_seed = ", ".join(f"s{s}: {_fmt(a[s])} vs {_fmt(b.get(s))}" for s in sorted(a))
    details = f"{_name(spec['a'])} - {_name(spec['b'])}; {per_seed}"
    if spec.get("note"):
        details = f"{spec['note']}; {details}"
    return paired_claim(claim_id, spec, a, b, details, min_effect=MIN_EFFECTS[spec["a"]["metric"]])


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
    claim = _paired(claim_id, spec, summary)
    return dataclasses.replace(claim, details=f"{gate}; {claim.details}")


def _budget(claim_id, spec, summary):
    steps, sequences = spec["steps"], spec["steps"] * spec["batch_size"]
    deviation = max(
        abs(s - steps) + abs(q - sequences)
        for budget in summary["budgets"].values()
        for s, q in budget
    )
    return check_spec(claim_id, spec, deviation, f"budgets per recipe: {summary['budgets']}")


def _base_range(claim_id, spec, summary):
    values = {
        (p, s): v
        for p in summary["priors"]
        for s, v in summary["per_seed"][p]["base"][spec["metric"]].items()
    }
    pick = min if spec["criterion"]["op"] in (">", ">=") else max
    worst, reason = over_seeds(values, pick)
    listed = ", ".join(f"{p[0]}{s}: {_fmt(v)}" for (p, s), v in values.items())
    details = f"base {spec['metric']} per (prior, seed): {listed}"
    return check_spec(claim_id, spec, worst, f"{details}; {reason}" if reason else details)


def _parameters(claim_id, spec, summary):
    (count,) = summary["parameters"]
    return check_spec(claim_id, spec, count, f"{count} parameters")


KINDS = {
    "paired": _paired,
    "consistent_effect": _consistent_effect,
    "budget": _budget,
    "base_range": _base_range,
    "parameters": _parameters,
}


def check_claims(claims: dict, checks: dict, summary: dict, out_path, full=None) -> list:
    """Judge every claim and check on the summary (and the full-scale summary, if run)."""
    if full is not None:
        summary = {**summary, "full": full}
    results = run_claims(claims, KINDS, summary, checks)
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
