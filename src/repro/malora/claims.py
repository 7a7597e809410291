"""MaLoRA's claims and checks, judged on the summary (``repro.malora.evaluate``).

``KINDS`` maps each claim kind of the config to its handler ``handler(id, spec, inputs)``;
``inputs`` is ``{"summary": ..., "section": papers.malora}``. A claim over several settings
(overlaps, baselines) holds only if it holds in every one; its measured number is the
least favourable setting's.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.common.claims import (
    Claim,
    all_hold,
    check_spec,
    check_worst,
    missing_seeds,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json

# The smallest difference that counts as an effect, per metric, where the paper states none
# (a ``beats`` needs it; ``at_least`` without the paper's delta tolerates it).
MIN_EFFECTS = {
    # cos(ΔW, SVM) in [−1, 1]: 0.01 is ≈ 8° near cos 0.99 and about the seed-to-seed spread
    "cosine": 0.01,
    # normalised margins m / ‖W‖ on the training data are 0.1–0.6 here: 0.005 is 1–5 % of them
    "normalised_margin": 0.005,
    # the union normalised margin is ≈ 0.1–0.3: 0.005 is a 2–5 % change
    "union_margin": 0.005,
    # accuracies: one point
    "normalised_accuracy": 0.01,
    "joint_accuracy": 0.01,
}


def _by_seed(seeds, values) -> dict:
    return {int(s): (None if v is None else float(v)) for s, v in zip(seeds, values, strict=True)}


def _sweep_block(summary, overlap) -> dict:
    return next(b for b in summary["sweep"]["overlaps"] if np.isclose(b["overlap"], overlap))


def _linear_block(inputs, overlap, setting=None) -> dict:
    linear = inputs["summary"]["linear"]
    setting = setting or inputs["section"]["linear"]["primary_setting"]
    return next(b for b in linear["settings"][setting] if np.isclose(b["overlap"], overlap))


def _mean(seeds, stats) -> tuple[float | None, str]:
    return over_seeds(_by_seed(seeds, stats["per_seed"]), np.mean)


def _svm_note(summary, svm) -> str:
    """How many nuclear-norm SVM solves ended "optimal_inaccurate" (recorded, not hidden)."""
    if svm != "nuclear":
        return ""
    status = [s for b in summary["sweep"]["overlaps"] for s in b.get("nuclear_svm_status", [])]
    bad = sum(s != "optimal" for s in status)
    return f"nuclear SVM solves not 'optimal': {bad} of {len(status)}"


def alignment_small_lambda(claim_id, spec, inputs) -> Claim:
    """C1, first half: cos(ΔW, SVM) ≈ 1 at the smallest λ of the sweep (every overlap)."""
    summary, svm = inputs["summary"], spec["svm"]
    seeds = summary["sweep"]["seeds"]
    means, reasons = {}, []
    for overlap in spec["overlaps"]:
        row = _sweep_block(summary, overlap)["lambdas"][0]
        means[overlap], reason = _mean(seeds, row[f"cosine_{svm}"])
        reasons += [f"ε={overlap:g}: {reason}"] if reason else []
    lam = _sweep_block(summary, spec["overlaps"][0])["lambdas"][0]["lambda"]
    rounded = {o: None if v is None else round(v, 4) for o, v in means.items()}
    details = "; ".join([f"mean cos at λ={lam:.0e} by ε {rounded}", *reasons])
    details = "; ".join(filter(None, [details, _svm_note(summary, svm)]))
    return check_worst(claim_id, spec, means, min, details)


def alignment_peak(claim_id, spec, inputs) -> Claim:
    """C1, second half: the best interior λ beats both ends of the λ range (paired, by the
    cosine's minimum effect); an end that is as high or higher contradicts it."""
    summary, svm = inputs["summary"], spec["svm"]
    seeds = summary["sweep"]["seeds"]
    parts = []
    for overlap in spec["overlaps"]:
        rows = _sweep_block(summary, overlap)["lambdas"]
        curves = [r[f"cosine_{svm}"] for r in rows]  # one per λ
        inner = 1 + int(np.nanargmax([c["mean"] for c in curves[1:-1]]))
        means = ", ".join(f"{rows[i]['lambda']:.0e}: {c['mean']:.3f}" for i, c in enumerate(curves))
        for end in (0, len(rows) - 1):
            parts.append(
                (
                    f"ε={overlap:g} λ={rows[inner]['lambda']:.0e} vs λ={rows[end]['lambda']:.0e}",
                    paired_claim(
                        claim_id,
                        spec,
                        _by_seed(seeds, curves[inner]["per_seed"]),
                        _by_seed(seeds, curves[end]["per_seed"]),
                        "; ".join(
                            filter(None, [f"mean cos by λ {{{means}}}", _svm_note(summary, svm)])
                        ),
                        min_effect=MIN_EFFECTS["cosine"],
                    ),
                )
            )
    return all_hold(claim_id, parts)


def tradeoff(claim_id, spec, inputs) -> Claim:
    """C2: smallest λ vs largest λ — more fine-tuning margin, less (but > 0) pre-training."""
    summary = inputs["summary"]
    seeds = summary["sweep"]["seeds"]
    effect = MIN_EFFECTS["normalised_margin"]
    parts = []
    for overlap in spec["overlaps"]:
        rows = _sweep_block(summary, overlap)["lambdas"]
        small, large = rows[0], rows[-1]
        ft = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, small["measured_finetune"]["per_seed"]),
            _by_seed(seeds, large["measured_finetune"]["per_seed"]),
            min_effect=effect,
        )
        pre = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, large["measured_pretrain"]["per_seed"]),
            _by_seed(seeds, small["measured_pretrain"]["per_seed"]),
            min_effect=effect,
        )
        lowest = {
            f"λ={r['lambda']:.0e} seed {s}": v
            for r in rows
            for s, v in _by_seed(seeds, r["measured_pretrain"]["per_seed"]).items()
        }
        positive = check_worst(
            claim_id,
            {**spec, "criterion": {"op": ">", "threshold": 0.0}},
            lowest,
            min,
            "smallest pre-training margin over λ and seeds",
        )
        parts += [
            (f"ε={overlap:g} fine-tuning gain", ft),
            (f"ε={overlap:g} retention cost", pre),
            (f"ε={overlap:g} pre-training > 0", positive),
        ]
    return all_hold(claim_id, parts)


