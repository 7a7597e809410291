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

import argparse
import dataclasses
import math

import numpy as np

from repro.common.claims import (
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    check,
    check_spec,
    not_tested,
    paired_claim,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.st_reliability.reliability import spearman


def _all_of(cid: str, spec: dict, parts: list[tuple[str, Claim]]) -> Claim:
    """One verdict from several conditions: reproduced only if every one holds. The first
    condition gives the measured number (and interval)."""
    held = all(c.verdict == REPRODUCED for _, c in parts)
    first = parts[0][1]
    details = "; ".join(
        f"{label}: {c.verdict}"
        + (f" (measured {c.measured:.4g})" if c.measured is not None else "")
        + (f", {c.details}" if c.details else "")
        for label, c in parts
    )
    return Claim(
        cid,
        spec["claim"],
        " and ".join(c.criterion for _, c in parts),
        REPRODUCED if held else NOT_REPRODUCED,
        first.measured,
        spec.get("paper_value"),
        details,
        first.interval,
    )


def _part(spec: dict, criterion: dict, measured, details: str = "") -> Claim:
    return check("", spec["claim"], measured, criterion, details=details)


def _doc(inputs: dict, spec: dict, key: str = "dataset") -> dict | None:
    return inputs["metrics"].get(spec[key])


def _absent(cid: str, spec: dict, key: str = "dataset") -> Claim:
    return not_tested(
        cid,
        spec["claim"],
        f"data set {spec[key]} is not in this run",
        paper_value=spec.get("paper_value"),
    )


def attention_vs_nulls(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    spectra = doc["spectra"]
    method = spec["method"]
    trained = spectra[method]["layer_mean_per_seed"]
    seeds = doc["rho"]["seeds"]
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
    claim = _all_of(cid, spec, parts)
    if reported:
        extra = "; ".join(f"{label} (reported, not judged): {c.details}" for label, c in reported)
        claim = dataclasses.replace(claim, details=f"{claim.details}; {extra}")
    return claim


def program_gene_map(cid, spec, inputs):
    strong, negative = _doc(inputs, spec), _doc(inputs, spec, "negative_dataset")
    if strong is None or negative is None:
        return _absent(cid, spec, "dataset" if strong is None else "negative_dataset")
    maps, neg = strong["gene_maps"], negative["gene_maps"]
    parts = [
        (
            f"{spec['dataset']} median |cos|",
            _part(
                spec,
                spec["criterion"],
                maps["median_abs_cos_stress"],
                f"per group {_rounded(maps['abs_cos_stress'])}",
            ),
        ),
        (
            "cross-group consistency",
            _part(spec, spec["consistency"], maps["median_cross_group_abs_cos"]),
        ),
        (
            f"{spec['negative_dataset']} must fail",
            _part(
                spec,
                spec["negative"],
                neg["median_abs_cos_stress"],
                f"per group {_rounded(neg['abs_cos_stress'])}",
            ),
        ),
    ]
    return _all_of(cid, spec, parts)


def degrades_with_distance(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    signal = spec["signal"]
    rhos = {g: v[signal]["rho"] for g, v in doc["rho"]["groups"].items()}
    share = float(np.mean([r < 0 for r in rhos.values()]))
    curve = doc["rho"]["deciles"][signal]["quality"]
    monotone = float(spearman(np.arange(len(curve)), np.asarray(curve)))
    parts = [
        (
            "groups with ρ < 0",
            _part(spec, spec["criterion"], share, f"ρ per group {_rounded(rhos)}"),
        ),
        ("decile curve", _part(spec, spec["deciles"], monotone, f"decile means {_rounded(curve)}")),
    ]
    return _all_of(cid, spec, parts)


def family_vs_pool(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    c4 = doc["c4"]
    if not c4["available"]:
        return not_tested(cid, spec["claim"], c4["reason"], paper_value=spec.get("paper_value"))
    seeds = c4["seeds"]
    family = dict(zip(seeds, c4["family_drop"], strict=True))
    pool = dict(zip(seeds, c4["pool_drop"], strict=True))
    zero = dict.fromkeys(seeds, 0.0)
    means = {k: _rounded(v) for k, v in c4["mean_quality"].items()}
    parts = [
        (
            "family drop − pool drop",
            paired_claim("", spec, family, pool, f"mean probe q per design {means}"),
        ),
        ("family drop > 0", paired_claim("", spec, family, zero)),
    ]
    return _all_of(cid, spec, parts)


def pooled_rho(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    r = doc["rho"]["pooled"][spec["signal"]]
    oracle = doc["rho"]["pooled"].get(spec["signal"].replace("nn_", "oracle_"), {})
    details = (
        f"pooled ρ {r['rho']:.3f} [{r['low']:.3f}, {r['high']:.3f}], per seed "
        f"{_rounded(r['per_seed'])}; oracle ρ {oracle.get('rho', math.nan):.3f}"
    )
    claim = check_spec(cid, spec, r["high"], details)
    return dataclasses.replace(claim, measured=r["rho"], interval=(r["low"], r["high"]))


def loo_transfer(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    loo = doc["loo"][f"{spec['signal']}|{spec.get('good', 'threshold')}"]
    bas = {g: v["balanced_accuracy"] for g, v in loo["groups"].items()}
    directions = {g: v["directions"] for g, v in loo["groups"].items()}
    parts = [
        (
            "mean held-out balanced accuracy",
            _part(
                spec,
                spec["criterion"],
                loo["mean_balanced_accuracy"],
                f"per group {_rounded(bas)}; fitted directions {directions}",
            ),
        ),
        ("mean gap to own rule", _part(spec, spec["gap"], loo["mean_gap"])),
    ]
    return _all_of(cid, spec, parts)


def beats_magnitude(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    signal = spec["signal"]
    groups = doc["rho"]["groups"]
    wins = {g: abs(v[signal]["rho"]) > abs(v["magnitude"]["rho"]) for g, v in groups.items()}
    pooled = doc["rho"]["pooled"][f"{signal}_vs_magnitude"]
    parts = [
        (
            "groups where |ρ_NN| > |ρ_mag|",
            _part(
                spec,
                spec["criterion"],
                float(np.mean(list(wins.values()))),
                f"{sum(wins.values())} of {len(wins)}",
            ),
        ),
        (
            "pooled paired bootstrap",
            _part(
                spec,
                spec["pooled"],
                pooled["low"],
                f"|ρ_NN| − |ρ_mag| = {_interval(pooled, 'diff')}",
            ),
        ),
    ]
    return _all_of(cid, spec, parts)


def aggregate_vs_rho(cid, spec, inputs):
    doc = _doc(inputs, spec)
    if doc is None:
        return _absent(cid, spec)
    rec = doc["aggregate_vs_rho"][spec["signal"]]
    details = (
        f"group mean q {_rounded(dict(zip(rec['groups'], rec['mean_quality'], strict=True)))}; "
        f"group ρ {_rounded(dict(zip(rec['groups'], rec['rho'], strict=True)))}"
    )
    return check_spec(cid, spec, abs(rec["spearman"]), details)


def generator_self_check(cid, spec, inputs):
    record = inputs["prepared"][spec["dataset"]]
    cosines = record["cosines"]
    details = f"η used {record['eta_used']}; |cos| per line {_rounded(cosines)}"
    return check_spec(cid, spec, min(cosines.values()), details)


def self_only_identity(cid, spec, inputs):
    doc = _doc(inputs, spec)
    kl = [layer["kl_uniform"]["mean"] for layer in doc["spectra"][spec["method"]]["layers"]]
    ratio = min(kl) / doc["spectra"]["uniform"]["self_only_kl_uniform"]
    return check_spec(cid, spec, ratio, f"mean row KL per layer {_rounded(kl)} vs log S")


def _interval(record: dict, key: str) -> str:
    return f"{record[key]:.3f} [{record['low']:.3f}, {record['high']:.3f}]"


def _rounded(values):
    """Three decimals for the details; a missing value (JSON null) shows as nan."""

    def one(v):
        return math.nan if v is None else round(float(v), 3)

    if isinstance(values, dict):
        return {k: one(v) for k, v in values.items()}
    return [one(v) for v in values]


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
    p = argparse.ArgumentParser(description="Judge the configured claims on summary metrics.")
    p.add_argument("config", help="the workflow config (YAML) with papers.st_reliability")
    p.add_argument("out")
    p.add_argument("--metrics", nargs="+", metavar="DATASET=JSON", required=True)
    p.add_argument("--prepared", nargs="+", metavar="DATASET=JSON", required=True)
    a = p.parse_args(argv)
    import yaml

    with open(a.config) as handle:
        section = yaml.safe_load(handle)["papers"]["st_reliability"]
    metrics, prepared = (_named_jsons(items) for items in (a.metrics, a.prepared))
    check_claims(section.get("claims", {}), section.get("checks", {}), metrics, prepared, a.out)


def _named_jsons(items: list[str]) -> dict:
    return {k: read_json(v) for k, v in (item.split("=", 1) for item in items)}


if __name__ == "__main__":
    main()
