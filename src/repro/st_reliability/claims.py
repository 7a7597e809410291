"""ST reliability's claims and checks, against criteria written in the config before the run.

Each handler reads ``inputs = {"metrics": {data set: summary}, "prepared": {data set:
prepare record}}``. Claims with several conditions (C1–C4, C6) hold only when every
condition holds (three-way, :func:`repro.common.claims.combined_verdict`); each condition's
number is in the details. Intervals of ρ come from the hierarchical bootstrap over seeds and
predictions (:mod:`repro.st_reliability.hierarchical`); paired claims over seeds use the
paired t interval and the margin ``delta`` written in the claim's criterion in the config.
Every claim's controls (another signal, model or predictor of the same run) are judged by
these same handlers (:mod:`repro.common.controls`).

Kinds: ``attention_vs_nulls`` (C1: within-model attention swap, judged only when its
controls pass, and causal check; null models reported), ``program_gene_map`` (C2,
regression map with its negative control), ``degrades_with_distance`` (C3),
``family_vs_pool`` (C4), ``median_group_rho`` (C5), ``loo_transfer`` (C6),
``beats_magnitude`` (C7, signed), ``aggregate_vs_rho`` (C8, signed equivalence),
``ratio_to_oracle`` (C5's comparison with the oracle); checks ``generator_self_check``,
``self_only_identity``, ``swap_control`` (the swap detects a planted attention dependence
and not a planted independence, :mod:`repro.st_reliability.swap_control`),
``oracle_fails`` (the oracle does not pass C5's criterion in a regime) and
``rho_near_zero`` (a signal's median group ρ near 0: magnitude does not decide quality).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.common import controls as ctl
from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    check_spec,
    not_tested,
    over_seeds,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.st_reliability.claim_parts import (
    all_of,
    bootstrap_claim,
    condition,
    interval,
    interval_condition,
    needs,
    rounded,
)
from repro.st_reliability.reliability import spearman


def _comparison(spec, spectra, method, seeds, comparison) -> tuple[str, Claim]:
    """One paired part of C1 (trained model's statistic against a null model, a within-model
    attention swap, or a causal edit's control), paired over seeds."""
    trained = spectra[method]
    if "causal" in comparison:  # quality under the control edit − under the edit
        edit, control = comparison["causal"], comparison["control"]
        label = f"q({control}) − q({edit}), {method}"
        if "causal_per_seed" not in trained:
            return label, _missing(spec, f"{method} has no causal check")
        causal = trained["causal_per_seed"]
        a, b = causal[control], causal[edit]
    else:
        stat = comparison["statistic"]
        if "swap" in comparison:
            label = f"{stat} {method}: own − {comparison['swap']} attention, same weights"
            a = trained["layer_mean_per_seed"][stat]
            b = trained["layer_mean_per_seed"][f"{stat}_{comparison['swap']}"]
        else:
            null = comparison["null"]
            key = f"{method}__untrained" if null == "untrained" else null
            label = f"{stat} {method} − {null}"
            if key not in spectra:
                return label, _missing(spec, f"null {key} was not run")
            a = trained["layer_mean_per_seed"][stat]
            b = spectra[key]["layer_mean_per_seed"][stat]
    part = paired_claim(
        "", spec, dict(zip(seeds, a, strict=True)), dict(zip(seeds, b, strict=True))
    )
    return label, part


def _missing(spec, reason: str) -> Claim:
    return Claim("", spec["claim"], "", NOT_REPRODUCED, details=reason)


def attention_vs_nulls(cid, spec, inputs):
    return _attention_vs_nulls(cid, spec, inputs, control=inputs.get("swap_control"))


@needs("dataset")
def _attention_vs_nulls(cid, spec, doc, *, control):
    """C1: judged on the ``comparisons`` (the within-model swap and the causal check);
    ``reported`` ones (the null models) are shown beside, with the between-perturbation
    variance of every PC1 fraction and the PC1 fraction of Δ̂ against the true Δ. With
    ``swap_control`` a swap comparison is judged only when the swap's controls pass
    (:func:`swap_controls`, on C1's own criterion); otherwise it is inconclusive."""
    spectra, method, seeds = doc["spectra"], spec["method"], doc["rho"]["seeds"]
    parts = [_comparison(spec, spectra, method, seeds, c) for c in spec["comparisons"]]
    notes = []
    if spec.get("swap_control"):
        for i, c in enumerate(spec["comparisons"]):
            if "swap" in c:
                parts[i], note = _gated(spec, control, c, parts[i])
                notes.append(note)
    reported = [_comparison(spec, spectra, method, seeds, c) for c in spec.get("reported", [])]
    claim = all_of(cid, spec, parts)
    extra = [*notes, *(f"{label} (reported, not judged): {c.details}" for label, c in reported)]
    extra += _planted_doses(spec, spectra, method, seeds)
    means = spectra[method]["layer_mean_per_seed"]
    headroom = 1 - np.asarray(means["pc1_fraction_uniform"])
    extra.append(
        f"{method}: room above the uniform swap (1 − its PC1 fraction) {rounded(headroom)}"
    )
    for name, rec in spectra.items():
        if name == "uniform":
            continue
        means = rec["layer_mean_per_seed"]
        extra.append(
            f"{name}: PC1 fraction {rounded(means['pc1_fraction'])} at between-perturbation "
            f"variance {_sig(means['variance'])}; uniform swap "
            f"{rounded(means['pc1_fraction_uniform'])} ({_sig(means['variance_uniform'])}); "
            "residual stream "
            f"{rounded(means['pc1_fraction_residual'])} ({_sig(means['variance_residual'])})"
        )
        if "delta_pca_per_seed" in rec:
            pca = rec["delta_pca_per_seed"]
            extra.append(
                f"{name}: PC1 fraction of Δ̂ {rounded(pca['pc1_fraction_delta_hat'])} "
                f"(variance {_sig(pca['variance_delta_hat'])}) vs true Δ "
                f"{rounded(pca['pc1_fraction_true_delta'])} "
                f"({_sig(pca['variance_true_delta'])}); causal q per seed "
                f"{ {k: rounded(v) for k, v in rec['causal_per_seed'].items()} }"
            )
    return dataclasses.replace(claim, details="; ".join([claim.details, *extra]))


def _planted_doses(spec, spectra, method, seeds) -> list[str]:
    """The dose curve of the planted attention dependence in ``method`` (C1's positive
    control in the trained model's regime, :mod:`repro.st_reliability.planted`): each judged
    comparison's verdict and number per dose, and the smallest dose reproducing it."""
    prefix = f"{method}__planted_beta"
    doses = sorted(
        (float(name[len(prefix) :]), name) for name in spectra if name.startswith(prefix)
    )
    out = []
    for c in spec["comparisons"]:
        judged = [(b, _comparison(spec, spectra, name, seeds, c)) for b, name in doses]
        if not judged:
            continue
        label = judged[0][1][0].replace(f"{method}__planted_beta{judged[0][0]:g}", method)
        curve = "; ".join(
            f"β {b:g}: {part.verdict} {ctl.number_text(part.measured, part.interval)}"
            for b, (_, part) in judged
        )
        found = [b for b, (_, part) in judged if part.verdict == REPRODUCED]
        smallest = f"smallest dose reproduced: β {found[0]:g}" if found else "no dose reproduced"
        out.append(f"planted dependence in the trained model, {label}: {curve} ({smallest})")
    return out


def swap_controls(spec, control, comparison) -> tuple[bool, str]:
    """Whether the swap ``comparison`` ({statistic, swap}) detects the planted attention
    dependence (positive control reproduced under ``spec``'s criterion) and not the planted
    independence (negative control not reproduced), and the numbers."""
    if control is None:
        return False, "the swap's controls were not run"
    judged = {
        kind: _comparison(spec, control["spectra"], kind, control["seeds"], comparison)[1]
        for kind in ("positive", "negative")
    }
    holds = judged["positive"].verdict == REPRODUCED and judged["negative"].verdict != REPRODUCED
    doses = [
        f"β {b:g}: {_swap_gain(control, f'positive_beta{b:g}', comparison)}"
        for b in control["doses"]
    ]
    details = (
        f"positive control (β = {control['beta']:g}) {judged['positive'].verdict}: "
        f"{judged['positive'].details}, "
        f"{_swap_gain(control, 'positive', comparison)}; negative control "
        f"{judged['negative'].verdict}: {judged['negative'].details}, "
        f"{_swap_gain(control, 'negative', comparison)}; dose (reported) {'; '.join(doses)}"
    )
    return holds, details


def _swap_gain(control, name, comparison) -> str:
    """Own − swapped statistic and the row KL from uniform per seed of one control model."""
    stat = comparison["statistic"]
    means = control["spectra"][name]["layer_mean_per_seed"]
    gain = np.subtract(means[stat], means[f"{stat}_{comparison['swap']}"])
    return f"own − {comparison['swap']} {rounded(gain)} at KL {rounded(means['kl_uniform'])}"


def _gated(spec, control, comparison, part) -> tuple[tuple[str, Claim], str]:
    """A swap part of C1 judged only when :func:`swap_controls` holds (inconclusive else,
    unless a value is missing), and the note on its controls for the details."""
    label, claim = part
    holds, details = swap_controls(spec, control, comparison)
    if holds:
        return part, f"{label}: the swap's controls pass: {details}"
    note = f"{label}: not judged, the swap's controls fail: {details}"
    if claim.verdict == NOT_REPRODUCED:  # a missing value stays "not reproduced"
        return part, note
    return (label, dataclasses.replace(claim, verdict=INCONCLUSIVE)), note


def swap_control(cid, spec, inputs):
    """Check: :func:`swap_controls` on the check's own ``comparison`` and criterion (the
    config writes C1's)."""
    holds, details = swap_controls(spec, inputs.get("swap_control"), spec["comparison"])
    text = "positive control reproduced and negative control not, under the criterion"
    return Claim(cid, spec["claim"], text, REPRODUCED if holds else CONTRADICTED, details=details)


def _sig(values) -> list[str]:
    return [f"{v:.3g}" for v in values]


@needs("dataset", "negative_dataset")
def program_gene_map(cid, spec, strong, negative):
    """C2 on the map named by ``spec["map"]`` (the regression of Δ̂ on the PC1 scores), with
    its negative controls: the same test in ``negative_dataset`` (no shared program) and,
    with ``shuffled_program``, in ``dataset`` against the program's gene labels permuted
    (the control that runs on real data too); the other maps (injection of the update's
    direction, of the residual stream's direction) are reported beside."""
    key = spec["map"]
    maps, neg = strong["gene_maps"], negative["gene_maps"]
    value, reason = over_seeds(
        dict(enumerate(maps[f"median_abs_cos_stress_{key}_per_seed"])), np.mean
    )
    neg_value, neg_reason = over_seeds(
        dict(enumerate(neg[f"median_abs_cos_stress_{key}_per_seed"])), np.mean
    )
    parts = [
        condition(
            f"{spec['dataset']} median |cos|",
            spec,
            "criterion",
            value,
            f"{reason} per group {rounded(maps[f'abs_cos_stress_{key}'])}".strip(),
        ),
        condition(
            f"{spec['negative_dataset']} must fail",
            spec,
            "negative",
            neg_value,
            f"{neg_reason} per group {rounded(neg[f'abs_cos_stress_{key}'])}".strip(),
        ),
    ]
    if "shuffled_program" in spec:  # the control that also runs on real data
        control, why = over_seeds(
            dict(enumerate(maps[f"median_abs_cos_shuffled_program_{key}_per_seed"])), np.mean
        )
        parts.append(
            condition(
                f"{spec['dataset']} with the program's genes permuted must fail",
                spec,
                "shuffled_program",
                control,
                why,
            )
        )
    claim = all_of(cid, spec, parts)
    shown = [
        f"{label}: median |cos| {maps[k]:.3f} (negative control {neg[k]:.3f})"
        for label, k in (
            ("injected update direction (brief §2.3.5)", "median_abs_cos_stress"),
            ("residual-stream direction", "median_abs_cos_stress_gene_map_residual"),
            ("injection into the attention update", "median_abs_cos_stress_gene_map_attention"),
        )
        if k in maps and k in neg
    ]
    return dataclasses.replace(claim, details="; ".join([claim.details, *shown]))


def _regime(doc: dict, spec: dict) -> dict | None:
    """The ρ tables of the claim's regime: ``fewshot`` (default) or ``novel`` (whole
    families held out in a line; None when this run has no such pairs)."""
    return doc["rho"] if spec.get("regime", "fewshot") == "fewshot" else doc.get("rho_novel")


def regime(handler):
    """Run ``handler(cid, spec, rho tables)``; "not tested" when the regime is absent."""

    def run(cid, spec, doc):
        rho = _regime(doc, spec)
        if rho is None:
            reason = f"no {spec.get('regime')} pairs in {spec['dataset']}"
            return not_tested(cid, spec["claim"], reason, paper_value=spec.get("paper_value"))
        return handler(cid, spec, rho)

    return run


@needs("dataset")
@regime
def degrades_with_distance(cid, spec, rho):
    """C3: every group's ρ below 0 (three-way on the largest group ρ: its interval is the
    largest lower and the largest upper end) and a falling decile curve."""
    signal = spec["signal"]
    groups = {g: v[signal] for g, v in rho["groups"].items()}
    worst = max(groups.values(), key=lambda r: r["rho"])
    highest = (max(r["low"] for r in groups.values()), max(r["high"] for r in groups.values()))
    curve = rho["deciles"][signal]["quality"]
    monotone = float(spearman(np.arange(len(curve)), np.asarray(curve, dtype=float)))
    rhos = rounded({g: r["rho"] for g, r in groups.items()})
    parts = [
        interval_condition(
            "largest group ρ", spec, "criterion", worst["rho"], highest, f"ρ per group {rhos}"
        ),
        condition("decile curve", spec, "deciles", monotone, f"decile means {rounded(curve)}"),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
def family_vs_pool(cid, spec, doc):
    """C4 on the audited model's probe quality under the pool designs, or (``predictor``)
    on a control predictor's from the true Δ (``family_mean``: family identity decides by
    construction; ``other_mean``: it never reads the probe's family), scored on the same
    probes and designs."""
    c4 = doc["c4"]
    if not c4["available"]:
        return not_tested(cid, spec["claim"], c4["reason"], paper_value=spec.get("paper_value"))
    if spec.get("predictor", "model") != "model":
        c4 = c4["controls"][spec["predictor"]]
    seeds = c4["seeds"]
    family = dict(zip(seeds, c4["family_drop"], strict=True))
    pool = dict(zip(seeds, c4["pool_drop"], strict=True))
    means = f"mean probe q per design { ({k: rounded(v) for k, v in c4['mean_quality'].items()}) }"
    parts = [
        ("family drop − pool drop", paired_claim("", spec, family, pool, means)),
        ("family drop > 0", paired_claim("", spec, family, dict.fromkeys(seeds, 0.0))),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
@regime
def median_group_rho(cid, spec, rho):
    """C5 on the median over groups of the per-group ρ (hierarchical interval); the pooled ρ,
    raw and normalised per group, and the oracle are reported beside."""
    signal = spec["signal"]
    r = rho["median_group"][signal]
    details = [
        f"median group ρ per seed {rounded(r['per_seed'])}",
        f"pooled ρ raw {interval(rho['pooled_raw'][signal], 'rho')}",
        f"pooled ρ normalised per group {interval(rho['pooled'][signal], 'rho')}",
    ]
    oracle = signal.replace("nn_", "oracle_")
    if oracle in rho["median_group"]:
        details.append(f"oracle median group ρ {interval(rho['median_group'][oracle], 'rho')}")
    label, part = interval_condition(
        "median group ρ", spec, "criterion", r["rho"], (r["low"], r["high"]), "; ".join(details)
    )
    return all_of(cid, spec, [(label, part)])


@needs("dataset")
def loo_transfer(cid, spec, doc):
    """C6: the held-out balanced accuracy and the gap to each group's own rule fitted out of
    sample, means over groups per seed, then over seeds (NaN-aware)."""
    loo = doc["loo"][f"{spec['signal']}|{spec.get('good', 'threshold')}"]
    bas = {g: v["balanced_accuracy"] for g, v in loo["groups"].items()}
    directions = {g: v["directions"] for g, v in loo["groups"].items()}
    accuracy, reason = over_seeds(dict(enumerate(loo["per_seed_balanced_accuracy"])), np.mean)
    gap, gap_reason = over_seeds(dict(enumerate(loo["per_seed_gap"])), np.mean)
    per_group = (
        f"{reason} per group {rounded(bas)}; fitted directions {directions}; "
        f"seed × group cells without both classes {loo['cells_without_both_classes']} of "
        f"{loo['cells']}"
    )
    parts = [
        condition("mean held-out balanced accuracy", spec, "criterion", accuracy, per_group),
        condition(
            "mean gap to own rule (out of sample)",
            spec,
            "gap",
            gap,
            f"{gap_reason} per seed {rounded(loo['per_seed_gap'])}; in sample "
            f"{rounded(loo['per_seed_gap_in_sample'])}",
        ),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
@regime
def beats_magnitude(cid, spec, rho):
    """C7, signed: −ρ_NN − ρ_mag (distance trusted when small, magnitude when large), the
    median over groups with its hierarchical interval, beats the criterion's margin."""
    name = f"{spec['signal']}_vs_magnitude"
    per_group = {g: v[name]["rho"] for g, v in rho["groups"].items()}
    wins = sum(v > 0 for v in per_group.values())
    r = rho["median_group"][name]
    details = (
        f"median group −ρ_NN − ρ_mag {interval(r, 'rho')}, per seed {rounded(r['per_seed'])}; "
        f"per group {rounded(per_group)} ({wins} of {len(per_group)} > 0)"
    )
    return bootstrap_claim(cid, spec, r, "rho", details)


@needs("dataset")
def aggregate_vs_rho(cid, spec, doc):
    """C8, signed, as an equivalence test (``matches`` ±delta): the Spearman across groups
    of (group mean q, group −ρ_NN), hierarchical interval."""
    r = doc["rho"]["aggregate"][spec["signal"]]
    groups = doc["rho"]["groups"]
    details = (
        f"Spearman {interval(r, 'spearman')}, per seed {rounded(r['per_seed'])}; group mean q "
        f"{rounded({g: v['mean_quality'] for g, v in groups.items()})}; group ρ "
        f"{rounded({g: v[spec['signal']]['rho'] for g, v in groups.items()})}"
    )
    return bootstrap_claim(cid, spec, r, "spearman", details)


@needs("dataset")
@regime
def ratio_to_oracle(cid, spec, rho):
    """The paper's comparison (issue 35 §1): the median group ρ of ``signal`` over the
    oracle's (``reference``), signed (−ρ / −ρ_oracle; −∞ where the oracle's is not
    negative), from the same hierarchical draws; criterion on the whole interval."""
    name = f"{spec['signal']}/{spec['reference']}"
    r = rho["ratio"][name]
    medians = rho["median_group"]
    details = (
        f"median group ρ {spec['signal']} {interval(medians[spec['signal']], 'rho')}, "
        f"{spec['reference']} {interval(medians[spec['reference']], 'rho')}; "
        f"ratio per seed {rounded(r['per_seed'])}"
    )
    label, part = interval_condition(
        "median group ρ over the oracle's",
        spec,
        "criterion",
        r["ratio"],
        (r["low"], r["high"]),
        details,
    )
    return all_of(cid, spec, [(label, part)])


def oracle_fails(cid, spec, inputs):
    """Check: ``signal`` (the oracle) does not pass the median group ρ criterion in the
    data set and regime named (there the claims of that regime cannot show the effect)."""
    judged = median_group_rho(cid, spec, inputs)
    verdict = {REPRODUCED: CONTRADICTED, CONTRADICTED: REPRODUCED, INCONCLUSIVE: REPRODUCED}
    text = f"not ({judged.criterion})"
    return dataclasses.replace(
        judged, criterion=text, verdict=verdict.get(judged.verdict, judged.verdict)
    )


@needs("dataset")
@regime
def rho_near_zero(cid, spec, rho):
    """Check: |median group ρ| of ``signal`` against the criterion (point value; the
    hierarchical interval in the details)."""
    r = rho["median_group"][spec["signal"]]
    details = f"median group ρ {interval(r, 'rho')}, per seed {rounded(r['per_seed'])}"
    return check_spec(cid, spec, abs(r["rho"]), details)


def generator_self_check(cid, spec, inputs):
    record = inputs["prepared"][spec["dataset"]]
    cosines = record["cosines"]
    details = f"η used {record['eta_used']}; |cos| per line {rounded(cosines)}"
    return check_spec(cid, spec, min(cosines.values()), details)


@needs("dataset")
def self_only_identity(cid, spec, doc):
    kl = [layer["kl_uniform"]["mean"] for layer in doc["spectra"][spec["method"]]["layers"]]
    ratio = min(kl) / doc["spectra"]["uniform"]["self_only_kl_uniform"]
    return check_spec(cid, spec, ratio, f"mean row KL per layer {rounded(kl)} vs log S")


KINDS = {
    "attention_vs_nulls": attention_vs_nulls,
    "program_gene_map": program_gene_map,
    "degrades_with_distance": degrades_with_distance,
    "family_vs_pool": family_vs_pool,
    "median_group_rho": median_group_rho,
    "loo_transfer": loo_transfer,
    "beats_magnitude": beats_magnitude,
    "aggregate_vs_rho": aggregate_vs_rho,
    "ratio_to_oracle": ratio_to_oracle,
    "generator_self_check": generator_self_check,
    "oracle_fails": oracle_fails,
    "rho_near_zero": rho_near_zero,
    "self_only_identity": self_only_identity,
    "swap_control": swap_control,
}


def check_claims(
    claims: dict,
    checks: dict,
    metrics: dict,
    prepared: dict,
    out: str,
    swap_control: dict | None = None,
) -> list[Claim]:
    inputs = {"metrics": metrics, "prepared": prepared, "swap_control": swap_control}
    results = run_claims(claims, KINDS, inputs, checks)
    write_json(out, results)
    return results


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser

    p = step_parser("Judge the configured claims on summary metrics.", paper="st_reliability")
    p.add_argument("out")
    p.add_argument("--metrics", nargs="+", metavar="DATASET=JSON", required=True)
    p.add_argument("--prepared", nargs="+", metavar="DATASET=JSON", required=True)
    p.add_argument("--swap-control", metavar="JSON", help="the controls of C1's swap")
    a = p.parse_args(argv)
    section = paper_section(a.config, "st_reliability")
    metrics, prepared = (_named_jsons(items) for items in (a.metrics, a.prepared))
    control = read_json(a.swap_control) if a.swap_control else None
    claims, checks = section.get("claims", {}), section.get("checks", {})
    check_claims(claims, checks, metrics, prepared, a.out, control)


def _named_jsons(items: list[str]) -> dict:
    return {k: read_json(v) for k, v in (item.split("=", 1) for item in items)}


if __name__ == "__main__":
    main()
