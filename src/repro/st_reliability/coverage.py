"""The coverage regime (issue 35 §1): held-out perturbations at graded distances from the
line's training Δ, with one magnitude distribution for every distance.

The brief's simulator lets effect size decide quality (weak perturbations are noisy and far
from nothing, strong ones easy and far from everything), so there even the oracle — the NN
distance of the *true* Δ — does not rank quality the paper's way. This generator builds the
mechanism the paper describes instead: a line predicts well what its own training
perturbations cover.

- **Families.** ``anchor_families`` programmes, trained in every line. Each line also holds
  out ``levels`` graded families whole (split ``fewshot``: held out in this line, trained
  in the three others, as in State's few-shot setting). Graded family k of a line has the
  programme ``√(1 − t²) · anchor + t · novel`` (unit vectors, ``novel`` orthogonal to its
  anchor, ``t = k / (levels − 1)``): t = 0 repeats an anchor, t = 1 is a programme no
  training perturbation of the line shares. Every programme is scaled to
  ``programme_norm``; each perturbation adds sparse idiosyncratic effects.
- **Lines.** A line responds to a programme v through its own map
  ``R_c(v) ∝ v + γ W_c v`` (W_c sparse Gaussian: each gene's response
  reaches ``map_genes`` others; ``γ = line_specificity``): the
  line-specific part of a response can be learnt only from that line's training
  perturbations, so a programme the line's training set covers is predictable there and a
  novel one only through the other lines.
- **Magnitude.** Δ_{c,p} = a_p · ``programme_norm`` · R_c(r_p) / ‖R_c(r_p)‖ with r_p the
  programme plus the idiosyncratic effects and a_p ~ LogNormal(``effect_logmean``,
  ``effect_logsd``) for every perturbation, whatever its t: ‖Δ‖ = a_p · norm exactly, so
  magnitude cannot stand in for coverage.

No shared stress programme and no knockdown of a target gene: both are the same in every
line, so they would be predicted for every perturbation whatever its coverage. Cells come
from :func:`repro.st_reliability.simulate.cells` (the brief's expression model).
"""

from __future__ import annotations

import dataclasses

import anndata as ad
import numpy as np
import pandas as pd

from repro.st_reliability.data import CONTROL, SPLITS
from repro.st_reliability.simulate import ExpressionConfig, cells


@dataclasses.dataclass(frozen=True, kw_only=True)
class CoverageConfig(ExpressionConfig):
    """The responses; the expression model is the brief's (:class:`ExpressionConfig`)."""

    anchor_families: int = 6  # trained in every line
    levels: int = 8  # graded families held out whole per line, one per similarity level
    perts_per_family: int = 6
    family_genes: int = 25
    programme_norm: float = 10.0
    idio_genes: int = 5
    idio_sd: float = 0.5
    line_specificity: float = 1.5  # γ of the line maps R_c
    map_genes: int = 4  # non-zeros per column of W_c: a gene's response reaches 4 others
    effect_logmean: float = 0.0
    effect_logsd: float = 0.2

    def __post_init__(self):
        if self.levels < 2:
            raise ValueError("levels must be >= 2 (t runs from 0 to 1)")
        if self.family_genes > self.n_genes or self.idio_genes > self.n_genes:
            raise ValueError("family_genes and idio_genes must not exceed n_genes")


@dataclasses.dataclass(frozen=True)
class Coverage:
    """What the generator planted."""

    delta: np.ndarray  # (lines, P, G) planted pseudobulk responses
    family: np.ndarray  # (P,) family index of each perturbation
    similarity: dict[int, float]  # graded family -> t (anchors absent)
    anchor_of: dict[int, int]  # graded family -> its anchor family
    held_in: dict[int, int]  # graded family -> the line that holds it out
    programmes: np.ndarray  # (F, G) unit programmes


def _sparse_unit(rng, n_genes: int, k: int) -> np.ndarray:
    v = np.zeros(n_genes)
    v[rng.choice(n_genes, k, replace=False)] = rng.normal(0, 1, k)
    return v / np.linalg.norm(v)


