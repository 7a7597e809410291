"""MaLoRA's claims on merging: C3 on the linear theory setting (positive margins, near the
oracle, against task arithmetic, averaging and the calibration-tuned rules) and C4 (digits,
and the full-scale benchmarks) against the adapter-merging baselines. The keys a control may
``set``: ``method`` (a rule or a control arm, :mod:`repro.malora.arms`) and ``setting`` (the
linear study's other setting)."""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.common.claims import (
    Claim,
    all_hold,
    check_worst,
    missing_seeds,
    over_seeds,
    paired_claim,
)
from repro.malora import arms
from repro.malora.blocks import by_seed as _by_seed
from repro.malora.blocks import linear_block as _linear_block
from repro.malora.mean_claims import beside


def positive_margins(claim_id, spec, inputs) -> Claim:
    """C3: the merged model's smallest per-task min-margin on held-out data, over tasks,
    seeds and overlaps (every seed must hold: a minimum, no interval)."""
    section, summary = inputs["section"], inputs["summary"]
    seeds = summary["linear"]["seeds"]
    linear = summary["linear"]["settings"][section["linear"]["primary_setting"]]
    values, reasons, by_seed = {}, [], {}
    for b in linear:
        found = _by_seed(seeds, b["methods"][spec["method"]]["min_task_margin"]["per_seed"])
        values[b["overlap"]], reason = over_seeds(found, min)
        reasons += [f"ε={b['overlap']:g}: {reason}"] if reason else []
        for s, v in found.items():
            by_seed.setdefault(s, []).append(v)
    rounded = {o: None if v is None else round(v, 4) for o, v in values.items()}
    details = "; ".join([f"{spec['method']}: smallest per-task margin by ε {rounded}", *reasons])
    claim = check_worst(claim_id, spec, values, min, details)
    registered = spec.get("registered_seeds")
    if not registered or set(registered) == set(by_seed):
        return claim
    lowest = {s: None if None in by_seed[s] else min(by_seed[s]) for s in registered}
    return beside(claim, check_worst(claim_id, spec, lowest, min, ""), registered)


def _calibration_dependence(block, seeds) -> str:
    """MaLoRA's mean ratio to the oracle with α from calibration sets of other sizes."""
    sizes = block.get("ablations", {}).get("calibration_size", {})
    oracle = np.array(block["oracle"]["per_seed"], dtype=float)
    ratios = []
    for size, stats in sizes.items():
        ratio, reason = over_seeds(
            _by_seed(seeds, np.array(stats["per_seed"], dtype=float) / oracle), np.mean
        )
        name = "test split" if size == "test" else f"{size}/class"
        ratios.append(f"{name}: {ratio:.3f}" if ratio is not None else f"{name}: {reason}")
    return f"mean ratio to the oracle by calibration size {{{', '.join(ratios)}}}"


def near_optimal(claim_id, spec, inputs) -> Claim:
    """C3: ``method``'s union margin against a fraction of the test-set oracle's, per seed;
    the calibration-size dependence of MaLoRA's ratio beside it."""
    seeds = inputs["summary"]["linear"]["seeds"]
    parts = []
    for overlap in spec["overlaps"]:
        block = _linear_block(inputs, overlap, spec.get("setting"))
        ours = arms.arm_values(block, spec["method"], "union_margin", [], higher_is_better=True)
        oracle = block["oracle"]["per_seed"]
        bound = [spec["fraction"] * v for v in oracle]
        ratio = np.array(ours, dtype=float) / np.array(oracle, dtype=float)
        claim = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, ours),
            _by_seed(seeds, bound),
            f"{spec['method']}: ratio to the oracle per seed {np.round(ratio, 3).tolist()}; "
            + _calibration_dependence(block, seeds),
        )
        parts.append((f"ε={overlap:g}", claim))
    return all_hold(claim_id, parts)


def _blocks(spec, inputs) -> tuple[list, list]:
    summary = inputs["summary"]
    if spec["dataset"] == "digits":
        return [("digits", summary["digits"])], summary["digits"]["seeds"]
    if spec["dataset"] == "linear":
        blocks = [
            (f"ε={o:g}", _linear_block(inputs, o, spec.get("setting"))) for o in spec["overlaps"]
        ]
        return blocks, summary["linear"]["seeds"]
    block = summary["full"][spec["dataset"]]  # a full-scale backbone: calibration draws
    return [(spec["dataset"], block)], block["seeds"]


