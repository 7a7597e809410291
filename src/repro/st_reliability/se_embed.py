"""Full scale: SE-600M embeddings of a prepared CRISPRi data set's cells (brief §6/§7).

Each line's raw file is read again with all its genes (SE embeds the whole transcriptome,
not the 2000 shared HVGs of cells.h5ad), the cells that ``prepare`` kept are embedded
with ``repro.st_reliability.se_encoder`` and written in cells.h5ad's row order; the record
holds a digest of those cell ids (``cells_sha256``), which the ST models' lookup
(``se_space.CellEmbeddings``) checks against the cell table they read.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging

import numpy as np

from repro.common.io import write_json
from repro.st_reliability.fullscale import LineSource, load_line
from repro.st_reliability.se_encoder import SEEmbedder, SEFiles
from repro.st_reliability.se_space import cell_ids_digest

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SEEmbedConfig:
    batch_size: int | None = None  # None: the release config's model.batch_size
    seed: int = 0  # the sentence sampler's seed (it draws unexpressed genes at random)
    min_cells: int = 20  # as prepare: load_line drops the same rare perturbations


def embed_cells(
    cells_path: str,
    sources: dict[str, LineSource],
    files: SEFiles,
    cfg: SEEmbedConfig,
    *,
    embeddings_out: str,
    record_out: str,
    device: str = "auto",
) -> dict:
    import anndata as ad

    cells = ad.read_h5ad(cells_path, backed="r")
    order = cells.obs_names
    lines = cells.obs["celltype_name"].astype(str).to_numpy()
    cells.file.close()
    embedder = SEEmbedder(files, device=device, batch_size=cfg.batch_size)
    out, genes = None, {}
    for name, source in sources.items():
        raw = load_line(name, source, cfg.min_cells)
        rows = order[lines == name]
        missing = rows.difference(raw.obs_names)
        if len(missing):
            raise ValueError(f"{name}: {len(missing)} prepared cells not in {source.path}")
        emb = embedder.embed(raw[rows], seed=cfg.seed)
        if out is None:
            out = np.zeros((len(order), emb.shape[1]), dtype=np.float32)
        out[lines == name] = emb
        genes[name] = {"genes": raw.n_vars, "in_protein_table": len(embedder.align(raw[:1]).var)}
        log.info("%s: %d cells embedded (%d dims)", name, len(rows), emb.shape[1])
    np.save(embeddings_out, out)
    record = {"n_cells": len(order), "cells_sha256": cell_ids_digest(order.astype(str)),
              "dim": int(out.shape[1]), "lines": genes,
              "files": dataclasses.asdict(files), "config": dataclasses.asdict(cfg)}  # fmt: skip
    write_json(record_out, record)
    return record


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="SE-600M embeddings of one raw line (h5ad).")
    p.add_argument("input", help="raw counts h5ad")
    p.add_argument("output", help=".npy of cells × embedding")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--protein-embeddings", required=True)
    p.add_argument("--config", default=None)
    p.add_argument("--gene-column", default=None, help="var column with symbols (default: index)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    import anndata as ad

    files = SEFiles(
        checkpoint=a.checkpoint, protein_embeddings=a.protein_embeddings, config=a.config
    )
    embedder = SEEmbedder(files, device=a.device)
    emb = embedder.embed(ad.read_h5ad(a.input), gene_column=a.gene_column, seed=a.seed)
    np.save(a.output, emb)


if __name__ == "__main__":
    main()
