"""Evaluate one seed's models on one data set: per-prediction quality, signals, audit.

For every audited model (an encoder, full attention, true labels, full pool): Δ̂ and
predicted cells of every held-out pair, cell-eval's per-perturbation metrics per line,
the reliability signals, and the attention audit of the trained model and of its
untrained initialisation. The nulls (self-only, shuffled labels) get the audit; the C4
pool designs get quality on the C4 probes (data.c4_probes).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging

import numpy as np
import pandas as pd
import torch

from repro.common.device import select_device
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import set_threads
from repro.st_reliability.attention import between_variance, leading_direction
from repro.st_reliability.audit import audit_model, regression_map
from repro.st_reliability.causal import causal_quality
from repro.st_reliability.data import CONTROL, HELD_OUT, c4_probes, pair_table, split_info
from repro.st_reliability.encoders import encode_cells
from repro.st_reliability.lines import line_cells, open_cells, scan
from repro.st_reliability.metrics import cell_eval_metrics, pearson_rows
from repro.st_reliability.predict import load, predict_line
from repro.st_reliability.reliability import loo_train_nn_distance, predicted_nn_distance
from repro.st_reliability.sentences import CellIndex, basal_sentences

log = logging.getLogger(__name__)
QUALITY = ("pearson_delta", "mse_delta", "mae_delta", "discrimination_score_l1", "overlap_at_N")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvalConfig:
    n_sentences: int = 4  # fixed basal sentences per line; each prediction uses all of them
    gene_map_layer: int = -1
    gene_map_eps: float = 0.5
    enrichment_top: int = 20
    de_metrics: bool = True
    pert_batch: int = 0  # perturbations per forward pass (0: a line's all at once)
    # null models that also get the causal check (C1's negative control: no perturbation
    # identity, so no direction can carry it)
    causal_nulls: tuple[str, ...] = ()
    # C1's positive control in the trained model's regime (repro.st_reliability.planted):
    # {model, doses, seed}; absent: none
    planted: dict | None = None


def role(variant) -> str:
    if variant.pool != "full":
        return "c4"
    return "audited" if variant.attention == "full" and variant.labels == "true" else "null"


def evaluate_seed(
    adata,
    checkpoints: dict[str, str],
    cfg: EvalConfig,
    *,
    seed: int,
    device="cpu",
    embeddings=None,
) -> dict:
    """``adata``: the cell table, in memory or with X on disk (``lines.open_cells``); its
    cells are read one line at a time (``lines``), and only the control cells of every
    line are held throughout. ``embeddings`` (``se_space.CellEmbeddings``): the cells'
    SE-600M embeddings, read by the models with encoder se600m (they predict in SE space;
    State's decoder maps to genes)."""
    table = scan(adata)  # true Δ, the largest value and the control cells, line by line
    deltas, ceiling = table.deltas, table.ceiling
    pairs = pair_table(adata)
    held = pairs[pairs["split"].isin(HELD_OUT)]  # both regimes: few-shot and novel families
    by_line = _by_line(held)
    # predictions start from control cells only: only they are encoded for the model
    controls = table.controls
    base = CellIndex.build(controls, np.zeros((controls.n_obs, 1), np.float32))
    basal = basal_sentences(
        base, n_sentences=cfg.n_sentences, set_len=_set_len(checkpoints), seed=10_000 + seed
    )
    programs = adata.var["program"].astype(str).to_numpy() if "program" in adata.var else None
    rows, audits = [], {}
    for name, path in checkpoints.items():
        loaded = load(path, device=device)
        cells = torch.as_tensor(encode_cells(loaded.encoder, controls, embeddings))
        index = dataclasses.replace(base, cells=cells, vocabulary=loaded.vocabulary)
        kind = role(loaded.variant)
        log.info("%s (%s): evaluating", name, kind)
        if kind in ("audited", "c4"):
            targets = (
                by_line if kind == "audited" else _by_line(c4_probes(pairs, split_info(adata)))
            )
            rows += _quality_rows(
                name, loaded, index, basal, targets, adata, deltas, pairs, cfg, kind, ceiling
            )
        if kind in ("audited", "null") and programs is not None:
            ctx = dict(programs=programs, cfg=cfg, seed=seed, ceiling=ceiling)
            causal = None
            if kind == "audited":
                causal = _own_rows(rows, name)
            elif name in cfg.causal_nulls:
                causal = _predicted(loaded, index, basal, by_line, deltas, cfg, ceiling)
            audits[name] = _audit(
                loaded, index, basal, by_line, gene_maps=kind == "audited", causal=causal, **ctx
            )
            if kind == "audited":
                untrained = load(path, untrained=True, device=device)
                audits[f"{name}__untrained"] = _audit(
                    untrained, index, basal, by_line, gene_maps=False, causal=None, **ctx
                )
            if cfg.planted and name == cfg.planted["model"]:
                audits |= _planted_audits(name, loaded, index, basal, by_line, ctx)
    for row in rows:
        row.pop("delta_hat", None)  # only the audit's gene maps and PCA need them
        row.pop("delta_true", None)
    return {"pairs": rows, "audit": audits, "lines": sorted(by_line)}


def _set_len(checkpoints) -> int:
    ckpt = torch.load(next(iter(checkpoints.values())), map_location="cpu", weights_only=True)
    return int(ckpt["model_config"]["cell_set_len"])


def _by_line(pairs: pd.DataFrame) -> dict[str, list[str]]:
    return {c: list(g.index.get_level_values(1)) for c, g in pairs.groupby(level=0)}


def _quality_rows(name, loaded, index, basal, targets, adata, deltas, pairs, cfg, kind, ceiling):
    genes = list(adata.var_names)
    rows = []
    for line, perts in targets.items():
        cells, delta_hat, above = predict_line(
            loaded, index, basal[line], perts, ceiling=ceiling, pert_batch=cfg.pert_batch
        )
        if above:
            log.warning(
                "%s, %s: %d predicted values above the data's maximum clipped", name, line, above
            )
        real = line_cells(adata, line, [CONTROL, *perts])  # this line's cells only
        table = cell_eval_metrics(cells, real, genes, de=cfg.de_metrics and kind == "audited")
        true = deltas.loc[line].loc[perts].to_numpy()
        train_names = pairs.loc[line].index[pairs.loc[line]["split"] == "train"]
        train = deltas.loc[line].loc[train_names].to_numpy()
        signals = _signals(delta_hat, true, train)
        own = pearson_rows(delta_hat, true)
        for i, p in enumerate(perts):
            row = {
                "model": name,
                "line": line,
                "pert": p,
                "split": pairs.loc[(line, p), "split"],
                "clipped_above": above,
                "family": pairs.loc[(line, p), "family"],
                "rewired": pairs.loc[(line, p)].get("rewired", "unknown"),
                "pearson_own": float(own[i]),
                **{k: float(v[i]) for k, v in signals.items()},
            }
            row.update({m: float(table.loc[p, m]) for m in QUALITY if m in table.columns})
            if kind == "audited":
                row["delta_hat"] = delta_hat[i]
                row["delta_true"] = true[i]
            rows.append(row)
    return rows


def _signals(delta_hat: np.ndarray, true: np.ndarray, train: np.ndarray) -> dict[str, np.ndarray]:
    # ‖Δ̂‖ (C7's baseline) and ‖Δ‖ of the truth (the coverage regime's check that
    # magnitude does not decide quality)
    out = {
        "magnitude": np.linalg.norm(delta_hat, axis=1),
        "true_magnitude": np.linalg.norm(true, axis=1),
    }
    for metric in ("l2", "cosine"):
        scale = np.median(loo_train_nn_distance(train, metric))
        out[f"nn_{metric}"] = predicted_nn_distance(delta_hat, train, metric)
        out[f"oracle_{metric}"] = predicted_nn_distance(true, train, metric)
        out[f"scale_{metric}"] = np.full(len(true), scale)
    out["scale_magnitude"] = np.full(len(true), np.median(np.linalg.norm(train, axis=1)))
    return out


def _own_rows(rows: list[dict], name: str) -> dict:
    """line -> (perturbations, Δ̂, true Δ) of a model's quality rows."""
    out = {}
    for r in rows:
        if r["model"] == name:
            perts, hat, true = out.setdefault(r["line"], ([], [], []))
            perts.append(r["pert"])
            hat.append(r["delta_hat"])
            true.append(r["delta_true"])
    return {line: (p, np.array(h), np.array(t)) for line, (p, h, t) in out.items()}


def _predicted(loaded, index, basal, by_line, deltas, cfg, ceiling, *, own=False) -> dict:
    """line -> (perturbations, Δ̂, truth): the truth is the data's Δ, or (``own``) the
    model's own Δ̂ (a planted model is its own ground truth)."""
    out = {}
    for line, perts in by_line.items():
        _, hat, _ = predict_line(
            loaded, index, basal[line], perts, ceiling=ceiling, pert_batch=cfg.pert_batch
        )
        out[line] = (perts, hat, hat if own else deltas.loc[line].loc[perts].to_numpy())
    return out


def _planted_audits(name, loaded, index, basal, by_line, ctx) -> dict:
    """The trained model with a planted perturbation-dependent attention selection at each
    dose (:mod:`planted`): audit and causal check against its own predictions."""
    from repro.st_reliability.planted import planted_attention, planted_parameters

    cfg = ctx["cfg"]
    selector, direction = planted_parameters(
        len(loaded.vocabulary),
        loaded.model.basal_encoder[0].in_features,
        seed=int(cfg.planted["seed"]),
        model_seed=ctx["seed"],
    )
    out = {}
    for beta in cfg.planted["doses"]:
        plant = functools.partial(
            planted_attention, selector=selector, direction=direction, beta=float(beta)
        )
        planted = dataclasses.replace(loaded, plant=plant)
        own = _predicted(planted, index, basal, by_line, None, cfg, ctx["ceiling"], own=True)
        out[f"{name}__planted_beta{float(beta):g}"] = _audit(
            planted, index, basal, by_line, gene_maps=False, causal=own, **ctx
        )
    return out


def _audit(loaded, index, basal, by_line, *, programs, cfg, seed, ceiling, gene_maps, causal):
    """JSON-ready audit. With ``gene_maps`` (the audited models) also, per line, the gene
    maps: injection of the update's and of the residual stream's direction, and the
    regression of the model's Δ̂ on the PC1 scores. With ``causal`` (line -> perturbations,
    Δ̂, truth) the PC1 fraction and variance of Δ̂ and of the truth across perturbations and
    the causal check (:mod:`causal`) at ``cfg.gene_map_layer``."""
    audit = audit_model(
        loaded,
        index,
        basal,
        by_line,
        programs=programs,
        layer=cfg.gene_map_layer,
        eps=cfg.gene_map_eps,
        top=cfg.enrichment_top,
        gene_maps=gene_maps,
        pert_batch=cfg.pert_batch,
    )
    lines = {}
    for line, rec in audit["lines"].items():
        layers = [k for k in rec if isinstance(k, int)]
        out = {"pc1_fraction": {str(k): rec[k]["pc1_fraction"] for k in layers}}
        k = cfg.gene_map_layer % len(layers)
        if gene_maps:
            scores = rec[k]["scores"].cpu().numpy()
            out["regression_map"] = regression_map(causal[line][1], scores).tolist()
            # the true Δ's own PC1 direction: C2's positive control (a perfect model's map)
            out["true_delta_map"] = leading_direction(torch.as_tensor(causal[line][2]))[0].tolist()
            for key in ("gene_map", "gene_map_attention", "gene_map_residual"):
                out[key] = np.asarray(rec[key]).tolist()
            out["gene_map_cos_stress"] = rec["gene_map_cos_stress"]
            out["enrichment"] = rec["enrichment"]
        if causal is not None:
            perts, delta_hat, true = causal[line]
            for label, x in (("delta_hat", delta_hat), ("true_delta", true)):
                out[f"pc1_fraction_{label}"] = leading_direction(torch.as_tensor(x))[1]
                out[f"variance_{label}"] = between_variance(x)
            out["causal"] = causal_quality(
                loaded,
                index,
                basal[line],
                perts,
                true,
                layer=k,
                direction=rec[k]["direction"],
                seed=seed,
                ceiling=ceiling,
                pert_batch=cfg.pert_batch,
                unedited=delta_hat,  # the prediction at hand: same model and sentences
            )
        lines[line] = out
    return {"layers": audit["layers"], "lines": lines}


def run(
    cells: str,
    checkpoints: dict[str, str],
    cfg: EvalConfig,
    *,
    seed: int,
    out: str,
    device: str = "auto",
    threads: int = 1,
    se_embeddings: str | None = None,
    se_record: str | None = None,
) -> None:
    """``se_embeddings``/``se_record``: the se_embed step's files (models with se600m)."""
    set_threads(threads)
    dev = select_device(device)
    config, embeddings = {"eval": cfg, "models": checkpoints}, None
    with open_cells(cells) as adata:  # X stays on disk: read one line at a time
        if se_embeddings is not None:
            from repro.st_reliability.se_space import CellEmbeddings

            embeddings = CellEmbeddings.read(se_embeddings, se_record, adata.obs_names)
            config["se_embeddings"] = se_embeddings
        with RunRecorder(config=config, seed=seed, device=dev) as rec:
            result = evaluate_seed(
                adata, checkpoints, cfg, seed=seed, device=dev, embeddings=embeddings
            )
    write_json(out, {**result, "seed": seed, "provenance": rec.provenance()})


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Evaluate one seed's ST models on a cell table.")
    p.add_argument("cells")
    p.add_argument("out", help="metrics JSON")
    p.add_argument("models", nargs="+", metavar="NAME=CHECKPOINT")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    p.add_argument("--se-embeddings", default=None, help="se600m models: se_embed's .npy")
    p.add_argument("--se-record", default=None, help="se600m models: se_embed's .json")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    models = dict(m.split("=", 1) for m in a.models)
    run(
        a.cells,
        models,
        EvalConfig(),
        seed=a.seed,
        out=a.out,
        device=a.device,
        se_embeddings=a.se_embeddings,
        se_record=a.se_record,
    )


if __name__ == "__main__":
    main()