def paired_comparison(claim_id, spec, inputs) -> Claim:
    """A paired criterion of ``method`` (a rule or a control arm) against every baseline (at
    every overlap of the linear study, in its ``setting``)."""
    metric, higher = spec["metric"], spec["criterion"]["higher_is_better"]
    blocks, seeds = _blocks(spec, inputs)
    parts, failed = [], []
    setting = f" ({spec['setting']} setting)" if spec.get("setting") else ""
    for label, block in blocks:
        values = arms.arm_values(
            block, spec["method"], metric, spec["baselines"], higher_is_better=higher
        )
        ours = _by_seed(seeds, values)
        errors = block.get("errors", {}).get(spec["method"]) or [None] * len(seeds)
        failed += [
            (f"{label} seed {s}", err or "no value")
            for s, err in zip(seeds, errors, strict=True)
            if s in missing_seeds(ours)
        ]
        ours = _treat_failed_seeds(spec, block, seeds, ours)
        for baseline in spec["baselines"]:
            theirs = _by_seed(seeds, arms.rule_values(block, baseline, metric))
            parts.append(
                (f"{label}{setting} vs {baseline}", paired_claim(claim_id, spec, ours, theirs))
            )
    result = all_hold(claim_id, parts)
    if not failed:
        return result
    where = ", ".join(name for name, _ in failed)
    more = f" (the first seed's error; {len(failed)} seeds)" if len(failed) > 1 else ""
    reason = f"{spec['method']} has no value on {where}: {failed[0][1]}{more}"
    treatment = FAILED_SEED_NOTES[spec.get("failed_seed", "missing")].format(**spec)
    return dataclasses.replace(result, details=f"{reason} ({treatment}); {result.details}")


# How a seed on which the method could not form its weights (a MaLoRA calibration margin
# ≤ 0: no equalising α, brief §8.8) enters a paired comparison; chosen in the config before
# the run (``failed_seed``). ``missing``: the claim is "not reproduced" (a value it needs is
# missing); ``loss``: the method fails on that seed, scored as the worst rule of the study on
# that seed (it cannot count better than any alternative the user had); ``fallback``: the
# method is used as a user would use it, falling back to the rule named by ``fallback``.
FAILED_SEED_NOTES = {
    "missing": "a missing value",
    "loss": "scored as a loss: the worst rule of the study on that seed",
    "fallback": "scored as its fallback {fallback}",
}


def _treat_failed_seeds(spec, block, seeds, ours: dict) -> dict:
    """``ours`` with the seeds it has no value on filled by the pre-registered treatment."""
    missing, how = missing_seeds(ours), spec.get("failed_seed", "missing")
    if not missing or how == "missing":
        return ours
    metric, higher = spec["metric"], spec["criterion"]["higher_is_better"]
    name = spec["fallback"] if how == "fallback" else arms.WORST_RULE
    filled = _by_seed(seeds, arms.arm_values(block, name, metric, [], higher_is_better=higher))
    return {s: filled[s] if s in missing else v for s, v in ours.items()}


def scale_or_direction(claim_id, spec, inputs) -> Claim:
    """C4 with MaLoRA's direction (α_t ∝ 1/m_t) and one scale tuned on the calibration grid
    (``method``), beside the same comparison of the α = m_0 / m_t rule (``reference``): the
    details say whether the scale or the direction decides the verdict."""
    tuned = paired_comparison(claim_id, spec, inputs)
    reference = {**spec, "method": spec["reference"], "fallback": spec.get("reference_fallback")}
    fixed = paired_comparison(claim_id, reference, inputs)
    if tuned.verdict == fixed.verdict:
        decides = f"the scale does not change the verdict ({fixed.verdict} either way)"
    else:
        decides = (
            f"the scale decides: {spec['reference']} (α = m_0/m_t) is {fixed.verdict}, "
            f"the same direction with a tuned scale is {tuned.verdict}"
        )
    return dataclasses.replace(tuned, details=f"{decides}; {tuned.details}")
