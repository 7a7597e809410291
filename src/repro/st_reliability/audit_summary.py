"""Across seeds: attention statistics of each model against the nulls (C1) and the gene
maps of the leading direction against the planted program (C2); and the pieces of the audit
that need no torch (the summaries import no torch: it costs seconds per job)."""

from __future__ import annotations

import math

import numpy as np

SWAPS = ("uniform", "identity")  # the within-model attention swap (issue 24 §1)
PER_LINE = (
    "pc1_fraction",
    "variance",
    *(f"{stat}_{kind}" for kind in SWAPS for stat in ("pc1_fraction", "variance")),
    "pc1_fraction_residual",
    "variance_residual",
)


def program_vector(programs: np.ndarray) -> np.ndarray:
    """The planted sign convention as a unit vector: cycling genes −1, p53 targets +1."""
    v = np.where(programs == "cycling", -1.0, np.where(programs == "p53", 1.0, 0.0))
    return v / np.linalg.norm(v) if v.any() else v


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else float("nan")


def uniform_statistics(n_cells: int) -> dict[str, float]:
    """The analytic null: A = 11ᵀ/S is exactly rank 1 and exactly uniform."""
    return {
        "rank1_energy": 1.0,
        "stable_rank": 1.0,
        "kl_uniform": 0.0,
        "row_dispersion": 0.0,
        "self_only_kl_uniform": math.log(n_cells),
    }


STATS = ("rank1_energy", "stable_rank", "kl_uniform", "row_dispersion", "set_mean_share", *PER_LINE)
# per line of the audited models: PCA of Δ̂ and of the true Δ across perturbations
SHUFFLES = 20  # permutations of the program's gene labels (C2's negative control on any data)
DELTA_PCA = (
    "pc1_fraction_delta_hat",
    "variance_delta_hat",
    "pc1_fraction_true_delta",
    "variance_true_delta",
)


def spectra(evals: list[dict], n_cells: int) -> dict:
    """Per model (trained, untrained, nulls): per layer, each statistic's mean over seeds,
    its per-seed values, and the layer mean per seed (what C1 is judged on)."""
    out = {"uniform": uniform_statistics(n_cells)}
    for name in evals[0]["audit"]:
        layers = [e["audit"][name]["layers"] for e in evals]
        per_layer = []
        for k in range(len(layers[0])):
            rec = {"layer": k}
            for stat in STATS:
                values = [seed_layers[k][stat] for seed_layers in layers]
                rec[stat] = {"mean": float(np.mean(values)), "per_seed": values}
            rec["heads"] = {
                stat: np.mean([s[k]["heads"][stat] for s in layers], axis=0).tolist()
                for stat in layers[0][k]["heads"]
            }
            per_layer.append(rec)
        layer_mean = {
            stat: [float(np.mean([L[stat] for L in s])) for s in layers] for stat in STATS
        }
        out[name] = {"layers": per_layer, "layer_mean_per_seed": layer_mean}
        lines = [e["audit"][name]["lines"] for e in evals]
        if "causal" in next(iter(lines[0].values())):
            out[name]["causal_per_seed"] = _line_means(lines, lambda rec, key: rec["causal"][key])
            out[name]["delta_pca_per_seed"] = _line_means(
                lines, lambda rec, key: rec[key], DELTA_PCA
            )
    return out


def _line_means(lines: list[dict], get, keys=None) -> dict[str, list[float]]:
    """key -> per seed, the mean over lines of ``get(line record, key)``."""
    first = next(iter(lines[0].values()))
    keys = keys or list(first["causal"])
    return {
        key: [float(np.mean([get(rec, key) for rec in seed.values()])) for seed in lines]
        for key in keys
    }