def closed_form(claim_id, spec, inputs) -> Claim:
    """C2: median relative error of the closed forms over λ and both margins (per seed),
    its mean over seeds, the worst overlap."""
    summary, svm = inputs["summary"], spec["svm"]
    seeds = summary["sweep"]["seeds"]
    errors, reasons = {}, []
    for overlap in spec["overlaps"]:
        per_seed = {}
        rows = _sweep_block(summary, overlap)["lambdas"]
        for i, seed in enumerate(seeds):
            rel = [
                abs(r[f"measured_{m}"]["per_seed"][i] - r[f"closed_{svm}_{m}"]["per_seed"][i])
                / abs(r[f"closed_{svm}_{m}"]["per_seed"][i])
                for r in rows
                for m in ("pretrain", "finetune")
            ]
            per_seed[seed] = float(np.median(rel))
        errors[overlap], reason = over_seeds(per_seed, np.mean)
        reasons += [f"ε={overlap:g}: {reason}"] if reason else []
    rounded = {o: None if v is None else round(v, 4) for o, v in errors.items()}
    details = f"{svm} SVM ray; mean median relative error by overlap {rounded}"
    details = "; ".join(filter(None, [details, *reasons, _svm_note(summary, svm)]))
    return check_worst(claim_id, spec, errors, max, details)


