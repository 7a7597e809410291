"""The embedded simulator of CRISPRi perturbation responses in four cell lines (brief §6).

A shared stress program (cycling genes down, p53 targets up), ten family programs and
sparse idiosyncratic effects make each pseudobulk response

    Δ_{c,p} = a_p (s_{c,f} prog_f + idio_p) + κ_c · min(a_p, 2) · η · stress + knockdown,

with 12 % of (line, perturbation) pairs rewired to another family's program. Cells are
``μ_g + line offset + cycling phase + Δ + noise``, clipped at 0 like log1p expression.
``η = 0`` is the negative control with no shared program. Numpy only; returns AnnData.
"""

from __future__ import annotations

import dataclasses

import anndata as ad
import numpy as np
import pandas as pd

from repro.st_reliability.data import CONTROL, true_deltas

# Real gene names for the planted programs (brief §2.3.6), so a reader recognises them.
CYCLING_GENES = (
    "MKI67",
    "TOP2A",
    "CCNB1",
    "CDK1",
    "CCNA2",
    "BIRC5",
    "AURKA",
    "PLK1",
    "CDC20",
    "BUB1",
    "CENPF",
    "MCM2",
    "PCNA",
    "E2F1",
    "TYMS",
)
P53_GENES = (
    "CDKN1A",
    "MDM2",
    "GDF15",
    "BAX",
    "FAS",
    "BBC3",
    "TP53I3",
    "SESN1",
    "RRM2B",
    "ZMAT3",
    "TNFRSF10B",
    "PHLDA3",
    "SPATA18",
    "FDXR",
    "AEN",
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExpressionConfig:
    """The brief's expression model, which :func:`cells` reads (both generators share it)."""

    n_genes: int = 200
    n_lines: int = 4
    n_control: int = 400
    cells_per_pert: int = 48
    baseline: float = 3.0  # added to every gene: keeps cells >= 0 without clipping effects
    mu_mean: float = 1.0
    mu_sd: float = 0.5
    offset_fraction: float = 0.3  # genes with a line-specific offset
    offset_sd: float = 0.4
    noise_sd: float = 0.35
    cycling_sd: float = 0.4  # cell-to-cell cycling phase shift on the cycling genes


@dataclasses.dataclass(frozen=True, kw_only=True)
class SimConfig(ExpressionConfig):
    n_families: int = 10
    perts_per_family: int = 16
    stress_loading: float = 0.8
    family_genes: int = 25
    family_sd: float = 0.8
    idio_genes: int = 5
    idio_sd: float = 0.5
    knockdown: float = -1.5
    effect_logmean: float = -0.3
    effect_logsd: float = 0.6
    family_scale: tuple[float, float] = (0.5, 1.5)
    stress_gains: tuple[float, ...] = (1.0, 0.6, 1.3, 0.8)
    rewire_fraction: float = 0.12
    eta: float = 1.5

    def __post_init__(self):
        n_prog = len(CYCLING_GENES) + len(P53_GENES)
        if self.n_genes < n_prog + self.n_families * self.perts_per_family:
            raise ValueError(
                f"n_genes={self.n_genes} must hold the {n_prog} program genes plus one "
                f"target gene per perturbation ({self.n_families * self.perts_per_family})"
            )
        if len(self.stress_gains) != self.n_lines:
            raise ValueError(f"stress_gains needs one gain per line ({self.n_lines})")


@dataclasses.dataclass(frozen=True)
class Planted:
    """What the generator planted: the ground truth the audit is compared with."""

    stress: np.ndarray  # (G,)
    family_programs: np.ndarray  # (F, G)
    delta: np.ndarray  # (lines, P, G) planted pseudobulk responses (before clipping)
    family: np.ndarray  # (P,) family index of each perturbation
    used_family: np.ndarray  # (lines, P) program actually used (differs where rewired)
    targets: np.ndarray  # (P,) index of the knocked-down gene


def gene_names(n_genes: int) -> list[str]:
    rest = [f"GENE{i:03d}" for i in range(n_genes - len(CYCLING_GENES) - len(P53_GENES))]
    return [*CYCLING_GENES, *P53_GENES, *rest]


def plant(cfg: SimConfig, rng: np.random.Generator) -> Planted:
    G, F, n_per = cfg.n_genes, cfg.n_families, cfg.perts_per_family
    P, n_cyc = F * n_per, len(CYCLING_GENES)
    stress = np.zeros(G)
    stress[:n_cyc] = -cfg.stress_loading
    stress[n_cyc : n_cyc + len(P53_GENES)] = cfg.stress_loading
    programs = np.zeros((F, G))
    for f in range(F):
        genes = rng.choice(G, cfg.family_genes, replace=False)
        programs[f, genes] = rng.normal(0, cfg.family_sd, cfg.family_genes)
    family = np.repeat(np.arange(F), n_per)
    effect = rng.lognormal(cfg.effect_logmean, cfg.effect_logsd, P)
    idio = np.zeros((P, G))
    for p in range(P):
        genes = rng.choice(G, cfg.idio_genes, replace=False)
        idio[p, genes] = rng.normal(0, cfg.idio_sd, cfg.idio_genes)
    targets = len(CYCLING_GENES) + len(P53_GENES) + rng.permutation(G - 2 * n_cyc)[:P]
    scale = rng.uniform(*cfg.family_scale, (cfg.n_lines, F))
    used = np.tile(family, (cfg.n_lines, 1))
    rewired = rng.random(used.shape) < cfg.rewire_fraction
    used[rewired] = (used[rewired] + rng.integers(1, F, rewired.sum())) % F  # another family
    delta = np.zeros((cfg.n_lines, P, G))
    for c in range(cfg.n_lines):
        s = scale[c, used[c]][:, None]
        delta[c] = effect[:, None] * (s * programs[used[c]] + idio)
        delta[c] += cfg.stress_gains[c] * np.minimum(effect, 2.0)[:, None] * cfg.eta * stress
        delta[c, np.arange(P), targets] += cfg.knockdown
    return Planted(stress, programs, delta, family, used, targets)


def simulate(cfg: SimConfig, seed: int) -> tuple[ad.AnnData, Planted]:
    """Cells of every line (controls and perturbed), with obs ``pert_name``,
    ``celltype_name``, ``family``, ``rewired`` ("True" where the line's effect uses another
    family's program) and var ``program`` (cycling / p53 / none)."""
    rng = np.random.default_rng(seed)
    planted = plant(cfg, rng)
    names = gene_names(cfg.n_genes)
    pert_names = [f"KD_{names[i]}" for i in planted.targets]
    rewired = planted.used_family != planted.family[None, :]
    adata = cells(cfg, planted.delta, pert_names, planted.family, rewired, rng)
    n_cyc = len(CYCLING_GENES)
    G = cfg.n_genes
    adata.var["program"] = (
        ["cycling"] * n_cyc + ["p53"] * len(P53_GENES) + ["none"] * (G - 2 * n_cyc)
    )
    adata.uns["simulator"] = {**_jsonable(cfg), "seed": seed}
    adata.varm["stress"] = planted.stress[:, None]
    return adata, planted


def cells(
    cfg: ExpressionConfig, delta: np.ndarray, pert_names, family: np.ndarray, rewired, rng
) -> ad.AnnData:
    """The cells of every line from planted pseudobulk responses ``delta`` (lines, P, G):
    ``μ_g + line offset + cycling phase + Δ + noise``, clipped at 0 (``rewired`` (lines, P)
    is saved per cell). Shared by the generators (this module's and
    :mod:`repro.st_reliability.coverage`)."""
    G, names = cfg.n_genes, gene_names(cfg.n_genes)
    mu = cfg.baseline + rng.normal(cfg.mu_mean, cfg.mu_sd, G)
    blocks, obs = [], []
    for c in range(delta.shape[0]):
        offset = np.where(rng.random(G) < cfg.offset_fraction, rng.normal(0, cfg.offset_sd, G), 0)
        base = mu + offset
        sizes = [cfg.n_control] + [cfg.cells_per_pert] * len(pert_names)
        means = np.vstack([np.zeros(G), delta[c]])
        for k, n in enumerate(sizes):
            x = base + means[k] + rng.normal(0, cfg.noise_sd, (n, G))
            x[:, : len(CYCLING_GENES)] += rng.normal(0, cfg.cycling_sd, (n, 1))  # phase
            blocks.append(np.maximum(x, 0.0).astype(np.float32))
            pert = CONTROL if k == 0 else pert_names[k - 1]
            fam = "control" if k == 0 else f"family{family[k - 1]}"
            # rewired: this line's effect uses another family's program (saved for analysis)
            flag = k > 0 and bool(rewired[c, k - 1])
            obs.append(
                pd.DataFrame(
                    {
                        "pert_name": pert,
                        "celltype_name": f"line{c}",
                        "family": fam,
                        "rewired": str(flag),
                    },
                    index=range(n),
                )
            )
    obs = pd.concat(obs, ignore_index=True)
    obs.index = [f"cell{i}" for i in range(len(obs))]
    for col in obs:
        obs[col] = obs[col].astype("category")
    return ad.AnnData(np.vstack(blocks), obs=obs, var=pd.DataFrame(index=names))


def _jsonable(cfg: SimConfig) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()}


