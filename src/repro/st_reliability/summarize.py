"""One data set's metrics over all seeds: reliability, LOO transfer, audit, C4 designs."""

from __future__ import annotations

import argparse
import dataclasses
import logging

import numpy as np
import pandas as pd

from repro.common.io import read_json, write_json
from repro.st_reliability import analysis, audit_summary
from repro.st_reliability.data import c4_probes, pair_table, split_info, training_pairs
from repro.st_reliability.lines import open_cells, scan
from repro.st_reliability.metrics import pearson_rows

log = logging.getLogger(__name__)
C4_POOLS = ("full", "family_removed", "size_matched", "pool_shrunk")


def family_designs(df, pairs, split: dict, c4_models: dict[str, str], quality: str) -> dict:
    """C4: per seed, mean quality on the C4 probes under each pool design.

    ``c4_models`` maps each pool design to its model (``full`` is the audited HVG model).
    family_drop = size_matched − family_removed (same pool size, family coverage lost);
    pool_drop = full − pool_shrunk (family coverage kept, pool shrunk).
    """
    probes = df.merge(
        c4_probes(pairs, split).reset_index()[["celltype_name", "pert_name"]],
        left_on=["line", "pert"],
        right_on=["celltype_name", "pert_name"],
    )
    means = {
        pool: probes[probes["model"] == m].groupby("seed")[quality].mean()
        for pool, m in c4_models.items()
    }
    if any(v.empty for v in means.values()):
        missing = [p for p, v in means.items() if v.empty]
        return {"available": False, "reason": f"no C4 probe predictions for {missing}"}
    seeds = sorted(set.intersection(*(set(v.index) for v in means.values())))
    per_seed = {p: [float(v[s]) for s in seeds] for p, v in means.items()}
    family_drop = np.subtract(per_seed["size_matched"], per_seed["family_removed"])
    pool_drop = np.subtract(per_seed["full"], per_seed["pool_shrunk"])
    return {
        "available": True,
        "seeds": seeds,
        "mean_quality": per_seed,
        "family_drop": family_drop.tolist(),
        "pool_drop": pool_drop.tolist(),
        "n_probe_predictions": int(len(probes[probes["model"] == c4_models["full"]]) / len(seeds)),
    }


def c4_controls(deltas, pairs, adata, seeds: list[int], shrink_fraction: float) -> dict:
    """C4's controls, scored on the same probes and pool designs as the models (the designs
    drawn with each model seed), with predictors whose dependence on family coverage is
    known: ``family_mean`` predicts a probe by the mean true Δ of its family's members in
    its line's pool (the line's pool mean when the design removed them all): quality
    driven by family identity, the positive control; ``other_mean`` predicts it by the
    mean true Δ of the other families in its line's pool: it never reads the probe's
    family, the negative control."""
    probes = c4_probes(pairs, split_info(adata))
    family = pairs["family"]
    quality = {name: {pool: [] for pool in C4_POOLS} for name in ("family_mean", "other_mean")}
    for seed in seeds:
        for pool in C4_POOLS:
            kept, _ = training_pairs(adata, pool, shrink_fraction, seed)
            members = pd.MultiIndex.from_tuples(kept)
            scores = {name: [] for name in quality}
            for (line, pert), row in probes.iterrows():
                in_line = members[members.get_level_values(0) == line]
                same = family.loc[in_line].to_numpy() == row["family"]
                mates, others = in_line[same], in_line[~same]
                true = deltas.loc[[(line, pert)]].to_numpy()
                preds = {
                    "family_mean": deltas.loc[mates if len(mates) else in_line].mean(),
                    "other_mean": deltas.loc[others].mean(),
                }
                for name, pred in preds.items():
                    scores[name].append(float(pearson_rows(pred.to_numpy()[None], true)[0]))
            for name, values in scores.items():
                quality[name][pool].append(float(np.mean(values)))
    return {
        name: {
            "available": True,
            "seeds": list(seeds),
            "mean_quality": per_pool,
            "family_drop": np.subtract(
                per_pool["size_matched"], per_pool["family_removed"]
            ).tolist(),
            "pool_drop": np.subtract(per_pool["full"], per_pool["pool_shrunk"]).tolist(),
        }
        for name, per_pool in quality.items()
    }


