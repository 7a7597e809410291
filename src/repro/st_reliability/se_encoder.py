"""SE-600M cell embeddings (brief §6's third encoder) through arc-state's own inference code.

The release (Hugging Face ``arcinstitute/SE-600M``) is a folder that arc-state's CLI
(``state emb transform --model-folder``) reads: a Lightning checkpoint (``*.ckpt``, with
its training config stored inside), ``protein_embeddings.pt`` (a dict gene symbol → protein
embedding; its key order is the model's global gene index) and optionally a config that
overrides the stored one. We load them with ``state.emb.inference.Inference.load_model``
and embed with arc-state's own sentence loader (``state.emb.data.create_dataloader``) and
``Inference.encode``: the same path as ``Inference.encode_adata``, minus its h5ad file I/O.

Two choices of ours, both checked in tests against ``encode_adata`` on a file:
- columns are put in the protein table's order first (genes absent from the table are
  dropped, as arc-state's loader drops them), because arc-state fills the CLS token's count
  with local gene 3's count, so its output otherwise depends on the input's column order;
- the sentence sampler draws random genes (ties, unexpressed fill), so ``embed`` seeds torch
  (in a forked RNG: the caller's stream is untouched) and repeats exactly.

arc-state is imported inside the functions: importing it costs seconds (lightning).
"""

from __future__ import annotations

import dataclasses
import logging
import os

import numpy as np

log = logging.getLogger(__name__)

# The files arc-state's CLI looks for in a model folder (``state emb transform``).
PROTEIN_TABLE = "protein_embeddings.pt"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SEFiles:
    checkpoint: str
    protein_embeddings: str
    config: str | None = None  # None: the config stored in the checkpoint (the CLI default)

    def check(self) -> None:
        named = {"checkpoint": self.checkpoint, "protein_embeddings": self.protein_embeddings}
        if self.config is not None:
            named["config"] = self.config
        for what, path in named.items():
            if not os.path.isfile(path):
                raise FileNotFoundError(f"SE-600M {what} not found: {path}")


def release_files(model_dir: str, checkpoint: str, config: str | None = None) -> SEFiles:
    """The release's layout: ``<dir>/<checkpoint>``, ``<dir>/protein_embeddings.pt``."""
    return SEFiles(
        checkpoint=os.path.join(model_dir, checkpoint),
        protein_embeddings=os.path.join(model_dir, PROTEIN_TABLE),
        config=None if config is None else os.path.join(model_dir, config),
    )


def _load_table(path: str) -> dict:
    import torch

    table = torch.load(path, map_location="cpu", weights_only=False)
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{path}: expected a non-empty dict gene -> embedding, got {type(table)}")
    return table


def _check_weights(model, checkpoint: str) -> None:
    """load_model loads with strict=False: a missing weight would stay random, silently."""
    import torch

    try:  # mmap: the 600M checkpoint is not read into memory a second time
        stored = torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    except RuntimeError:  # a legacy (non-zip) torch.save file cannot be mapped
        stored = torch.load(checkpoint, map_location="cpu", weights_only=False)
    stored = stored.get("state_dict", {})
    missing = [k for k in model.state_dict() if k not in stored and not k.startswith("pe_")]
    if missing:
        raise ValueError(f"{checkpoint} lacks {len(missing)} weights of the model: {missing[:5]}")


class SEEmbedder:
    """Loads a release once; ``embed`` maps cells × named genes to SE embeddings."""

    def __init__(self, files: SEFiles, *, device: str = "auto", batch_size: int | None = None):
        files.check()
        import torch
        from omegaconf import OmegaConf
        from state.emb.inference import Inference

        from repro.common.device import select_device

        self.table = _load_table(files.protein_embeddings)
        cfg = OmegaConf.load(files.config) if files.config else None
        self.inference = Inference(cfg=cfg, protein_embeds=self.table)
        self.inference.load_model(files.checkpoint)
        _check_weights(self.inference.model, files.checkpoint)
        token_dim = self.inference.model.encoder[0].in_features
        width = int(torch.as_tensor(next(iter(self.table.values()))).numel())
        if width != token_dim:
            raise ValueError(f"protein embeddings have {width} dims, the model reads {token_dim}")
        self.inference.model.to(select_device(device))
        self.cfg = self.inference._vci_conf
        if batch_size is not None:  # as encode_adata's override: a resolved copy
            self.cfg = OmegaConf.create(OmegaConf.to_container(self.cfg, resolve=True))
            self.cfg.model.batch_size = int(batch_size)
        self.index = {g: i for i, g in enumerate(self.table)}

    def align(self, adata, gene_column: str | None = None):
        """The input's genes in the protein table's order; genes outside it dropped."""
        import anndata as ad
        import pandas as pd

        names = pd.Index(adata.var_names if gene_column is None else adata.var[gene_column])
        names = names.astype(str)
        if names.has_duplicates:
            raise ValueError(f"duplicate gene names: {list(names[names.duplicated()][:5])}")
        known = np.array([g in self.index for g in names])
        if not known.any():
            raise ValueError(
                f"none of the {len(names)} genes is in the protein table "
                f"({len(self.index)} genes, e.g. {list(self.index)[:3]}); "
                f"input genes e.g. {list(names[:3])}: wrong gene_column?"
            )
        if not known.all():
            log.info(
                "%d of %d genes are not in the protein table: dropped", (~known).sum(), len(names)
            )
        cols = np.flatnonzero(known)
        cols = cols[np.argsort([self.index[g] for g in names[cols]], kind="stable")]
        x = adata.X[:, cols]
        x = x.astype(np.float32) if not hasattr(x, "tocsr") else x.tocsr().astype(np.float32)
        return ad.AnnData(X=x, var=pd.DataFrame(index=names[cols]))

    def embed(self, adata, *, gene_column: str | None = None, seed: int = 0) -> np.ndarray:
        """Cells × (output_dim + dataset dims), as ``Inference.encode_adata`` returns them."""
        import torch
        from state.emb.data import create_dataloader
        from state.emb.utils import get_precision_config

        cells = self.align(adata, gene_column)
        device = self.inference.model.device
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)  # the loader's worker seeds come from this stream
            loader = create_dataloader(
                self.cfg,
                adata=cells,
                adata_name="cells",
                shape_dict={"cells": cells.shape},
                shuffle=False,
                protein_embeds=self.table,
                precision=get_precision_config(device_type=device.type),
                gene_column=None,
            )
            parts = [np.concatenate(p, axis=-1) for p in self._encode(loader)]
        return np.concatenate(parts, axis=0).astype(np.float32)

    def _encode(self, loader):
        for emb, ds_emb in self.inference.encode(loader):
            yield (emb,) if ds_emb is None else (emb, ds_emb)