def leading_cosines(adata: ad.AnnData, program: np.ndarray) -> dict[str, float]:
    """Per line, |cos(PC1 of the true Δ across perturbations, program)| (Δ from the data)."""
    deltas = true_deltas(adata)
    unit = program / np.linalg.norm(program)
    out = {}
    for line, d in deltas.groupby(level="celltype_name"):
        x = d.to_numpy() - d.to_numpy().mean(0)
        out[str(line)] = float(abs(np.linalg.svd(x, full_matrices=False)[2][0] @ unit))
    return out


def simulate_setting(
    cfg: SimConfig, seed: int, *, threshold: float, eta_step: float, eta_max: float
) -> tuple[ad.AnnData, Planted, dict]:
    """Simulate; with a shared program (η > 0) raise η by ``eta_step`` until the generator
    self-check |cos(PC1 of true Δ, stress)| ≥ threshold holds in every line (brief §6).
    The record says which η was used, each line's cosine, and whether the check passed;
    in the negative control (η = 0) the check is computed against the same program."""
    tried = []
    while True:
        adata, planted = simulate(cfg, seed)
        program = np.where(
            adata.var["program"] == "cycling",
            -1.0,
            np.where(adata.var["program"] == "p53", 1.0, 0.0),
        )
        cosines = leading_cosines(adata, program)
        passed = min(cosines.values()) >= threshold
        tried.append({"eta": cfg.eta, "cosines": cosines, "passed": passed})
        if passed or cfg.eta == 0 or cfg.eta + eta_step > eta_max + 1e-9:
            break
        cfg = dataclasses.replace(cfg, eta=round(cfg.eta + eta_step, 6))
    record = {
        "eta_used": cfg.eta,
        "threshold": threshold,
        "cosines": cosines,
        "passed": passed,
        "tried": tried,
        "clipped_fraction": float((adata.X == 0).mean()),
    }
    return adata, planted, record