def summarize(
    adata,
    evals: list[dict],
    cfg: analysis.AnalysisConfig,
    *,
    audited: list[str],
    c4_models: dict[str, str] | None,
    n_cells: int,
    shrink_fraction: float = 0.5,
) -> dict:
    df = analysis.pair_frame(evals, cfg.control_seed)
    audited_rows = df[df["model"].isin(audited)]
    # today's regime (few-shot: held out in this line, seen in others) decides the claims;
    # the novelty regime (whole families held out in a line) is reported and has its own
    main = audited_rows[audited_rows["split"] == "fewshot"]
    novel = audited_rows[audited_rows["split"] == "novel"]
    rho = analysis.rho_tables(main, cfg)
    deltas = scan(adata, controls=False).deltas
    loo = analysis.loo_tables(main, cfg)
    out = {
        "rho": rho,
        "rho_novel": analysis.rho_tables(novel, cfg) if len(novel) else None,
        "quality_by_regime": audited_rows.groupby(["split", "model"])[cfg.quality]
        .mean()
        .unstack()
        .to_dict(),
        "quality_by_rewired": audited_rows.groupby(["split", "rewired"])[cfg.quality]
        .mean()
        .unstack()
        .to_dict()
        if "rewired" in audited_rows
        else {},
        "loo": loo,
        "risk_coverage": analysis.risk_curves(main, cfg, loo),
        # true Δ one line at a time (X may stay on disk: lines.open_cells)
        "baselines": analysis.baselines(deltas, pair_table(adata)),
        "quality_by_model": main.groupby(["model", "seed"])[cfg.quality]
        .mean()
        .unstack()
        .mean(1)
        .to_dict(),
        "good_share": float((main[cfg.quality] >= cfg.good_threshold).mean()),
        "scatter": audited_rows[audited_rows["seed"] == rho["seeds"][0]][
            [
                "group",
                "model",
                "line",
                "pert",
                "split",
                cfg.quality,
                "nn_l2",
                "nn_cosine",
                "scale_l2",
                "scale_cosine",
                "magnitude",
            ]
        ].to_dict("list"),
        "spectra": audit_summary.spectra(evals, n_cells),
        "c4": family_designs(df, pair_table(adata), split_info(adata), c4_models, cfg.quality)
        if c4_models
        else {"available": False, "reason": "no C4 pool designs configured for this data set"},
    }
    if out["c4"]["available"]:
        out["c4"]["controls"] = c4_controls(
            deltas, pair_table(adata), adata, out["c4"]["seeds"], shrink_fraction
        )
    if "program" in adata.var:
        programs = adata.var["program"].astype(str).to_numpy()
        out["gene_maps"] = audit_summary.gene_maps(evals, programs, audited, cfg.control_seed)
    return out


def run(
    cells: str,
    eval_paths: list[str],
    cfg: analysis.AnalysisConfig,
    *,
    audited: list[str],
    c4_models: dict[str, str] | None,
    n_cells: int,
    out: str,
    shrink_fraction: float = 0.5,
) -> None:
    evals = [read_json(p) for p in eval_paths]
    with open_cells(cells) as adata:
        result = summarize(
            adata,
            evals,
            cfg,
            audited=audited,
            c4_models=c4_models,
            n_cells=n_cells,
            shrink_fraction=shrink_fraction,
        )
    write_json(out, {**result, "config": dataclasses.asdict(cfg)})


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Summarise one data set's evaluations over seeds.")
    p.add_argument("cells")
    p.add_argument("out")
    p.add_argument("evals", nargs="+", help="evaluation JSONs, one per seed")
    p.add_argument("--audited", nargs="+", default=["hvg", "pca", "ae"])
    p.add_argument("--cell-set-len", type=int, default=32)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    run(
        a.cells,
        a.evals,
        analysis.AnalysisConfig(),
        audited=a.audited,
        c4_models=None,
        n_cells=a.cell_set_len,
        out=a.out,
    )


if __name__ == "__main__":
    main()
