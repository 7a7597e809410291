"""MaLoRA's checks: properties that hold by construction unless there is a bug, and the
per-seed sanity checks of the runs (:mod:`repro.malora.sanity`)."""

from __future__ import annotations

import numpy as np

from repro.common.claims import Claim, check_spec
from repro.malora import sanity
from repro.malora.blocks import sweep_block


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
    block = sweep_block(inputs["summary"], 0.0)
    m0, n0 = block["base_margin"]["per_seed"], block["base_norm"]["per_seed"]
    worst = 0.0
    for r in block["lambdas"]:
        for i, measured in enumerate(r["measured_pretrain"]["per_seed"]):
            expected = m0[i] / np.hypot(n0[i], r["delta_norm"]["per_seed"][i])
            worst = max(worst, abs(measured / expected - 1))
    return check_spec(claim_id, spec, worst)


KINDS = {
    "peft_gap": peft_gap,
    "budgets": budgets,
    "oracle_bound": oracle_bound,
    "orthogonal_identity": orthogonal_identity,
    **dict.fromkeys(sanity.SANITY, sanity.sanity_check),
}
