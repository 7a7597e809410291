"""The rank-1 audit of one model (brief §2.3): attention spectra and the leading direction
of the attention-output update, mapped to gene space, per line."""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats

from repro.st_reliability import attention
from repro.st_reliability.audit_summary import PER_LINE, SWAPS, cosine, program_vector
from repro.st_reliability.predict import Loaded, sentence_batch


def enrichment(loading: np.ndarray, programs: np.ndarray, top: int) -> dict[str, float]:
    """Hypergeometric p-values: p53 targets among the ``top`` highest loadings and cycling
    genes among the ``top`` lowest, in the orientation (sign of the loading) that fits
    better — the sign of a singular vector is arbitrary."""
    best = {}
    for sign in (1.0, -1.0):
        order = np.argsort(-sign * loading)
        high, low = order[:top], order[-top:]
        n = len(loading)
        p = {}
        for name, genes in (("p53_high", high), ("cycling_low", low)):
            members = programs == name.split("_")[0]
            hits = int(members[genes].sum())
            p[name] = float(stats.hypergeom.sf(hits - 1, n, int(members.sum()), top))
        if not best or p["p53_high"] * p["cycling_low"] < best["p53_high"] * best["cycling_low"]:
            best = p
    return best


def chunks(items: list, size: int) -> list[list]:
    """``items`` in runs of ``size`` (0: all in one)."""
    size = size or max(len(items), 1)
    return [items[i : i + size] for i in range(0, len(items), size)]


def audit_model(
    loaded: Loaded,
    index,
    basal: dict,
    pairs_by_line: dict,
    *,
    programs: np.ndarray,
    layer: int,
    eps: float,
    top: int,
    gene_maps: bool,
    pert_batch: int = 0,
) -> dict:
    """Per layer: map statistics per head, set-mean share of the update and, per line, the
    PC1 variance fraction and the between-perturbation variance of the set-mean updates
    across that line's perturbations — with the model's own attention and, on the same
    weights and hidden states, with uniform and identity attention (the within-model swap) —
    and of the residual stream after the layer. With ``gene_maps`` also the gene-space
    loadings, per line, of the PC1 direction of ``layer``'s update injected after the layer
    (the brief's map) and into its attention update, and of the residual-stream direction.
    Forward passes take ``pert_batch`` perturbations of a line at a time (0: the whole
    line); the statistics are the same either way (means weighted by sentences)."""
    stress = program_vector(programs)
    per_layer: dict[int, dict] = {}
    lines = {}
    for line, perts in pairs_by_line.items():
        captured = _line_pass(loaded, index, basal[line], perts, pert_batch)
        line_out = {}
        for k, rec in captured.items():
            direction, fraction, scores = attention.leading_direction(rec["own"])
            layer_stats = per_layer.setdefault(k, {"maps": [], "share": []})
            layer_stats["maps"].append((rec["maps"], rec["n"]))
            layer_stats["share"].append(rec["share"])
            out = {
                "pc1_fraction": fraction,
                "variance": attention.between_variance(rec["own"]),
                "direction": direction,
                "scores": scores.cpu(),
            }
            for kind in SWAPS:  # within-model swap: same weights and hidden states
                out[f"pc1_fraction_{kind}"] = attention.leading_direction(rec[kind])[1]
                out[f"variance_{kind}"] = attention.between_variance(rec[kind])
            out["residual_direction"], out["pc1_fraction_residual"], _ = (
                attention.leading_direction(rec["residual"])
            )
            out["variance_residual"] = attention.between_variance(rec["residual"])
            line_out[k] = out
        lines[line] = line_out
        if gene_maps:
            k = layer % len(captured)
            maps_of = (
                ("gene_map", line_out[k]["direction"], "layer"),
                ("gene_map_attention", line_out[k]["direction"], "attention"),
                ("gene_map_residual", line_out[k]["residual_direction"], "layer"),
            )
            for key, v, site in maps_of:
                total = 0.0
                for chunk in chunks(perts, pert_batch):
                    batch = sentence_batch(index, basal[line], chunk, loaded.device)
                    with loaded.attention():
                        decode = loaded.encoder.decode
                        g = attention.gene_map(loaded.model, decode, batch, k, v, eps, site)
                    total = total + g.double() * len(chunk)
                lines[line][key] = (total / len(perts)).float().cpu().numpy()
            lines[line]["gene_map_cos_stress"] = cosine(lines[line]["gene_map"], stress)
            lines[line]["enrichment"] = enrichment(lines[line]["gene_map"], programs, top)
    return {"layers": _layer_summary(per_layer, lines), "lines": lines}


