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
    NOT_REPRODUCED,
    Claim,
    all_hold,
    check_spec,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json


def _by_seed(seeds, values) -> dict:
    return {int(s): (None if v is None else float(v)) for s, v in zip(seeds, values, strict=True)}


def _sweep_block(summary, overlap) -> dict:
    return next(b for b in summary["sweep"]["overlaps"] if np.isclose(b["overlap"], overlap))


def _linear_block(inputs, overlap, setting=None) -> dict:
    linear = inputs["summary"]["linear"]
    setting = setting or inputs["section"]["linear"]["primary_setting"]
    return next(b for b in linear["settings"][setting] if np.isclose(b["overlap"], overlap))


def alignment_peak(claim_id, spec, inputs) -> Claim:
    """C1: cos(ΔW, SVM) peaks at an interior λ, beats both ends, and is ≈ 1 there."""
    summary, svm = inputs["summary"], spec["svm"]
    seeds = summary["sweep"]["seeds"]
    peaks, parts = {}, []
    for overlap in spec["overlaps"]:
        rows = _sweep_block(summary, overlap)["lambdas"]
        curves = [r[f"cosine_{svm}"] for r in rows]
        peak = int(np.argmax([c["mean"] for c in curves]))
        peaks[overlap] = curves[peak]["mean"]
        label = f"ε={overlap:g}, peak λ={rows[peak]['lambda']:.0e}"
        if peak in (0, len(rows) - 1):
            parts.append(
                (
                    label,
                    Claim(
                        claim_id,
                        spec["claim"],
                        "",
                        NOT_REPRODUCED,
                        curves[peak]["mean"],
                        details="the peak is at an end",
                    ),
                )
            )
            continue
        paired = {"claim": spec["claim"], "criterion": {"test": "beats", "higher_is_better": True}}
        for end in (0, len(rows) - 1):
            parts.append(
                (
                    f"{label} vs λ={rows[end]['lambda']:.0e}",
                    paired_claim(
                        claim_id,
                        paired,
                        _by_seed(seeds, curves[peak]["per_seed"]),
                        _by_seed(seeds, curves[end]["per_seed"]),
                    ),
                )
            )
    worst = min(peaks, key=peaks.get)
    level = check_spec(claim_id, spec, peaks[worst], f"peak cosines {peaks}")
    return dataclasses.replace(
        all_hold(claim_id, [("peak level", level), *parts]),
        criterion=level.criterion,
        measured=peaks[worst],
        interval=None,
    )


def tradeoff(claim_id, spec, inputs) -> Claim:
    """C2: smallest λ vs largest λ — more fine-tuning margin, less (but > 0) pre-training."""
    summary = inputs["summary"]
    seeds = summary["sweep"]["seeds"]
    parts = []
    for overlap in spec["overlaps"]:
        rows = _sweep_block(summary, overlap)["lambdas"]
        small, large = rows[0], rows[-1]
        ft = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, small["measured_finetune"]["per_seed"]),
            _by_seed(seeds, large["measured_finetune"]["per_seed"]),
        )
        pre = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, large["measured_pretrain"]["per_seed"]),
            _by_seed(seeds, small["measured_pretrain"]["per_seed"]),
        )
        lowest = min(min(r["measured_pretrain"]["per_seed"]) for r in rows)
        positive = check_spec(
            claim_id,
            {**spec, "criterion": {"op": ">", "threshold": 0.0}},
            lowest,
            "smallest pre-training margin over λ and seeds",
        )
        parts += [
            (f"ε={overlap:g} fine-tuning gain", ft),
            (f"ε={overlap:g} retention cost", pre),
            (f"ε={overlap:g} pre-training > 0", positive),
        ]
    return all_hold(claim_id, parts)


def closed_form(claim_id, spec, inputs) -> Claim:
    """C2: median relative error of the closed forms over λ and both margins (per seed)."""
    summary, svm = inputs["summary"], spec["svm"]
    errors = {}
    for overlap in spec["overlaps"]:
        per_seed = []
        rows = _sweep_block(summary, overlap)["lambdas"]
        for i in range(len(summary["sweep"]["seeds"])):
            rel = [
                abs(r[f"measured_{m}"]["per_seed"][i] - r[f"closed_{svm}_{m}"]["per_seed"][i])
                / abs(r[f"closed_{svm}_{m}"]["per_seed"][i])
                for r in rows
                for m in ("pretrain", "finetune")
            ]
            per_seed.append(float(np.median(rel)))
        errors[overlap] = float(np.mean(per_seed))
    worst = max(errors, key=errors.get)
    return check_spec(
        claim_id,
        spec,
        errors[worst],
        f"{svm} SVM ray; mean median relative error by overlap {errors}",
    )


def positive_margins(claim_id, spec, inputs) -> Claim:
    """C3: the merged model's smallest per-task min-margin on held-out data."""
    linear = inputs["summary"]["linear"]["settings"][inputs["section"]["linear"]["primary_setting"]]
    values = {
        b["overlap"]: min(b["methods"][spec["method"]]["min_task_margin"]["per_seed"])
        for b in linear
    }
    worst = min(values, key=values.get)
    return check_spec(claim_id, spec, values[worst], f"smallest per-task margin by ε {values}")


def near_optimal(claim_id, spec, inputs) -> Claim:
    """C3: MaLoRA's union margin against a fraction of the test-set oracle's, per seed."""
    seeds = inputs["summary"]["linear"]["seeds"]
    parts = []
    for overlap in spec["overlaps"]:
        block = _linear_block(inputs, overlap)
        ours = block["methods"][spec["method"]]["union_margin"]["per_seed"]
        bound = [spec["fraction"] * v for v in block["oracle"]["per_seed"]]
        ratio = np.array(ours) / np.array(block["oracle"]["per_seed"])
        claim = paired_claim(
            claim_id,
            spec,
            _by_seed(seeds, ours),
            _by_seed(seeds, bound),
            f"ratio to the oracle per seed {np.round(ratio, 3).tolist()}",
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
    for label, block in blocks:
        ours = _by_seed(seeds, block["methods"][spec["method"]][metric]["per_seed"])
        for baseline in spec["baselines"]:
            theirs = _by_seed(seeds, block["methods"][baseline][metric]["per_seed"])
            parts.append((f"{label} vs {baseline}", paired_claim(claim_id, spec, ours, theirs)))
    return all_hold(claim_id, parts)


# --- checks: properties that hold by construction unless there is a bug --------------------
def peft_gap(claim_id, spec, inputs) -> Claim:
    return check_spec(claim_id, spec, inputs["summary"]["digits"]["peft_cat_max_abs_logit_gap"])


def budgets(claim_id, spec, inputs) -> Claim:
    """Rules that spent more calibration calls than the grid allows (MaLoRA: any)."""
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
        if used > (0 if rules[n]["rule"].startswith("malora") else budget)
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


KINDS = {
    "alignment_peak": alignment_peak,
    "tradeoff": tradeoff,
    "closed_form": closed_form,
    "positive_margins": positive_margins,
    "near_optimal": near_optimal,
    "paired_comparison": paired_comparison,
    "peft_gap": peft_gap,
    "budgets": budgets,
    "oracle_bound": oracle_bound,
    "orthogonal_identity": orthogonal_identity,
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
