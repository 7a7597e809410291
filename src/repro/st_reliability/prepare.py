"""Prepare a data set → cells.h5ad with the few-shot split and a gene-set table: the
simulator (embedded; with the generator self-check) or the four CRISPRi lines (full)."""

from __future__ import annotations

import argparse
import dataclasses
import logging

import numpy as np
import pandas as pd

from repro.common.io import write_json
from repro.st_reliability.data import assign_split, write_h5ad
from repro.st_reliability.fullscale import LineSource, Preprocessing, load_line, preprocess_lines
from repro.st_reliability.simulate import SimConfig, simulate_setting

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SplitConfig:
    holdout_fraction: float = 0.3
    c4_families: int = 4
    novel_families: int = 0  # whole families held out per line (the novelty regime)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SelfCheckConfig:
    threshold: float = 0.8
    eta_step: float = 0.25
    eta_max: float = 4.0


def program_table(adata, family_programs: np.ndarray) -> pd.DataFrame:
    """Gene sets as a (source, target, weight) network, decoupler's layout: the shared
    stress program (cycling −1, p53 +1) and each family's planted loadings."""
    genes = np.asarray(adata.var_names)
    program = adata.var["program"].astype(str).to_numpy()
    rows = [
        ("stress", g, -1.0 if p == "cycling" else 1.0)
        for g, p in zip(genes, program, strict=True)
        if p != "none"
    ]
    for f, loadings in enumerate(family_programs):
        rows += [(f"family{f}", genes[i], float(loadings[i])) for i in np.flatnonzero(loadings)]
    return pd.DataFrame(rows, columns=["source", "target", "weight"])


def prepare_synthetic(
    sim: SimConfig,
    split: SplitConfig,
    check: SelfCheckConfig,
    *,
    seed: int,
    cells_out: str,
    programs_out: str,
    record_out: str,
) -> dict:
    adata, planted, record = simulate_setting(
        sim, seed, threshold=check.threshold, eta_step=check.eta_step, eta_max=check.eta_max
    )
    log.info(
        "eta %.2f: self-check %s, |cos| per line %s",
        record["eta_used"],
        "passed" if record["passed"] else "failed",
        record["cosines"],
    )
    info = assign_split(adata, seed=seed, **dataclasses.asdict(split))
    write_h5ad(adata, cells_out)
    program_table(adata, planted.family_programs).to_csv(programs_out, sep="\t", index=False)
    counts = adata.obs.groupby(["celltype_name", "split"], observed=True)["pert_name"].nunique()
    record = {
        **record,
        "split": info,
        "pairs_per_split": {f"{c}|{s}": int(n) for (c, s), n in counts.items()},
        "n_cells": adata.n_obs,
        "n_genes": adata.n_vars,
    }
    write_json(record_out, record)
    return record


def prepare_coverage(cfg, *, seed: int, cells_out: str, programs_out: str, record_out: str) -> dict:
    """The coverage regime (:mod:`repro.st_reliability.coverage`): its split comes with the
    generator. The record holds what the generator alone can show, per line over the
    held-out pairs: Spearman of the similarity level t with the oracle NN distance of the
    true Δ (L2, cosine) and with ‖Δ‖ — the checks that need the model's quality are claims'
    checks (``papers.st_reliability.checks``)."""
    from repro.st_reliability.coverage import simulate_coverage

    adata, planted = simulate_coverage(cfg, seed)
    write_h5ad(adata, cells_out)
    rows = [
        (f"family{f}", adata.var_names[g], float(planted.programmes[f, g]))
        for f in range(len(planted.programmes))
        for g in np.flatnonzero(planted.programmes[f])
    ]
    pd.DataFrame(rows, columns=["source", "target", "weight"]).to_csv(
        programs_out, sep="\t", index=False
    )
    counts = adata.obs.groupby(["celltype_name", "split"], observed=True)["pert_name"].nunique()
    record = {
        "generator": coverage_record(adata),
        "pairs_per_split": {f"{c}|{s}": int(n) for (c, s), n in counts.items()},
        "n_cells": adata.n_obs,
        "n_genes": adata.n_vars,
        "clipped_fraction": float((adata.X == 0).mean()),
    }
    write_json(record_out, record)
    return record


def coverage_record(adata) -> dict:
    """Per line, over the held-out pairs: Spearman(t, oracle NN distance) for L2 and cosine
    and Spearman(t, ‖Δ‖), with Δ from the cells (true Δ against the line's controls)."""
    from repro.st_reliability.data import pair_table, true_deltas
    from repro.st_reliability.reliability import predicted_nn_distance, spearman

    deltas, pairs = true_deltas(adata), pair_table(adata)
    t = adata.obs.groupby(["celltype_name", "pert_name"], observed=True)["similarity"].first()
    out = {}
    for line, table in pairs.groupby(level=0):
        held = table.index[table["split"] == "fewshot"]
        train = deltas.loc[table.index[table["split"] == "train"]].to_numpy()
        x, level = deltas.loc[held].to_numpy(), t.loc[held].to_numpy()
        out[str(line)] = {
            "n_held_out": len(held),
            "spearman_t_oracle_l2": float(spearman(level, predicted_nn_distance(x, train, "l2"))),
            "spearman_t_oracle_cosine": float(
                spearman(level, predicted_nn_distance(x, train, "cosine"))
            ),
            "spearman_t_magnitude": float(spearman(level, np.linalg.norm(x, axis=1))),
        }
    return out


def prepare_full(
    sources: dict[str, LineSource],
    cfg: Preprocessing,
    split: SplitConfig,
    *,
    seed: int,
    families: str | None,
    cells_out: str,
    programs_out: str,
    record_out: str,
) -> dict:
    """The four lines → one renormalised cell table with the few-shot split; C4 needs a
    family table (perturbation → family) and is skipped without one."""
    table = pd.read_csv(families, sep="\t") if families else None
    fam = table.set_index("perturbation")["family"] if table is not None else None
    lines = {name: load_line(name, src, cfg.min_cells) for name, src in sources.items()}
    adata = preprocess_lines(lines, cfg, fam)
    c4 = split.c4_families if fam is not None else 0
    novel = split.novel_families if fam is not None else 0
    info = assign_split(
        adata,
        holdout_fraction=split.holdout_fraction,
        c4_families=c4,
        novel_families=novel,
        seed=seed,
    )
    write_h5ad(adata, cells_out)
    program = adata.var["program"].astype(str)
    rows = [(p, g, -1.0 if p == "cycling" else 1.0) for g, p in program.items() if p != "none"]
    pd.DataFrame(rows, columns=["source", "target", "weight"]).to_csv(
        programs_out, sep="\t", index=False
    )
    record = {
        "split": info,
        "n_cells": adata.n_obs,
        "n_genes": adata.n_vars,
        "lines": {n: int((adata.obs["celltype_name"] == n).sum()) for n in sources},
        "program_genes_found": int((program != "none").sum()),
    }
    write_json(record_out, record)
    return record


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Simulate one setting and write cells.h5ad.")
    p.add_argument("cells_out")
    p.add_argument("programs_out")
    p.add_argument("record_out")
    p.add_argument("--eta", type=float, default=1.5, help="shared-program strength; 0 = none")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    prepare_synthetic(
        SimConfig(eta=a.eta),
        SplitConfig(),
        SelfCheckConfig(),
        seed=a.seed,
        cells_out=a.cells_out,
        programs_out=a.programs_out,
        record_out=a.record_out,
    )


if __name__ == "__main__":
    main()