def _line_pass(loaded: Loaded, index, basal, perts: list[str], pert_batch: int) -> dict:
    """One line's forward passes, ``pert_batch`` perturbations at a time; per layer the
    set-mean rows (P × D) of the update with the model's own attention, with each swap, and
    of the residual stream, and the map statistics and set-mean share as means over the
    line's sentences (``n`` of them)."""
    layers = loaded.model.transformer_backbone.layers
    s = loaded.model.cell_sentence_len
    acc: dict[int, dict] = {}
    for chunk in chunks(perts, pert_batch):
        batch = sentence_batch(index, basal, chunk, loaded.device)
        with torch.no_grad(), loaded.attention(), attention.capture(loaded.model) as rec:
            loaded.model(batch)

        def set_means(x, n=len(chunk)):  # noqa: B008 — over sentences and cells → (P, D)
            return x.reshape(n, -1, s, x.shape[-1]).mean((1, 2)).cpu()

        for k, maps in rec["maps"].items():
            a = acc.setdefault(k, {key: [] for key in ("own", "residual", *SWAPS, "stats")})
            a["own"].append(set_means(rec["updates"][k]))
            a["residual"].append(set_means(rec["residual"][k]))
            for kind in SWAPS:
                with torch.no_grad():
                    swapped = attention.recompute_update(
                        layers[k].self_attn, rec["inputs"][k], attention.swapped_maps(maps, kind)
                    )
                a[kind].append(set_means(swapped))
            share = attention.set_mean_share(rec["updates"][k])
            a["stats"].append((attention.map_statistics(maps), share, maps.shape[0]))
    out = {}
    for k, a in acc.items():
        n = sum(count for _, _, count in a["stats"])
        out[k] = {key: torch.cat(a[key]) for key in ("own", "residual", *SWAPS)}
        out[k]["maps"] = {
            stat: sum(st[stat].cpu() * count for st, _, count in a["stats"]) / n
            for stat in a["stats"][0][0]
        }
        out[k]["share"] = sum(share * count for _, share, count in a["stats"]) / n
        out[k]["n"] = n
    return out


def _layer_summary(per_layer: dict, lines: dict) -> list[dict]:
    out = []
    for k, rec in sorted(per_layer.items()):
        n = sum(count for _, count in rec["maps"])
        heads = {
            stat: sum(maps[stat] * count for maps, count in rec["maps"]) / n
            for stat in rec["maps"][0][0]
        }
        out.append(
            {
                "layer": k,
                "heads": {stat: v.tolist() for stat, v in heads.items()},
                **{stat: float(v.mean()) for stat, v in heads.items()},
                "set_mean_share": float(np.mean(rec["share"])),
                **{stat: float(np.mean([lines[c][k][stat] for c in lines])) for stat in PER_LINE},
                "pc1_fraction_per_line": {c: lines[c][k]["pc1_fraction"] for c in lines},
                "variance_per_line": {c: lines[c][k]["variance"] for c in lines},
            }
        )
    return out


def regression_map(deltas: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Model-agnostic gene map: each gene's Δ̂ across perturbations regressed on PC1 scores."""
    s = scores - scores.mean()
    d = deltas - deltas.mean(0)
    return (s @ d) / (s @ s) if s @ s > 0 else np.full(deltas.shape[1], np.nan)
