"""Helpful-only's claims, judged on the summary over seeds (the checks: ``checks``).

Kinds (``papers.helpful_only.claims.<id>.kind``), all reading per-seed values of a
``{recipe, metric, prior, scale}`` selection (prior defaults to correlated, scale to 1); a
failed run (one that never left refusal, or that fails a per-seed sanity check: see
:func:`repro.helpful_only.checks.failed_by_sanity`) has no values, so a claim that needs it
is "not reproduced" and says which run failed and why:

- ``paired``: A against B with a paired criterion (repro.common.claims.paired_claim) on
  ``a.metric`` and every metric of ``also`` (all must hold); the margin is the criterion's
  ``delta`` (config); a side with ``source: full`` reads the full-scale summary instead
  (config/full.yaml), one with ``source: planted`` the prior's Bayes prediction (the
  planted effect, :func:`repro.helpful_only.personas.bayes_prediction`: positive controls);
- ``mitigation``: ``paired``, gated on helpfulness retention — A's helpfulness at least B's
  minus ``helpful_delta``, paired (a mitigation that "works" by collapsing does not count);
  the seeds where it was not kept are named;
- ``consistent_effect``: ``mitigation``, with the share of seeds whose difference lies on
  the better side by more than ``margin`` reported beside (the brief's rule (e) asks
  ``min_share``; a share of 5 seeds cannot decide, so it no longer makes the claim "not
  tested at this scale": revised 2026-12-07).
"""

from __future__ import annotations

import dataclasses
import logging

from repro.common.claims import all_hold, paired_claim, run_claims
from repro.common.io import read_json, write_json
from repro.helpful_only.checks import CHECK_KINDS, failed_by_sanity

log = logging.getLogger(__name__)
DEFAULT_PRIOR = "correlated"


def select(summary: dict, side: dict) -> dict[int, float | None]:
    """seed -> value of a selection {recipe, metric, prior, scale, source}: scale x value
    (a missing value stays missing). ``source: full`` reads the full-scale
    summary (``summary["full"]``: variant -> seed -> metric; no priors there); ``source:
    planted`` the prior's Bayes prediction per seed (``summary["planted"]``, no recipe)."""
    source = side.get("source", "embedded")
    if source == "full":
        runs = summary["full"]["metrics"][side["recipe"]]
        values = {seed: metrics[side["metric"]] for seed, metrics in runs.items()}
    elif source == "planted":
        values = summary["planted"][side.get("prior", DEFAULT_PRIOR)][side["metric"]]
    else:
        prior = side.get("prior", DEFAULT_PRIOR)
        values = summary["per_seed"][prior][side["recipe"]][side["metric"]]
    scale = side.get("scale", 1.0)
    return {int(s): None if v is None else scale * v for s, v in values.items()}


def _name(side: dict) -> str:
    scale = f"{side['scale']:g} x " if side.get("scale", 1.0) != 1.0 else ""
    where = "full scale" if side.get("source") == "full" else side.get("prior", DEFAULT_PRIOR)
    recipe = "planted (Bayes)" if side.get("source") == "planted" else side["recipe"]
    return f"{scale}{recipe} {side['metric']} ({where})"


def _fmt(value) -> str:
    return "missing" if value is None or value != value else f"{value:.3g}"


def _failed(summary: dict, side: dict) -> list[str]:
    """The failed runs of a side (never left refusal, or failed a per-seed sanity check):
    their values are missing."""
    if side.get("source") in ("full", "planted"):
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
    return paired_claim(claim_id, spec, a, b, details)


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
    held-out prompts) of A at least B's minus ``helpful_delta``, paired."""
    delta = spec["helpful_delta"]
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


def _not_kept(spec: dict, summary: dict) -> str:
    """The seeds in which A's helpfulness fell below B's by more than ``helpful_delta``."""
    a = select(summary, {**spec["a"], "metric": "helpful"})
    b = select(summary, {**spec["b"], "metric": "helpful"})
    low = [
        f"s{s} ({a[s]:.3f} vs {b[s]:.3f})"
        for s in sorted(a)
        if None not in (a[s], b.get(s)) and a[s] < b[s] - spec["helpful_delta"]
    ]
    return f"helpfulness not kept in {', '.join(low)}" if low else ""


def _gated(claim_id, spec, summary):
    """A paired claim about a mitigation, gated on helpfulness retention: a mitigation that
    lowers EM by making the model useless (or refusing) does not count."""
    effect = _paired(claim_id, spec, summary)
    gate = retention_gate(claim_id, spec, summary)
    merged = all_hold(claim_id, [("effect", effect), ("keeps helpfulness", gate)])
    details = [merged.details, _not_kept(spec, summary)]
    details += [f"effect: {effect.details}", f"helpfulness: {gate.details}"]
    return dataclasses.replace(
        merged,
        measured=effect.measured,  # the number is the effect's; the gate only decides
        interval=effect.interval,
        criterion=f"{effect.criterion}; and helpfulness kept: {gate.criterion}",
        details="; ".join(d for d in details if d),
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
    """:func:`_mitigation`, with the brief's rule (e) beside it: the share of seeds whose
    difference lies on the better side by more than ``margin`` (``min_share`` asked). The
    share does not decide: over 5 seeds its interval cannot (4 of 5: Wilson [0.38, 0.96]),
    and a null must be able to come out contradicted."""
    a, b = select(summary, spec["a"]), select(summary, spec["b"])
    sign = 1.0 if spec["criterion"]["higher_is_better"] else -1.0
    effects = [
        s for s in a if None not in (a[s], b.get(s)) and sign * (a[s] - b[s]) > spec["margin"]
    ]
    share = (
        f"an effect (> {spec['margin']:g} on the better side) in {len(effects)} of {len(a)} "
        f"seeds (the brief's rule (e) asks {spec['min_share']:.0%}; reported, not a verdict)"
    )
    claim = _mitigation(claim_id, spec, summary)
    return dataclasses.replace(claim, details=f"{share}; {claim.details}")


KINDS = {
    "paired": _paired,
    "mitigation": _mitigation,
    "consistent_effect": _consistent_effect,
    **CHECK_KINDS,
}


def check_claims(claims: dict, checks: dict, summary: dict, out_path, full=None) -> list:
    """Judge every check on the summary and every claim on it with the runs that fail a
    per-seed sanity check marked failed (:func:`repro.helpful_only.checks.failed_by_sanity`),
    and the full-scale summary, if run; a full-scale claim resting on a judge below its
    agreement with the hand labels is inconclusive (repro.helpful_only.judgecheck)."""
    from repro.helpful_only.judgecheck import gate_on_judges

    if full is not None:
        summary = {**summary, "full": full}
    judged = run_claims(claims, KINDS, failed_by_sanity(summary, checks))
    judged += run_claims({}, KINDS, summary, checks)
    results = gate_on_judges(judged, claims, full)
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