def gene_maps(evals: list[dict], programs: np.ndarray, models: list[str], seed: int) -> dict:
    """|cos(gene map, planted program)| per (encoder, line) group, and the cross-group
    cosine matrix, both averaged over seeds (the map's sign is arbitrary: |cos|)."""
    stress = program_vector(programs)
    # the program's gene labels permuted: a negative control of the map test on any data
    # (real data included), the mean |cos| over SHUFFLES permutations drawn from ``seed``
    rng = np.random.default_rng(seed)
    shuffled = [program_vector(rng.permutation(programs)) for _ in range(SHUFFLES)]
    groups = [(m, c) for m in models for c in sorted(evals[0]["audit"][m]["lines"])]
    cos_stress, matrices, enrichment = [], [], []
    # the maps beside the brief's injection: the regression of Δ̂ on the PC1 scores (C2's
    # test), the injection into the attention update, the residual stream's direction, and
    # the PC1 direction of the true Δ (C2's positive control: the map of a model that
    # learnt the data's leading direction exactly)
    keys = ("regression_map", "gene_map_attention", "gene_map_residual", "true_delta_map")
    explorations = {key: [] for key in keys if key in first_line(evals, models)}
    controls = {key: [] for key in explorations}
    for e in evals:
        maps = np.array([e["audit"][m]["lines"][c]["gene_map"] for m, c in groups])
        cos_stress.append([abs(cosine(g, stress)) for g in maps])
        for key, values in explorations.items():
            other = [np.asarray(e["audit"][m]["lines"][c][key]) for m, c in groups]
            values.append([abs(cosine(g, stress)) for g in other])
            controls[key].append(
                [float(np.mean([abs(cosine(g, v)) for v in shuffled])) for g in other]
            )
        unit = maps / np.linalg.norm(maps, axis=1, keepdims=True)
        matrices.append(np.abs(unit @ unit.T))
        enrichment.append([e["audit"][m]["lines"][c]["enrichment"] for m, c in groups])
    matrix = np.mean(matrices, axis=0)
    off = matrix[~np.eye(len(groups), dtype=bool)]
    per_group = np.mean(cos_stress, axis=0)
    names = [f"{m}|{c}" for m, c in groups]
    aligned = [
        [_aligned(e["audit"][m]["lines"][c]["gene_map"], stress) for m, c in groups] for e in evals
    ]
    return {
        "groups": names,
        "abs_cos_stress": dict(zip(names, per_group.tolist(), strict=True)),
        "abs_cos_stress_per_seed": cos_stress,
        **{
            f"abs_cos_stress_{key}": dict(zip(names, np.mean(v, 0).tolist(), strict=True))
            for key, v in explorations.items()
        },
        **{
            f"median_abs_cos_stress_{key}": float(np.median(np.mean(v, 0)))
            for key, v in explorations.items()
        },
        "median_abs_cos_stress": float(np.median(per_group)),
        "median_abs_cos_stress_per_seed": [float(np.median(s)) for s in cos_stress],
        **{
            f"median_abs_cos_stress_{key}_per_seed": [float(np.median(s)) for s in v]
            for key, v in explorations.items()
        },
        **{
            f"median_abs_cos_shuffled_program_{key}_per_seed": [float(np.median(s)) for s in v]
            for key, v in controls.items()
        },
        "cross_group_abs_cos": matrix.tolist(),
        "median_cross_group_abs_cos": float(np.median(off)) if off.size else float("nan"),
        "enrichment_seed0": dict(zip(names, enrichment[0], strict=True)),
        "mean_gene_map": dict(zip(names, np.mean(aligned, axis=0).tolist(), strict=True)),
    }


def first_line(evals: list[dict], models: list[str]) -> dict:
    """The audit record of the first model's first line (the keys every group carries)."""
    return next(iter(evals[0]["audit"][models[0]]["lines"].values()))


def _aligned(gene_map: list[float], stress: np.ndarray) -> np.ndarray:
    """The map with the sign that correlates positively with the program (for averaging)."""
    g = np.asarray(gene_map)
    return g if g @ stress >= 0 else -g
