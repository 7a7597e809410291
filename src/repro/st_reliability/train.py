"""Train one model variant: State's transition model, its own energy-distance loss.

A variant is an encoder (hvg / pca / ae / se600m) plus, for the nulls and the C4 designs, how it
departs from the audited model: self-only attention, shuffled perturbation labels, or a
modified training pool. The untrained null is the same initialisation, kept in the
checkpoint. The loop is plain torch around State's ``training_step`` (its loss and
forward). The optimiser follows arc-state 0.11.1: its ``configure_optimizers`` is plain
Adam without weight decay (the ``wd 5e-4`` of State's configs never reaches it), and its
Lightning trainer clips gradients at 10. What differs: the learning rate (1e-3 embedded,
for 500 steps of a tiny model; State's 1e-4 over 40k steps at full scale) and the loop
(plain torch around ``training_step`` instead of a Lightning ``Trainer``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import time
import warnings

import anndata as ad
import numpy as np
import torch

from repro.common.device import select_device
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.st_reliability.data import CONTROL, POOLS, read_cells, training_pairs
from repro.st_reliability.encoders import AEConfig, encode_cells, fit_encoder
from repro.st_reliability.model import ModelConfig, build_model, self_only_attention
from repro.st_reliability.sentences import CellIndex, training_batch

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Variant:
    encoder: str = "hvg"
    attention: str = "full"  # full | self_only
    labels: str = "true"  # true | shuffled
    pool: str = "full"  # one of POOLS (C4 designs)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainConfig:
    steps: int = 500
    batch_sets: int = 16
    lr: float = 1e-3
    weight_decay: float = 0.0  # State's Adam has none
    grad_clip: float = 10.0
    control_fraction: float = 0.1
    latent_dim: int = 32
    shrink_fraction: float = 0.5  # pool_shrunk drops this share of other families' pairs
    log_every: int = 100
    ae: AEConfig = AEConfig()


def train_variant(
    adata: ad.AnnData,
    variant: Variant,
    model_cfg: ModelConfig,
    cfg: TrainConfig,
    *,
    seed: int,
    device: str = "cpu",
    threads: int = 1,
    embeddings=None,
    se_decoder=None,
) -> dict:
    """Fit the encoder on training cells, train the model; return checkpoint and record.

    ``embeddings`` (``se_space.CellEmbeddings``) and ``se_decoder`` (its config) serve the
    se600m encoder only: the model reads the cells' SE embeddings, and State's gene decoder
    is fitted on the training pool's cells."""
    set_threads(threads)
    seed_everything(seed)
    dev = select_device(device)
    pairs, removed = training_pairs(adata, variant.pool, cfg.shrink_fraction, seed)
    keep = set(pairs)
    in_pool = [
        (c, p) in keep or p == CONTROL
        for c, p in zip(adata.obs["celltype_name"], adata.obs["pert_name"], strict=True)
    ]
    if variant.encoder == "se600m":
        encoder = _fit_se_decoder(adata, np.asarray(in_pool), embeddings, se_decoder, seed, dev)
    else:
        encoder = fit_encoder(
            variant.encoder, adata.X[np.asarray(in_pool)], dim=cfg.latent_dim, ae=cfg.ae, seed=seed
        )
    index = CellIndex.build(adata, encode_cells(encoder, adata, embeddings))
    torch.manual_seed(seed)  # the untrained null shares this initialisation
    model = build_model(
        model_cfg,
        input_dim=encoder.dim,
        pert_dim=len(index.vocabulary),
        gene_space=encoder.gene_space,
    ).to(dev)
    init = {k: v.detach().clone().cpu() for k, v in model.state_dict().items()}
    # foreach: one multi-tensor update instead of a Python loop over the parameters; the
    # same arithmetic, bit for bit (tests/st_reliability/test_train.py)
    opt = torch.optim.Adam(
        model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, foreach=True
    )
    generator = torch.Generator().manual_seed(seed + 1)
    attention = (
        self_only_attention(model) if variant.attention == "self_only" else contextlib.nullcontext()
    )
    losses, start = [], time.perf_counter()
    model.train()
    with attention, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*self.log.*")  # no Lightning Trainer here
        for step in range(cfg.steps):
            batch = training_batch(
                index,
                pairs,
                n_sets=cfg.batch_sets,
                set_len=model_cfg.cell_set_len,
                control_fraction=cfg.control_fraction,
                shuffle_labels=variant.labels == "shuffled",
                generator=generator,
            )
            loss = model.training_step({k: v.to(dev) for k, v in batch.items()}, step)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            losses.append(loss.item())
            if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
                recent = np.mean(losses[-cfg.log_every :])
                log.info(
                    "step %d/%d energy loss %.4f (%.1fs)",
                    step + 1,
                    cfg.steps,
                    recent,
                    time.perf_counter() - start,
                )
    checkpoint = {
        "model": {k: v.cpu() for k, v in model.state_dict().items()},
        "init": init,
        "encoder": encoder.state(),
        "vocabulary": index.vocabulary,
        "variant": dataclasses.asdict(variant),
        "model_config": dataclasses.asdict(model_cfg),
    }
    record = {
        "variant": dataclasses.asdict(variant),
        "seed": seed,
        "losses": losses,
        "training_pairs": len(pairs),
        "pairs_removed": removed,
    }
    return {"checkpoint": checkpoint, "record": record}


