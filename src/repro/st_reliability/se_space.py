"""The ST model in SE-600M space (encoder ``se600m``): per-cell embeddings and a gene decoder.

The other encoders (``encoders.py``) map expression rows; SE-600M embeds cells from their
whole transcriptome, once, in the ``se_embed`` step (``se600m.npy``, cells.h5ad's row order,
with a digest of the cell ids in its record). Here the embeddings are looked up per cell by
id (:class:`CellEmbeddings`), and predictions in SE space go back to the HVGs through a
decoder fitted on the training cells (:class:`SEDecoder`).

The decoder is State's own: ``state.tx.models.base.LatentToGeneDecoder``, the module ST-SE
trains next to the transition model when ``output_space`` is ``gene`` (hidden layers Linear →
LayerNorm → GELU → Dropout, State's default ``decoder_hidden_dims`` [1024, 1024, 512] and
``decoder_dropout`` 0.1, a ReLU output for non-negative log1p genes). What differs: State
adds the decoder's distributional loss on the transition model's *predictions* to the ST
loss (one joint objective, detached only with ``detach_decoder``); here it is fitted alone,
with MSE, on the training cells' (embedding, log1p HVG) pairs, as the AE's decoder is.
Why: the transition model then trains on the same objective in every encoder's space (the
energy distance alone), so the audit compares encoders and not decoder losses, and the
decoder is a plain regression SE → genes (the arc-state docstring itself calls it "trained
separately from the main perturbation model").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import torch
from torch import nn

from repro.st_reliability.encoders import fit_mse

KIND = "se600m"


def cell_ids_digest(ids) -> str:
    """sha256 of the cell ids in order (one per line): what an embedding file was made for."""
    digest = hashlib.sha256()
    for name in ids:
        digest.update(f"{name}\n".encode())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class CellEmbeddings:
    """SE embeddings of a cell table's cells, looked up by cell id."""

    ids: object  # pandas Index of the cell table's obs_names, the embeddings' row order
    values: np.ndarray

    @classmethod
    def read(cls, embeddings: str, record: str, cell_ids) -> CellEmbeddings:
        """``se600m.npy`` and its record, checked against the cell table's ids in order: an
        embedding file made for another table (other cells, another order) raises."""
        import pandas as pd

        ids = pd.Index(cell_ids).astype(str)
        if ids.has_duplicates:
            raise ValueError("cell ids are not unique: embeddings cannot be looked up by id")
        values = np.load(embeddings, mmap_mode="r")
        with open(record) as f:
            written = json.load(f)
        if values.ndim != 2 or len(values) != len(ids) or written.get("n_cells") != len(ids):
            raise ValueError(
                f"{embeddings}: {values.shape} embeddings (record: {written.get('n_cells')} "
                f"cells) for a cell table of {len(ids)} cells"
            )
        if written.get("cells_sha256") != cell_ids_digest(ids):
            raise ValueError(
                f"{embeddings}: written for other cells or another order than this cell table "
                f"(cells_sha256 in {record} differs); rerun the se_embed step"
            )
        return cls(ids, values)

    @property
    def dim(self) -> int:
        return int(self.values.shape[1])

    def lookup(self, cell_ids) -> np.ndarray:
        """The embeddings of ``cell_ids``, in that order (float32)."""
        pos = self.ids.get_indexer([str(c) for c in cell_ids])
        if (pos < 0).any():
            missing = [c for c, p in zip(cell_ids, pos, strict=True) if p < 0][:5]
            raise KeyError(f"{int((pos < 0).sum())} cells have no SE embedding, e.g. {missing}")
        return np.asarray(self.values[pos], dtype=np.float32)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SEDecoderConfig:
    hidden: tuple[int, ...] = (1024, 1024, 512)  # State's decoder_hidden_dims default
    dropout: float = 0.1  # State's decoder_dropout default
    steps: int = 600
    batch_size: int = 256
    lr: float = 1e-3

    @classmethod
    def from_dict(cls, values: dict) -> SEDecoderConfig:
        values = dict(values)
        if "hidden" in values:
            values["hidden"] = tuple(int(h) for h in values["hidden"])
        return cls(**values)


class SEDecoder:
    """Encoder ``se600m``: cells come as SE embeddings; ``decode`` is State's gene decoder."""

    kind = KIND
    gene_space = False

    def __init__(self, dim: int, n_genes: int, cfg: SEDecoderConfig):
        from state.tx.models.base import LatentToGeneDecoder

        self.cfg, self.dim, self.n_genes = cfg, dim, n_genes
        self.decoder = LatentToGeneDecoder(
            latent_dim=dim, gene_dim=n_genes, hidden_dims=list(cfg.hidden), dropout=cfg.dropout
        )

    @classmethod
    def fit(
        cls,
        z: np.ndarray,
        x: np.ndarray,
        cfg: SEDecoderConfig,
        generator: torch.Generator,
        device: str | torch.device = "cpu",
    ) -> SEDecoder:
        """MSE regression of the cells' log1p genes ``x`` on their embeddings ``z``, on
        ``device`` (full scale: 2058 → 1024 → 1024 → 512 → 2000, 20k steps of 1024 cells); the
        rows are drawn on the CPU from ``generator``; the fitted decoder is returned on CPU."""
        z = torch.as_tensor(np.asarray(z), dtype=torch.float32).to(device)
        x = torch.as_tensor(np.asarray(x), dtype=torch.float32).to(device)
        if len(z) != len(x):
            raise ValueError(f"{len(z)} embeddings for {len(x)} cells")
        dec = cls(z.shape[1], x.shape[1], cfg)
        with torch.no_grad():  # start from the mean cell (ours, not State's: see _output)
            dec._output().bias.copy_(x.mean(0))
        dec.decoder.to(device)
        dec.decoder.train()
        params = list(dec.decoder.parameters())
        dec.final_loss = fit_mse(dec.decoder, params, z, x, cfg, generator)
        dec.decoder.cpu()
        dec._freeze()
        return dec

    def _output(self) -> nn.Linear:
        """The last Linear, before State's output ReLU. Its bias starts at the training cells'
        mean log1p expression: with State's default init many genes start below zero for
        every cell, where the ReLU passes no gradient, so they would stay at 0 (on the test
        data, MSE after 300 steps: 4.3 from State's init, against 0.40 for the mean cell)."""
        return [m for m in self.decoder.decoder if isinstance(m, nn.Linear)][-1]

    def _freeze(self) -> None:
        self.decoder.eval()  # no dropout when decoding predictions
        for p in self.decoder.parameters():
            p.requires_grad_(False)

    def encode(self, x):
        raise TypeError("se600m embeds cells, not expression rows: use encoders.encode_cells")

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.decoder.to(z.device)(z)

    def state(self) -> dict:
        cfg = {**dataclasses.asdict(self.cfg), "hidden": list(self.cfg.hidden)}
        return {
            "kind": self.kind,
            "config": cfg,
            "dim": self.dim,
            "n_genes": self.n_genes,
            "decoder": self.decoder.state_dict(),
        }

    @classmethod
    def load(cls, state: dict) -> SEDecoder:
        cfg = SEDecoderConfig.from_dict(state["config"])
        dec = cls(int(state["dim"]), int(state["n_genes"]), cfg)
        dec.decoder.load_state_dict(state["decoder"])
        dec._freeze()
        return dec
