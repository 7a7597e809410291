"""The cell encoders the ST model reads (brief §6): HVG identity, PCA, an autoencoder, and
SE-600M (``se600m``: per-cell embeddings with State's gene decoder, in ``se_space.py``).

Each maps log1p genes to the model's input space and decodes the model's output back to
genes, differentiably (the gene map of the leading direction runs through the decoder).
``state()`` returns tensors and plain values only, so checkpoints load with
``weights_only=True``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn


class Identity:
    kind = "hvg"
    gene_space = True

    def __init__(self, n_genes: int):
        self.dim = n_genes

    def encode(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float32)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z

    def state(self) -> dict:
        return {"kind": self.kind, "n_genes": self.dim}


class PCAEncoder:
    """PCA on the training cells (via SVD of the centred matrix); decodes by inverse PCA."""

    kind = "pca"
    gene_space = False

    def __init__(self, mean: torch.Tensor, components: torch.Tensor):
        self.mean, self.components = mean.float(), components.float()
        self.dim = components.shape[0]

    @classmethod
    def fit(cls, x: np.ndarray, dim: int) -> PCAEncoder:
        x = torch.as_tensor(np.asarray(x), dtype=torch.float64)
        mean = x.mean(0)
        _, _, vt = torch.linalg.svd(x - mean, full_matrices=False)
        return cls(mean, vt[:dim])

    def encode(self, x: np.ndarray) -> np.ndarray:
        z = (torch.as_tensor(np.asarray(x), dtype=torch.float32) - self.mean) @ self.components.T
        return z.numpy()

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z @ self.components.to(z) + self.mean.to(z)

    def state(self) -> dict:
        return {"kind": self.kind, "mean": self.mean, "components": self.components}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AEConfig:
    dim: int = 32
    hidden: int = 64
    steps: int = 600
    batch_size: int = 256
    lr: float = 1e-3


def fit_mse(forward, params, inputs, targets, cfg, generator: torch.Generator) -> float:
    """Adam on the MSE of ``forward(inputs[rows])`` against ``targets[rows]``, ``cfg.steps``
    minibatches of ``cfg.batch_size`` rows drawn on the CPU from ``generator`` (the AE's and
    the SE decoder's fit); returns the last loss."""
    opt = torch.optim.Adam(params, lr=cfg.lr)
    for _ in range(cfg.steps):
        rows = torch.randint(len(inputs), (cfg.batch_size,), generator=generator)
        rows = rows.to(inputs.device)
        loss = nn.functional.mse_loss(forward(inputs[rows]), targets[rows])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


class AutoEncoder:
    """An MLP autoencoder (genes → hidden → k → hidden → genes), MSE-trained on cells."""

    kind = "ae"
    gene_space = False

    def __init__(self, n_genes: int, cfg: AEConfig):
        self.cfg, self.dim = cfg, cfg.dim
        self.encoder = nn.Sequential(
            nn.Linear(n_genes, cfg.hidden), nn.GELU(), nn.Linear(cfg.hidden, cfg.dim)
        )
        self.decoder = nn.Sequential(
            nn.Linear(cfg.dim, cfg.hidden), nn.GELU(), nn.Linear(cfg.hidden, n_genes)
        )

    @classmethod
    def fit(cls, x: np.ndarray, cfg: AEConfig, generator: torch.Generator) -> AutoEncoder:
        ae = cls(x.shape[1], cfg)
        data = torch.as_tensor(np.asarray(x), dtype=torch.float32)
        params = [*ae.encoder.parameters(), *ae.decoder.parameters()]
        forward = lambda rows: ae.decoder(ae.encoder(rows))  # noqa: E731
        ae.final_loss = fit_mse(forward, params, data, data, cfg, generator)
        for p in params:
            p.requires_grad_(False)
        return ae

    def encode(self, x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.encoder(torch.as_tensor(np.asarray(x), dtype=torch.float32)).numpy()

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.decoder.to(z.device)(z)

    def state(self) -> dict:
        return {
            "kind": self.kind,
            "config": dataclasses.asdict(self.cfg),
            "encoder": self.encoder.state_dict(),
            "decoder": self.decoder.state_dict(),
        }


def fit_encoder(kind: str, x: np.ndarray, *, dim: int, ae: AEConfig, seed: int):
    if kind == "hvg":
        return Identity(x.shape[1])
    if kind == "pca":
        return PCAEncoder.fit(x, dim)
    if kind == "ae":
        generator = torch.Generator().manual_seed(seed)
        return AutoEncoder.fit(x, dataclasses.replace(ae, dim=dim), generator)
    raise ValueError(f"unknown encoder {kind!r}; choose from hvg, pca, ae")


def encode_cells(encoder, adata, embeddings=None) -> np.ndarray:
    """The model's input for the cells of ``adata``: their expression rows encoded, or for
    se600m their SE embeddings looked up by cell id (``se_space.CellEmbeddings``)."""
    if encoder.kind != "se600m":
        return encoder.encode(adata.X)
    if embeddings is None:
        raise ValueError("encoder se600m needs the data set's SE-600M embeddings")
    return embeddings.lookup(adata.obs_names)


def load_encoder(state: dict):
    if state["kind"] == "se600m":
        from repro.st_reliability.se_space import SEDecoder

        return SEDecoder.load(state)
    if state["kind"] == "hvg":
        return Identity(int(state["n_genes"]))
    if state["kind"] == "pca":
        return PCAEncoder(state["mean"], state["components"])
    cfg = AEConfig(**state["config"])
    n_genes = state["decoder"]["2.weight"].shape[0]
    ae = AutoEncoder(n_genes, cfg)
    ae.encoder.load_state_dict(state["encoder"])
    ae.decoder.load_state_dict(state["decoder"])
    return ae
