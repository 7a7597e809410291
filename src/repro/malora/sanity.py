"""Per-seed sanity of MaLoRA's runs (issue 34): a broken run fails a check, it does not
widen an interval.

Each sanity check of the config (a check whose kind is in :data:`SANITY`) measures every
seed of the studies it covers against its own criterion: the linear adapters and bases at
their convex optimum (``converged``), every digits adapter and the pre-trained base above a
floor on its own task (``adapters_learned``), every merged model's per-task accuracy above
chance (``above_chance``). A seed that fails is a failed run: the check fails, and every
claim that reads that study (and, for a merge rule's failure, that rule) is "not
reproduced", naming the seed and the reason (:func:`failed_runs`).

A seed where MaLoRA has no α (a calibration margin ≤ 0, brief §8.8) is not a failed run: the
method produced no model, which the claim scores as its config says (``failed_seed``); the
``above_chance`` check lists those seeds beside its number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from repro.common.claims import REPRODUCED, Claim, check, check_spec


@dataclasses.dataclass(frozen=True)
class Measure:
    study: str  # sweep, linear or digits
    seed: int
    rule: str | None  # a merge rule, or None for the seed's adapters and base
    label: str
    value: float | None


def _nan(v) -> bool:
    return v is None or v != v


def _per_seed(seeds, stats) -> Iterable[tuple[int, float | None]]:
    return zip(seeds, stats["per_seed"], strict=True)


def convergence(inputs) -> tuple[list[Measure], str]:
    """Duality gaps of every sweep and linear adapter and base, per seed."""
    summary, out = inputs["summary"], []
    seeds = summary["sweep"]["seeds"]
    for block in summary["sweep"]["overlaps"]:
        where = f"sweep ε={block['overlap']:g}"
        out += [
            Measure("sweep", s, None, f"{where} base seed {s}", v)
            for s, v in _per_seed(seeds, block["base_gap"])
        ]
        for r in block["lambdas"]:
            out += [
                Measure("sweep", s, None, f"{where} λ={r['lambda']:.0e} seed {s}", v)
                for s, v in _per_seed(seeds, r["gap"])
            ]
    seeds = summary["linear"]["seeds"]
    for name, blocks in summary["linear"]["settings"].items():
        for block in blocks:
            for key in ("adapter_gap", "base_gap"):
                where = f"{name} ε={block['overlap']:g} {key}"
                out += [
                    Measure("linear", s, None, f"{where} seed {s}", v)
                    for s, v in _per_seed(seeds, block[key])
                ]
    return out, "duality gaps (bounds on objective − optimum)"


def adapters_learned(inputs) -> tuple[list[Measure], str]:
    """Every digits adapter's test accuracy on its own head, and the base's on digits 0–3."""
    digits = inputs["summary"]["digits"]
    out = [
        Measure("digits", s, None, f"seed {s} " + (f"adapter {t}" if t else "base"), float(a))
        for s, accs in zip(digits["seeds"], digits["individual_accuracy"], strict=True)
        for t, a in enumerate(accs)
    ]
    return out, "test accuracy on the model's own head"


def _unmerged(alphas) -> bool:
    """α = 0 for every adapter: the unmerged base, a reference row, not a merge."""
    return alphas is not None and not any(alphas)


def above_chance(inputs) -> tuple[list[Measure], str]:
    """Every merged model's mean accuracy on the fine-tuning tasks' own heads minus chance
    (1 / classes of the task), per rule and seed. A rule's own failure to form a model (an
    error recorded with no value: MaLoRA without α) is listed, not measured; the unmerged
    base (α = 0, a reference row) is not a merge and is not measured."""
    summary, section = inputs["summary"], inputs["section"]
    chance = {
        "linear": 1.0 / section["linear"]["design"]["classes_per_task"],
        "digits": summary["digits"]["pertask_chance"],
    }
    blocks = [
        ("linear", f"{name} ε={b['overlap']:g}", b, summary["linear"]["seeds"])
        for name, bs in summary["linear"]["settings"].items()
        for b in bs
    ]
    blocks.append(("digits", "digits", summary["digits"], summary["digits"]["seeds"]))
    out, no_model = [], {}
    for study, where, block, seeds in blocks:
        for rule, metrics in block["methods"].items():
            errors = block["errors"][rule]
            values = _per_seed(seeds, metrics["pertask_accuracy"])
            for (s, v), error, alphas in zip(values, errors, block["alphas"][rule], strict=True):
                if _unmerged(alphas):
                    continue
                if _nan(v) and error:
                    no_model.setdefault(f"{rule} ({study})", []).append(s)
                    continue
                value = None if _nan(v) else float(v) - chance[study]
                out.append(Measure(study, s, rule, f"{where} {rule} seed {s}", value))
    listed = "; ".join(f"{r} seeds {sorted(set(s))}" for r, s in no_model.items())
    note = "per-task accuracy − chance"
    if listed:
        note += f"; no model (the rule's own failure, scored by each claim's failed_seed): {listed}"
    return out, note


SANITY = {
    "converged": convergence,
    "adapters_learned": adapters_learned,
    "above_chance": above_chance,
}


def _failures(spec, measures: list[Measure]) -> list[tuple[Measure, str]]:
    out = []
    for m in measures:
        if check("sanity", "", m.value, spec["criterion"]).verdict != REPRODUCED:
            shown = "no value" if m.value is None else f"{m.value:.4g}"
            out.append((m, f"{m.label}: {shown}"))
    return out


def sanity_check(claim_id: str, spec, inputs) -> Claim:
    """A sanity check as a check: its least favourable value against its criterion (a seed
    without a value fails it), every failed run named."""
    measures, note = SANITY[spec["kind"]](inputs)
    values = [m for m in measures if m.value is not None]
    worst_of = max if spec["criterion"]["op"] in ("<", "<=") else min
    worst = worst_of(values, key=lambda m: m.value) if values else None
    details = f"{len(measures)} measured ({note})"
    if worst is not None:
        details += f"; least favourable {worst.value:.4g} ({worst.label})"
    failed = _failures(spec, measures)
    if failed:
        details += "; failed runs: " + ", ".join(reason for _, reason in failed)
    complete = worst is not None and len(values) == len(measures)
    return check_spec(claim_id, spec, worst.value if complete else None, details)


def failed_runs(inputs, study: str, rules: set[str] | None) -> list[str]:
    """Every failed run of ``study`` that a claim reading ``rules`` (None: every rule) rests
    on, as "check: label: value"; empty when every sanity check holds there."""
    found = []
    for cid, spec in (inputs.get("checks") or {}).items():
        if spec["kind"] not in SANITY:
            continue
        measures, _ = SANITY[spec["kind"]](inputs)
        for m, reason in _failures(spec, measures):
            if m.study == study and (m.rule is None or rules is None or m.rule in rules):
                found.append(f"{cid}: {reason}")
    return found