def positive_margins(claim_id, spec, inputs) -> Claim:
    """C3: the merged model's smallest per-task min-margin on held-out data."""
    section, summary = inputs["section"], inputs["summary"]
    seeds = summary["linear"]["seeds"]
    linear = summary["linear"]["settings"][section["linear"]["primary_setting"]]
    values, reasons = {}, []
    for b in linear:
        stats = b["methods"][spec["method"]]["min_task_margin"]
        values[b["overlap"]], reason = over_seeds(_by_seed(seeds, stats["per_seed"]), min)
        reasons += [f"ε={b['overlap']:g}: {reason}"] if reason else []
    rounded = {o: None if v is None else round(v, 4) for o, v in values.items()}
    details = "; ".join([f"smallest per-task margin by ε {rounded}", *reasons])
    return check_worst(claim_id, spec, values, min, details)


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
    """C3: MaLoRA's union margin against a fraction of the test-set oracle's, per seed; the
    calibration-size dependence of the ratio beside it."""
    seeds = inputs["summary"]["linear"]["seeds"]
    parts = []
    for overlap in spec["overlaps"]:
        block = _linear_block(inputs, overlap)
        ours = block["methods"][spec["method"]]["union_margin"]["per_seed"]
        bound = [spec["fraction"] * v for v in block["oracle"]["per_seed"]]
        ratio = np.array(ours, dtype=float) / np.array(block["oracle"]["per_seed"], dtype=float)
        claim = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, ours),
            _by_seed(seeds, bound),
            f"ratio to the oracle per seed {np.round(ratio, 3).tolist()}; "
            + _calibration_dependence(block, seeds),
            min_effect=MIN_EFFECTS["union_margin"],
        )
        parts.append((f"ε={overlap:g}", claim))
    return all_hold(claim_id, parts)


def paired_comparison(claim_id, spec, inputs) -> Claim:
    """A paired criterion of ``method`` against every baseline (at every overlap, linear)."""
    summary, metric = inputs["summary"], spec["metric"]
    parts = []
    if spec["dataset"] == "digits":
        blocks = [("digits", summary["digits"])]
        seeds = summary["digits"]["seeds"]
    elif spec["dataset"] == "linear":
        blocks = [(f"ε={o:g}", _linear_block(inputs, o)) for o in spec["overlaps"]]
        seeds = summary["linear"]["seeds"]
    else:  # a full-scale backbone: calibration draws are the seeds
        blocks = [(spec["dataset"], summary["full"][spec["dataset"]])]
        seeds = blocks[0][1]["seeds"]
    failed = []
    for label, block in blocks:
        ours = _by_seed(seeds, block["methods"][spec["method"]][metric]["per_seed"])
        errors = block.get("errors", {}).get(spec["method"]) or [None] * len(seeds)
        failed += [
            (f"{label} seed {s}", err or "no value")
            for s, err in zip(seeds, errors, strict=True)
            if s in missing_seeds(ours)
        ]
        ours = _treat_failed_seeds(spec, block, seeds, ours)
        for baseline in spec["baselines"]:
            theirs = _by_seed(seeds, block["methods"][baseline][metric]["per_seed"])
            claim = paired_claim(claim_id, spec, ours, theirs, min_effect=MIN_EFFECTS[metric])
            parts.append((f"{label} vs {baseline}", claim))
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
    metric = spec["metric"]
    table = {n: _by_seed(seeds, m[metric]["per_seed"]) for n, m in block["methods"].items()}
    filled = dict(ours)
    for s in missing:
        if how == "fallback":
            filled[s] = table[spec["fallback"]][s]
        else:
            values = [v[s] for v in table.values() if not missing_seeds({s: v[s]})]
            filled[s] = min(values) if values else None
    return filled


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


# --- checks: properties that hold by construction unless there is a bug --------------------
def peft_gap(claim_id, spec, inputs) -> Claim:
    return check_spec(claim_id, spec, inputs["summary"]["digits"]["peft_cat_max_abs_logit_gap"])


def budgets(claim_id, spec, inputs) -> Claim:
    """Rules that spent more calibration calls than the grid allows (untuned MaLoRA: any)."""
    section, summary = inputs["section"], inputs["summary"]
    budget = len(section["merge_rules"]["scale_grid"])
    spent = dict(summary["digits"]["calibration_evaluations"])
    for blocks in summary["linear"]["settings"].values():
        for block in blocks:
            for name, n in block["calibration_evaluations"].items():
                spent[name] = max(n, spent.get(name, 0))
    rules = section["merge_rules"]["methods"]
    over = [
        n
        for n, used in spent.items()
        if used > (0 if rules[n]["rule"] == "malora" and not rules[n].get("tune") else budget)
    ]
    return check_spec(claim_id, spec, len(over), f"calls per rule {spent}; over budget {over}")