def _fit_se_decoder(adata, rows: np.ndarray, embeddings, cfg, seed: int, device):
    """State's gene decoder fitted on the pool's cells: their SE embeddings → log1p HVGs."""
    from repro.st_reliability.se_space import SEDecoder, SEDecoderConfig

    if embeddings is None:
        raise ValueError("encoder se600m needs the data set's SE-600M embeddings")
    z = embeddings.lookup(adata.obs_names[rows])
    generator = torch.Generator().manual_seed(seed)
    return SEDecoder.fit(z, adata.X[rows], cfg or SEDecoderConfig(), generator, device)


def run(
    cells: str,
    variant: Variant,
    model_cfg: ModelConfig,
    cfg: TrainConfig,
    *,
    seed: int,
    model_out: str,
    record_out: str,
    device: str = "auto",
    threads: int = 1,
    se_embeddings: str | None = None,
    se_record: str | None = None,
    se_decoder=None,
) -> None:
    """``se_embeddings``/``se_record``: the se_embed step's files (se600m variants only)."""
    adata = read_cells(cells)
    config, se = {"variant": variant, "model": model_cfg, "train": cfg}, {}
    if variant.encoder == "se600m":
        from repro.st_reliability.se_space import CellEmbeddings, SEDecoderConfig

        if se_embeddings is None or se_record is None:
            raise ValueError("encoder se600m needs se_embeddings and se_record (se_embed step)")
        se_decoder = se_decoder or SEDecoderConfig()
        embeddings = CellEmbeddings.read(se_embeddings, se_record, adata.obs_names)
        se = {"embeddings": embeddings, "se_decoder": se_decoder}
        config["se_decoder"] = se_decoder
    with RunRecorder(config=config, device=select_device(device), seed=seed) as run_:
        out = train_variant(
            adata, variant, model_cfg, cfg, seed=seed, device=device, threads=threads, **se
        )
    torch.save(out["checkpoint"], model_out)
    write_json(record_out, {**out["record"], "provenance": run_.provenance()})


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Train one ST model variant on a cell table.")
    p.add_argument("cells", help=".h5ad from the prepare step")
    p.add_argument("model_out")
    p.add_argument("record_out")
    p.add_argument("--encoder", default="hvg", choices=["hvg", "pca", "ae", "se600m"])
    p.add_argument("--attention", default="full", choices=["full", "self_only"])
    p.add_argument("--labels", default="true", choices=["true", "shuffled"])
    p.add_argument("--pool", default="full", choices=POOLS)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    p.add_argument("--se-embeddings", default=None, help="se600m: the se_embed step's .npy")
    p.add_argument("--se-record", default=None, help="se600m: the se_embed step's .json")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    variant = Variant(encoder=a.encoder, attention=a.attention, labels=a.labels, pool=a.pool)
    run(
        a.cells,
        variant,
        ModelConfig(),
        TrainConfig(steps=a.steps),
        seed=a.seed,
        model_out=a.model_out,
        record_out=a.record_out,
        device=a.device,
        se_embeddings=a.se_embeddings,
        se_record=a.se_record,
    )


if __name__ == "__main__":
    main()
