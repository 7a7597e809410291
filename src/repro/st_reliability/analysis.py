"""Across seeds: ρ of every signal per (encoder, line) group and pooled, deciles, LOO
threshold transfer, magnitude comparison (C7), aggregate-vs-ρ ranking (C8), baselines."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from repro.st_reliability.hierarchical import bootstrap_rho
from repro.st_reliability.metrics import pearson_rows
from repro.st_reliability.reliability import decile_curve
from repro.st_reliability.transfer import loo_threshold_transfer, risk_coverage

# the signals, and what a pooled analysis divides each by (its group's scale)
SIGNALS = {
    "nn_l2": "scale_l2",
    "nn_cosine": "scale_cosine",
    "oracle_l2": "scale_l2",
    "oracle_cosine": "scale_cosine",
    "magnitude": "scale_magnitude",
    "nn_l2_per_magnitude": None,  # L2 divided by ‖Δ̂‖: scale-free already
    # the negative control of every distance claim: a uniform draw per prediction
    # (analysis.control_seed), judged by the same handlers as the distances
    "random": None,
}
# ρ per group only (no pooling, deciles or LOO): ‖Δ‖ of the truth, for the check that
# magnitude does not decide quality in the coverage regime
GROUP_ONLY = ("true_magnitude",)
# the brief's magnitude-controlled variant: the partial ρ given ‖Δ̂‖ (the oracle's too, as
# its positive control)
PARTIAL = {f"partial_{name}": name for name in ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine")}
# signed advantage −ρ_NN − ρ_mag: the distance trusted when small (the paper's direction),
# the magnitude trusted when large (pre-registered; |ρ| would let a wrong sign win)
PAIRED = {
    f"{name}_vs_magnitude": (name, "magnitude")
    for name in ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine", "random")
}
# the paper's comparison (issue 35 §1): the median group ρ of a signal over the oracle's
ORACLES = ("oracle_l2", "oracle_cosine")
RATIOS = {
    f"{name}/{oracle}": (name, oracle)
    for name in ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine", "random")
    for oracle in ORACLES
}
AGGREGATE = ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine", "random")  # C8
KEY = ["model", "line", "pert"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class AnalysisConfig:
    quality: str = "pearson_delta"
    good_threshold: float = 0.5
    n_boot: int = 1000
    confidence: float = 0.95
    deciles: int = 10
    bootstrap_seed: int = 0
    control_seed: int = 0  # the random signal and the permuted programmes of C2's control


def pair_frame(evals: list[dict], control_seed: int) -> pd.DataFrame:
    """All seeds' per-prediction rows, with the derived L2-over-magnitude signal and the
    random control signal (uniform, drawn from ``control_seed``)."""
    df = pd.DataFrame([{**r, "seed": e["seed"]} for e in evals for r in e["pairs"]])
    df["nn_l2_per_magnitude"] = df["nn_l2"] / df["magnitude"]
    df["random"] = np.random.default_rng(control_seed).random(len(df))
    df["group"] = df["model"] + "|" + df["line"]
    return df


def _stack(df: pd.DataFrame, column: str, seeds: list[int]) -> np.ndarray:
    """(seeds, n) with the same prediction order in every seed."""
    wide = df.pivot_table(index=KEY, columns="seed", values=column, sort=True)
    if wide.isna().any().any():
        raise ValueError(f"{column}: the seeds do not predict the same pairs")
    return wide[seeds].to_numpy().T


def rho_tables(df: pd.DataFrame, cfg: AnalysisConfig) -> dict:
    """ρ per group, its median over groups (the primary statistic), and pooled over the
    groups both raw and with each signal divided by its group's scale; the hierarchical
    bootstrap (:mod:`hierarchical`) resamples predictions within groups and seeds."""
    rng = np.random.default_rng(cfg.bootstrap_seed)
    seeds = sorted(df["seed"].unique())
    base = df[df["seed"] == seeds[0]].sort_values(KEY)
    groups = base["group"].to_numpy()
    q = _stack(df, cfg.quality, seeds)

    def signals(normalised: bool) -> dict:
        out = {}
        for name, scale in SIGNALS.items():
            s = _stack(df, name, seeds)
            out[name] = s / _stack(df, scale, seeds) if normalised and scale else s
        if not normalised:  # evaluations written before true_magnitude lack it
            out |= {name: _stack(df, name, seeds) for name in GROUP_ONLY if name in df}
        for name, signal in PARTIAL.items():
            out[name] = (out[signal], out["magnitude"])
        return out

    raw, normalised = signals(False), signals(True)
    boot = dict(n_boot=cfg.n_boot, confidence=cfg.confidence)
    out = bootstrap_rho(
        q,
        raw,
        groups,
        rng=rng,
        pooled=normalised,
        paired=PAIRED,
        aggregate=AGGREGATE,
        ratios=RATIOS,
        **boot,
    )
    # the same draws' seeds and predictions for the raw pooled ρ
    raw_pooled = bootstrap_rho(
        q,
        {},
        groups,
        rng=np.random.default_rng(cfg.bootstrap_seed),
        pooled={k: v for k, v in raw.items() if k not in GROUP_ONLY},
        **boot,
    )
    out["pooled_raw"] = raw_pooled["pooled"]
    out["deciles"] = {
        name: decile_curve(normalised[name].ravel(), q.ravel(), cfg.deciles) for name in SIGNALS
    }
    out["seeds"] = seeds
    return out


def loo_tables(df: pd.DataFrame, cfg: AnalysisConfig) -> dict:
    """Leave-one-group-out transfer per seed for each pooled signal, with both "good"
    definitions (q ≥ q₀, and q ≥ the group's median); means over seeds per group."""
    out = {}
    for name, scale in SIGNALS.items():
        for variant in ("threshold", "group_median"):
            tables = []
            for seed, d in df.groupby("seed"):
                score = d[name] / d[scale] if scale else d[name]
                q = d[cfg.quality]
                ok = q >= (
                    cfg.good_threshold
                    if variant == "threshold"
                    else d.groupby("group")[cfg.quality].transform("median")
                )
                t = loo_threshold_transfer(
                    score.to_numpy(), ok.to_numpy(), d["group"].to_numpy(), quality=q.to_numpy()
                )
                tables.append(t.assign(seed=seed))
            t = pd.concat(tables)
            numeric = t.drop(columns=["direction", "own_direction"]).groupby("group").mean()
            flips = t.groupby("group")["direction"].agg(lambda s: sorted(set(s.dropna())))
            out[f"{name}|{variant}"] = {
                "groups": {
                    g: {**row, "directions": flips[g]}
                    for g, row in numeric.to_dict("index").items()
                },
                "mean_balanced_accuracy": float(numeric["balanced_accuracy"].mean()),
                "mean_gap": float(numeric["gap"].mean()),
                "per_seed_balanced_accuracy": t.groupby("seed")["balanced_accuracy"]
                .mean()
                .tolist(),
                "per_seed_gap": t.groupby("seed")["gap"].mean().tolist(),
                "per_seed_gap_in_sample": t.groupby("seed")["gap_in_sample"].mean().tolist(),
                "cells_without_both_classes": int(t["balanced_accuracy"].isna().sum()),
                "cells": len(t),
            }
    return out


def risk_curves(df: pd.DataFrame, cfg: AnalysisConfig, loo: dict) -> dict:
    """Risk-coverage per group for the predicted-NN signals, in the direction LOO fitted."""
    out = {}
    d = df[df["seed"] == df["seed"].min()]
    for name in ("nn_l2", "nn_cosine"):
        for g, sub in d.groupby("group"):
            fitted = loo[f"{name}|threshold"]["groups"][g]["directions"]
            direction = fitted[0] if fitted else "<="  # no rule fitted: smaller = more trusted
            out.setdefault(name, {})[g] = risk_coverage(
                sub[name].to_numpy(), sub[cfg.quality].to_numpy(), direction
            )
    return out


def baselines(deltas: pd.DataFrame, pairs: pd.DataFrame) -> dict:
    """Table 1's simple predictors on the few-shot pairs: the line's mean training Δ
    (perturbed mean) and the same perturbation's mean Δ in the lines that trained on it."""
    train = deltas.loc[pairs.index[pairs["split"] == "train"]].astype(np.float64)
    held = pairs.index[pairs["split"] == "fewshot"]
    true = deltas.loc[held].to_numpy()
    line_mean = train.groupby(level=0).mean()  # per line: its training perturbations' mean
    pert_mean = train.groupby(level=1).mean()  # per perturbation: the lines that trained it
    lines, perts = held.get_level_values(0), held.get_level_values(1)
    seen = perts.isin(pert_mean.index)
    other = np.full_like(true, np.nan)
    other[seen] = pert_mean.loc[perts[seen]].to_numpy()
    out = {
        "train_mean": pearson_rows(line_mean.loc[lines].to_numpy(), true),
        "other_lines": pearson_rows(other, true),
    }
    return {
        k: {"mean_pearson_delta": float(np.nanmean(v)), "n": int(np.isfinite(v).sum())}
        for k, v in out.items()
    }
