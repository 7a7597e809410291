"""The cell table every step shares: AnnData with the cell-eval columns, written as .h5ad.

obs: ``pert_name`` (controls are ``non-targeting``), ``celltype_name`` (the cell line),
``family`` (perturbation family, ``control`` for controls) and ``split`` (``control``,
``train``, ``fewshot`` = held out in this line but seen in others). X is log1p-scale
expression (non-negative: cell-eval rejects negatives).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd

from repro.common.io import RESULT_MODE

CONTROL = "non-targeting"
REQUIRED_OBS = ("pert_name", "celltype_name", "family")
HELD_OUT = ("fewshot", "novel")  # the two regimes of held-out (line, perturbation) pairs
SPLITS = ("control", "train", *HELD_OUT)
POOLS = ("full", "family_removed", "size_matched", "pool_shrunk")  # C4 training-pool designs


def write_h5ad(adata: ad.AnnData, path: str | os.PathLike) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".h5ad")
    os.close(fd)
    try:
        adata.write_h5ad(tmp)
        os.chmod(tmp, RESULT_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_cells(path: str | os.PathLike) -> ad.AnnData:
    """Read a cell table and check that it has what the steps need, naming the file."""
    adata = open_h5ad(path)
    x = adata.X if isinstance(adata.X, np.ndarray) else adata.X.toarray()
    check_values(x, path)
    return adata


def open_h5ad(path: str | os.PathLike, backed: str | None = None) -> ad.AnnData:
    """Read a cell table (X on disk with ``backed="r"``) and check its obs, naming the file."""
    try:
        adata = ad.read_h5ad(path, backed=backed)
    except (OSError, KeyError) as err:
        raise ValueError(f"{path}: not a readable .h5ad ({err}); delete it and rerun") from err
    missing = [c for c in REQUIRED_OBS if c not in adata.obs]
    if missing:
        raise ValueError(f"{path}: obs lacks {missing}; the steps need {list(REQUIRED_OBS)}")
    if (adata.obs["pert_name"] == CONTROL).sum() == 0:
        raise ValueError(f"{path}: no control cells (pert_name == {CONTROL!r})")
    return adata


def check_values(x: np.ndarray, path) -> None:
    if x.size and np.nanmin(x) < 0:
        raise ValueError(f"{path}: negative expression; X must be log1p-scale")


def assign_split(
    adata: ad.AnnData,
    *,
    holdout_fraction: float,
    c4_families: int,
    seed: int,
    novel_families: int = 0,
) -> dict:
    """Add obs ``split`` (few-shot, novel) and uns ``split`` (the C4 probe families and
    lines, and each line's novel families).

    Few-shot (brief §6): each line holds out a window of ``holdout_fraction`` of the
    perturbations; the windows rotate, so every perturbation stays seen in another line.
    Novelty regime (issue 24 §3): each line also holds out ``novel_families`` whole families
    (split ``novel``: no member in that line's training pool, so that program is absent from
    the line's training Δ; the members stay seen in the other lines), never the line's C4
    family, and a different family in each line where there are enough.
    C4: ``c4_families`` random families, each paired with one line (in turn); the C4 pool
    designs change that line's training pool around that family's held-out members.
    """
    rng = np.random.default_rng(seed)
    obs = adata.obs
    perts = obs.loc[obs["pert_name"] != CONTROL, ["pert_name", "family"]].drop_duplicates()
    lines = sorted(obs["celltype_name"].unique())
    families = sorted(perts["family"].unique())
    if c4_families > len(families):
        raise ValueError(f"c4_families={c4_families} but the data have {len(families)} families")
    chosen = [str(f) for f in rng.choice(families, c4_families, replace=False)]
    rest = rng.permutation(sorted(perts["pert_name"]))
    n, width = len(rest), int(round(holdout_fraction * len(rest)))
    held = [
        {rest[((c * n) // len(lines) + k) % n] for k in range(width)} for c in range(len(lines))
    ]
    if len(lines) > 1 and set.intersection(*held):
        raise ValueError(
            f"holdout_fraction={holdout_fraction}: some perturbations are held "
            "out in every line; few-shot needs each seen in another line"
        )
    split = np.full(len(obs), "train", dtype=object)
    split[(obs["pert_name"] == CONTROL).to_numpy()] = "control"
    for line, names in zip(lines, held, strict=True):
        mask = (obs["celltype_name"] == line) & obs["pert_name"].isin(names)
        split[mask.to_numpy()] = "fewshot"
    c4_lines = [str(lines[k % len(lines)]) for k in range(len(chosen))]
    novel = _novel_families(lines, families, chosen, c4_lines, novel_families)
    for line, names in novel.items():
        mask = (obs["celltype_name"] == line) & obs["family"].astype(str).isin(names)
        split[mask.to_numpy()] = "novel"
    # a perturbation held out in every line would not be few-shot: train it where it was few-shot
    trained = set(obs["pert_name"][split == "train"].astype(str))
    unseen = (split == "fewshot") & ~obs["pert_name"].astype(str).isin(trained).to_numpy()
    split[unseen] = "train"
    obs["split"] = pd.Categorical(split, categories=SPLITS)
    adata.uns["split"] = {
        "c4_families": chosen,
        "c4_lines": c4_lines,
        "novel_lines": [line for line, names in novel.items() for _ in names],
        "novel_families": [f for names in novel.values() for f in names],
    }
    return adata.uns["split"]


def _novel_families(lines, families, c4_families, c4_lines, n: int) -> dict[str, list[str]]:
    """line -> the families held out whole in that line, rotating over the families that
    are not C4 families (so the C4 designs keep their probes)."""
    if n == 0:
        return {}
    pool = [str(f) for f in families if str(f) not in c4_families] or [str(f) for f in families]
    if n > len(pool) - 1 and len(lines) > 1:
        raise ValueError(f"novel_families={n}: only {len(pool)} non-C4 families to rotate over")
    return {
        str(line): [pool[(c * n + k) % len(pool)] for k in range(n)] for c, line in enumerate(lines)
    }


def split_info(adata: ad.AnnData) -> dict[str, list[str]]:
    """uns ``split`` as plain lists (an .h5ad round trip turns lists into arrays)."""
    info = adata.uns.get("split", {})
    keys = ("c4_families", "c4_lines", "novel_families", "novel_lines")
    return {k: [str(v) for v in info.get(k, [])] for k in keys}


def c4_probes(pairs: pd.DataFrame, split: dict) -> pd.DataFrame:
    """The held-out pairs of each C4 family in its line: what the C4 designs are scored on."""
    keep = np.zeros(len(pairs), dtype=bool)
    for family, line in zip(split.get("c4_families", []), split.get("c4_lines", []), strict=True):
        keep |= (
            (pairs.index.get_level_values(0) == line)
            & (pairs["family"] == family)
            & (pairs["split"] == "fewshot")
        ).to_numpy()
    return pairs[keep]


def training_pairs(adata: ad.AnnData, pool: str, shrink_fraction: float, seed: int):
    """(line, perturbation) pairs the variant trains on, and how many its design removed.

    The C4 designs act on each C4 family's line (uns ``split``): family_removed drops the
    family's training pairs there (no same-family perturbation left in that line);
    size_matched drops as many of that line's other-family pairs (same pool size, family
    coverage kept); pool_shrunk drops ``shrink_fraction`` of them (family kept, pool shrunk).
    """
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; choose from {POOLS}")
    obs = adata.obs[adata.obs["split"] == "train"]
    table = obs[["celltype_name", "pert_name", "family"]].astype(str).drop_duplicates()
    split = split_info(adata)
    if pool != "full" and not split["c4_families"]:
        raise ValueError(f"pool {pool!r} needs C4 families (uns split.c4_families is empty)")
    rng = np.random.default_rng(seed)
    drop = np.zeros(len(table), dtype=bool)
    for family, line in zip(split["c4_families"], split["c4_lines"], strict=True):
        in_line = (table["celltype_name"] == line).to_numpy()
        mates = in_line & (table["family"] == family).to_numpy()
        others = np.flatnonzero(in_line & ~mates & ~drop)
        if pool == "family_removed":
            drop |= mates
        elif pool == "size_matched":
            drop[rng.choice(others, int(mates.sum()), replace=False)] = True
        elif pool == "pool_shrunk":
            drop[rng.choice(others, int(round(shrink_fraction * len(others))), replace=False)] = (
                True
            )
    kept = table[~drop]
    return list(zip(kept["celltype_name"], kept["pert_name"], strict=True)), int(drop.sum())


def pseudobulk(adata: ad.AnnData) -> pd.DataFrame:
    """Mean expression per (line, perturbation), controls included. A group's mean reads
    only its own rows, in table order, so one line's table gives that line's means bit for
    bit (``lines.scan`` relies on it; tested)."""
    x = adata.X if isinstance(adata.X, np.ndarray) else adata.X.toarray()
    frame = pd.DataFrame(x, columns=adata.var_names)
    keys = [adata.obs[c].astype(str).to_numpy() for c in ("celltype_name", "pert_name")]
    means = frame.groupby(keys).mean()
    means.index.names = ["celltype_name", "pert_name"]
    return means


def true_deltas(adata: ad.AnnData) -> pd.DataFrame:
    """Δ_{c,p} = mean(perturbed cells) − mean(real control cells of line c), per (line, p)."""
    return deltas_from_means(pseudobulk(adata))


def deltas_from_means(means: pd.DataFrame) -> pd.DataFrame:
    """True Δ from ``pseudobulk``'s means: each perturbation's minus its line's control."""
    lines = means.index.get_level_values("celltype_name")
    controls = means.xs(CONTROL, level="pert_name")
    deltas = means - controls.loc[lines].to_numpy()
    return deltas[means.index.get_level_values("pert_name") != CONTROL]


def pair_table(adata: ad.AnnData) -> pd.DataFrame:
    """One row per (line, perturbation): its family, split and (simulated data) whether the
    line's effect is rewired to another family's program."""
    obs = adata.obs[adata.obs["pert_name"] != CONTROL]
    cols = ["celltype_name", "pert_name", "family", "split"]
    cols += ["rewired"] if "rewired" in obs else []
    table = obs[cols].astype(str).drop_duplicates().set_index(cols[:2]).sort_index()
    return table