def oracle_bound(claim_id, spec, inputs) -> Claim:
    excess = -np.inf
    for blocks in inputs["summary"]["linear"]["settings"].values():
        for block in blocks:
            oracle = np.array(block["oracle"]["per_seed"])
            for name, alphas in block["alphas"].items():
                for i, a in enumerate(alphas):
                    if a is not None and min(a) >= 0:
                        value = block["methods"][name]["union_margin"]["per_seed"][i]
                        excess = max(excess, value - oracle[i])
    return check_spec(claim_id, spec, excess, "rules with non-negative α against the oracle")


def orthogonal_identity(claim_id, spec, inputs) -> Claim:
    block = _sweep_block(inputs["summary"], 0.0)
    m0, n0 = block["base_margin"]["per_seed"], block["base_norm"]["per_seed"]
    worst = 0.0
    for r in block["lambdas"]:
        for i, measured in enumerate(r["measured_pretrain"]["per_seed"]):
            expected = m0[i] / np.hypot(n0[i], r["delta_norm"]["per_seed"][i])
            worst = max(worst, abs(measured / expected - 1))
    return check_spec(claim_id, spec, worst)


def converged(claim_id, spec, inputs) -> Claim:
    """Every linear adapter's duality gap (and every base's gap bound) within tolerance."""
    summary = inputs["summary"]
    gaps = {}
    for block in summary["sweep"]["overlaps"]:
        for s, v in _by_seed(summary["sweep"]["seeds"], block["base_gap"]["per_seed"]).items():
            gaps[f"sweep base ε={block['overlap']:g} seed {s}"] = v
        for r in block["lambdas"]:
            for s, v in _by_seed(summary["sweep"]["seeds"], r["gap"]["per_seed"]).items():
                gaps[f"sweep ε={block['overlap']:g} λ={r['lambda']:.0e} seed {s}"] = v
    for name, blocks in summary["linear"]["settings"].items():
        for block in blocks:
            for key in ("adapter_gap", "base_gap"):
                seeds = summary["linear"]["seeds"]
                for s, v in _by_seed(seeds, block[key]["per_seed"]).items():
                    gaps[f"{name} {key} ε={block['overlap']:g} seed {s}"] = v
    finite = {k: v for k, v in gaps.items() if v is not None and np.isfinite(v)}
    worst = max(finite, key=finite.get) if finite else "none"
    details = f"{len(gaps)} models; largest gap {finite.get(worst, float('nan')):.2e} ({worst})"
    return check_worst(claim_id, spec, gaps, max, details)


def adapters_learned(claim_id, spec, inputs) -> Claim:
    """Every digits adapter's test accuracy on its own task's head (the individually
    fine-tuned model), worst over adapters and seeds: a seed where MaLoRA has no α must not
    come from an adapter that failed to learn its task."""
    digits = inputs["summary"]["digits"]
    values = {
        f"seed {s} adapter {t}": float(a)
        for s, accs in zip(digits["seeds"], digits["individual_accuracy"], strict=True)
        for t, a in enumerate(accs[1:], start=1)
    }
    worst = min(values, key=values.get)
    details = f"{len(values)} adapters; lowest {values[worst]:.3f} ({worst})"
    return check_worst(claim_id, spec, values, min, details)


KINDS = {
    "alignment_small_lambda": alignment_small_lambda,
    "alignment_peak": alignment_peak,
    "tradeoff": tradeoff,
    "closed_form": closed_form,
    "positive_margins": positive_margins,
    "near_optimal": near_optimal,
    "paired_comparison": paired_comparison,
    "scale_or_direction": scale_or_direction,
    "peft_gap": peft_gap,
    "budgets": budgets,
    "oracle_bound": oracle_bound,
    "orthogonal_identity": orthogonal_identity,
    "converged": converged,
    "adapters_learned": adapters_learned,
}


def check_claims(claims: dict, checks: dict, section: dict, summary: dict, out: str) -> list:
    results = run_claims(claims, KINDS, {"summary": summary, "section": section}, checks)
    write_json(out, results)
    return results


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser

    parser = step_parser("Judge MaLoRA's claims and checks.", paper="malora")
    parser.add_argument("--summary", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    section = paper_section(args.config, "malora")
    check_claims(
        section.get("claims", {}),
        section.get("checks", {}),
        section,
        read_json(args.summary),
        args.out,
    )


if __name__ == "__main__":
    main()
