"""ST reliability: memory of the evaluation's reads of the cell table, whole table against one
line at a time (repro.st_reliability.lines); prints peaks and their ratio, asserts nothing.

A random table of ``--lines`` lines × ``--cells`` cells × ``--genes`` genes (float32, 5 %
controls, 100 perturbations per line) is written as .h5ad. Measured with tracemalloc (numpy
reports its buffers to it), peak bytes allocated while reading what the evaluation reads:
- whole: ``read_cells``, ``true_deltas``, ``X.max()``, the control subset and, per line, the
  real cells of 30 % of the perturbations by boolean masks (the evaluation before);
- lines: ``open_cells``, ``scan`` and ``line_cells`` per line (the evaluation now).

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/st_reliability_lines.py [--cells 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import tracemalloc
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd

from repro.st_reliability.data import CONTROL, read_cells, true_deltas
from repro.st_reliability.lines import line_cells, open_cells, scan


def make_table(path: Path, n_lines: int, n_cells: int, n_genes: int) -> None:
    rng = np.random.default_rng(0)
    perts = np.array([CONTROL] + [f"p{k}" for k in range(100)])
    weights = np.r_[0.05, np.full(100, 0.95 / 100)]
    blocks, obs = [], []
    for c in range(n_lines):
        blocks.append(rng.gamma(0.5, 1.0, (n_cells, n_genes)).astype(np.float32))
        names = rng.choice(perts, n_cells, p=weights)
        obs.append(pd.DataFrame({"pert_name": names, "celltype_name": f"line{c}"}))
    obs = pd.concat(obs, ignore_index=True)
    obs["family"] = "f"
    obs.index = [f"cell{i}" for i in range(len(obs))]
    ad.AnnData(np.vstack(blocks), obs=obs.astype("category")).write_h5ad(path)


def held_out(obs: pd.DataFrame, line: str) -> list[str]:
    names = sorted(set(obs.loc[obs["celltype_name"] == line, "pert_name"].astype(str)))
    return [CONTROL, *[p for p in names if p != CONTROL][:30]]


def whole(path: Path) -> None:
    adata = read_cells(path)
    true_deltas(adata), float(adata.X.max())
    controls = adata[(adata.obs["pert_name"] == CONTROL).to_numpy()].X  # noqa: F841
    for line in sorted(adata.obs["celltype_name"].unique()):
        in_line = (adata.obs["celltype_name"] == line).to_numpy()
        real = {  # noqa: F841
            p: adata.X[in_line & (adata.obs["pert_name"] == p).to_numpy()]
            for p in held_out(adata.obs, line)
        }


def by_line(path: Path) -> None:
    with open_cells(path) as adata:
        table = scan(adata)  # noqa: F841
        for line in sorted(adata.obs["celltype_name"].unique()):
            real = line_cells(adata, line, held_out(adata.obs, line))  # noqa: F841


def peak_mb(step, path: Path) -> float:
    tracemalloc.start()
    step(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=4)
    p.add_argument("--cells", type=int, default=20000, help="per line")
    p.add_argument("--genes", type=int, default=1000)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cells.h5ad"
        make_table(path, a.lines, a.cells, a.genes)
        line_mb = a.cells * a.genes * 4 / 2**20
        print(f"{a.lines} lines × {a.cells} cells × {a.genes} genes: {line_mb:.0f} MB per line")
        old, new = peak_mb(whole, path), peak_mb(by_line, path)
        print(f"peak allocated, whole table: {old:.0f} MB ({old / line_mb:.2f} lines)")
        print(f"peak allocated, by line:     {new:.0f} MB ({new / line_mb:.2f} lines)")
        print(f"ratio whole / by line: {old / new:.2f}")


if __name__ == "__main__":
    main()
