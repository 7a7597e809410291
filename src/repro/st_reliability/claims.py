"""ST reliability's claims and checks, against criteria written in the config before the run.

Each handler reads ``inputs = {"metrics": {data set: summary}, "prepared": {data set:
prepare record}}``. Claims with several conditions (C1–C3, C6, C7) hold only when every
condition holds; each condition's number is in the details.

Kinds: ``attention_vs_nulls`` (C1: trained − null per seed, layer means), ``program_gene_map``
(C2, with its negative control), ``degrades_with_distance`` (C3), ``family_vs_pool`` (C4),
``pooled_rho`` (C5), ``loo_transfer`` (C6), ``beats_magnitude`` (C7), ``aggregate_vs_rho``
(C8); checks ``generator_self_check`` and ``self_only_identity``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.common.claims import (
    NOT_REPRODUCED,
    Claim,
    check_spec,
    not_tested,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.st_reliability.claim_parts import all_of, condition, interval, needs, rounded
from repro.st_reliability.reliability import spearman


@needs("dataset")
def attention_vs_nulls(cid, spec, doc):
    spectra, method, seeds = doc["spectra"], spec["method"], doc["rho"]["seeds"]
    trained = spectra[method]["layer_mean_per_seed"]
    parts, reported = [], []
    for comparison in [*spec["comparisons"], *spec.get("reported", [])]:
        stat, null = comparison["statistic"], comparison["null"]
        key = f"{method}__untrained" if null == "untrained" else null
        if key not in spectra:
            part = Claim("", spec["claim"], "", NOT_REPRODUCED, details=f"null {key} was not run")
        else:
            a = dict(zip(seeds, trained[stat], strict=True))
            b = dict(zip(seeds, spectra[key]["layer_mean_per_seed"][stat], strict=True))
            part = paired_claim("", spec, a, b)
        label = f"{stat} {method} − {null}"
        (parts if comparison in spec["comparisons"] else reported).append((label, part))
    claim = all_of(cid, spec, parts)
    if reported:
        extra = "; ".join(f"{label} (reported, not judged): {c.details}" for label, c in reported)
        claim = dataclasses.replace(claim, details=f"{claim.details}; {extra}")
    return claim


@needs("dataset", "negative_dataset")
def program_gene_map(cid, spec, strong, negative):
    maps, neg = strong["gene_maps"], negative["gene_maps"]
    per_group = f"per group {rounded(maps['abs_cos_stress'])}"
    parts = [
        condition(
            f"{spec['dataset']} median |cos|",
            spec,
            "criterion",
            maps["median_abs_cos_stress"],
            per_group,
        ),
        condition(
            "cross-group consistency", spec, "consistency", maps["median_cross_group_abs_cos"]
        ),
        condition(
            f"{spec['negative_dataset']} must fail",
            spec,
            "negative",
            neg["median_abs_cos_stress"],
            f"per group {rounded(neg['abs_cos_stress'])}",
        ),
    ]
    claim = all_of(cid, spec, parts)
    explored = [
        f"{label} median |cos| {maps[key]:.3f}"
        for label, key in (
            ("regression map", "median_abs_cos_stress_regression_map"),
            ("injection into the attention update", "median_abs_cos_stress_gene_map_attention"),
        )
        if key in maps
    ]
    if explored:
        note = "exploration, not the verdict: " + ", ".join(explored)
        claim = dataclasses.replace(claim, details=f"{claim.details}; {note}")
    return claim


@needs("dataset")
def degrades_with_distance(cid, spec, doc):
    signal = spec["signal"]
    rhos = {g: v[signal]["rho"] for g, v in doc["rho"]["groups"].items()}
    share = float(np.mean([r is not None and r < 0 for r in rhos.values()]))
    curve = doc["rho"]["deciles"][signal]["quality"]
    monotone = float(spearman(np.arange(len(curve)), np.asarray(curve, dtype=float)))
    parts = [
        condition("groups with ρ < 0", spec, "criterion", share, f"ρ per group {rounded(rhos)}"),
        condition("decile curve", spec, "deciles", monotone, f"decile means {rounded(curve)}"),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
def family_vs_pool(cid, spec, doc):
    c4 = doc["c4"]
    if not c4["available"]:
        return not_tested(cid, spec["claim"], c4["reason"], paper_value=spec.get("paper_value"))
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
def pooled_rho(cid, spec, doc):
    r = doc["rho"]["pooled"][spec["signal"]]
    oracle = doc["rho"]["pooled"].get(spec["signal"].replace("nn_", "oracle_"))
    details = f"pooled ρ {interval(r, 'rho')}, per seed {rounded(r['per_seed'])}"
    if oracle:
        details += f"; oracle ρ {interval(oracle, 'rho')}"
    claim = check_spec(cid, spec, r["high"], details)
    return dataclasses.replace(claim, measured=r["rho"], interval=(r["low"], r["high"]))


@needs("dataset")
def loo_transfer(cid, spec, doc):
    loo = doc["loo"][f"{spec['signal']}|{spec.get('good', 'threshold')}"]
    bas = {g: v["balanced_accuracy"] for g, v in loo["groups"].items()}
    directions = {g: v["directions"] for g, v in loo["groups"].items()}
    per_group = f"per group {rounded(bas)}; fitted directions {directions}"
    parts = [
        condition(
            "mean held-out balanced accuracy",
            spec,
            "criterion",
            loo["mean_balanced_accuracy"],
            per_group,
        ),
        condition("mean gap to own rule", spec, "gap", loo["mean_gap"]),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
def beats_magnitude(cid, spec, doc):
    signal, groups = spec["signal"], doc["rho"]["groups"]
    wins = {g: abs(v[signal]["rho"]) > abs(v["magnitude"]["rho"]) for g, v in groups.items()}
    pooled = doc["rho"]["pooled"][f"{signal}_vs_magnitude"]
    share = float(np.mean(list(wins.values())))
    parts = [
        condition(
            "groups where |ρ_NN| > |ρ_mag|",
            spec,
            "criterion",
            share,
            f"{sum(wins.values())} of {len(wins)}",
        ),
        condition(
            "pooled paired bootstrap",
            spec,
            "pooled",
            pooled["low"],
            f"|ρ_NN| − |ρ_mag| = {interval(pooled, 'diff')}",
        ),
    ]
    return all_of(cid, spec, parts)


@needs("dataset")
def aggregate_vs_rho(cid, spec, doc):
    rec = doc["aggregate_vs_rho"][spec["signal"]]
    quality = rounded(dict(zip(rec["groups"], rec["mean_quality"], strict=True)))
    rho = rounded(dict(zip(rec["groups"], rec["rho"], strict=True)))
    return check_spec(cid, spec, abs(rec["spearman"]), f"group mean q {quality}; group ρ {rho}")


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
    "pooled_rho": pooled_rho,
    "loo_transfer": loo_transfer,
    "beats_magnitude": beats_magnitude,
    "aggregate_vs_rho": aggregate_vs_rho,
    "generator_self_check": generator_self_check,
    "self_only_identity": self_only_identity,
}


def check_claims(
    claims: dict, checks: dict, metrics: dict, prepared: dict, out: str
) -> list[Claim]:
    results = run_claims(claims, KINDS, {"metrics": metrics, "prepared": prepared}, checks)
    write_json(out, results)
    return results


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser

    p = step_parser("Judge the configured claims on summary metrics.", paper="st_reliability")
    p.add_argument("out")
    p.add_argument("--metrics", nargs="+", metavar="DATASET=JSON", required=True)
    p.add_argument("--prepared", nargs="+", metavar="DATASET=JSON", required=True)
    a = p.parse_args(argv)
    section = paper_section(a.config, "st_reliability")
    metrics, prepared = (_named_jsons(items) for items in (a.metrics, a.prepared))
    check_claims(section.get("claims", {}), section.get("checks", {}), metrics, prepared, a.out)


def _named_jsons(items: list[str]) -> dict:
    return {k: read_json(v) for k, v in (item.split("=", 1) for item in items)}


if __name__ == "__main__":
    main()