def line_map(rng, n_genes: int, per_column: int) -> np.ndarray:
    """W_c: each gene's response passes to ``per_column`` other genes with N(0, 1/k)
    weights, so W_c v keeps ‖v‖ on average and stays sparse."""
    w = np.zeros((n_genes, n_genes))
    for g in range(n_genes):
        rows = rng.choice(n_genes, per_column, replace=False)
        w[rows, g] = rng.normal(0, 1 / np.sqrt(per_column), per_column)
    return w


def plant(cfg: CoverageConfig, rng: np.random.Generator) -> Coverage:
    G, n_per = cfg.n_genes, cfg.perts_per_family
    anchors = [_sparse_unit(rng, G, cfg.family_genes) for _ in range(cfg.anchor_families)]
    programmes = list(anchors)
    similarity, anchor_of, held_in = {}, {}, {}
    for c in range(cfg.n_lines):
        for k in range(cfg.levels):
            f = len(programmes)
            anchor = (c * cfg.levels + k) % cfg.anchor_families
            novel = _sparse_unit(rng, G, cfg.family_genes)
            novel -= (novel @ anchors[anchor]) * anchors[anchor]  # orthogonal to its anchor
            novel /= np.linalg.norm(novel)
            t = k / (cfg.levels - 1)
            programmes.append(np.sqrt(1 - t**2) * anchors[anchor] + t * novel)
            similarity[f], anchor_of[f], held_in[f] = t, anchor, c
    programmes = np.array(programmes)
    family = np.repeat(np.arange(len(programmes)), n_per)
    P = len(family)
    idio = np.zeros((P, G))
    for p in range(P):
        genes = rng.choice(G, cfg.idio_genes, replace=False)
        idio[p, genes] = rng.normal(0, cfg.idio_sd, cfg.idio_genes)
    effect = rng.lognormal(cfg.effect_logmean, cfg.effect_logsd, P)
    response = cfg.programme_norm * programmes[family] + idio  # (P, G), before the line map
    gamma = cfg.line_specificity
    delta = np.empty((cfg.n_lines, P, G))
    for c in range(cfg.n_lines):
        w = line_map(rng, G, cfg.map_genes)
        mapped = response + gamma * response @ w.T
        # every response scaled to a_p · programme_norm: ‖Δ‖ does not depend on t at all
        unit = mapped / np.linalg.norm(mapped, axis=1, keepdims=True)
        delta[c] = effect[:, None] * cfg.programme_norm * unit
    return Coverage(delta, family, similarity, anchor_of, held_in, programmes)


def simulate_coverage(cfg: CoverageConfig, seed: int) -> tuple[ad.AnnData, Coverage]:
    """The cell table with its split (obs ``split``: each line's graded families
    ``fewshot``, everything else ``train``), obs ``similarity`` (t of a held-out pair's
    family; NaN elsewhere) and uns ``coverage`` (t, anchor and holding line per family)."""
    rng = np.random.default_rng(seed)
    planted = plant(cfg, rng)
    P = len(planted.family)
    names = [f"P{p:03d}" for p in range(P)]
    rewired = np.zeros((cfg.n_lines, P), dtype=bool)
    adata = cells(cfg, planted.delta, names, planted.family, rewired, rng)
    obs = adata.obs
    line = obs["celltype_name"].astype(str).to_numpy()
    family = obs["family"].astype(str).to_numpy()
    held = {(f"line{planted.held_in[f]}", f"family{f}"): t for f, t in planted.similarity.items()}
    key = list(zip(line, family, strict=True))
    split = np.where(obs["pert_name"].astype(str) == CONTROL, "control", "train")
    split = np.where([k in held for k in key], "fewshot", split)
    obs["split"] = pd.Categorical(split, categories=SPLITS)
    obs["similarity"] = [held.get(k, np.nan) for k in key]
    adata.uns["split"] = {
        "c4_families": [],
        "c4_lines": [],
        "novel_families": [],
        "novel_lines": [],
    }
    adata.uns["coverage"] = {
        "config": dataclasses.asdict(cfg),
        "seed": seed,
        "families": {
            f"family{f}": {
                "similarity": t,
                "anchor": f"family{planted.anchor_of[f]}",
                "held_out_in": f"line{planted.held_in[f]}",
            }
            for f, t in planted.similarity.items()
        },
    }
    return adata, planted
