"""State's own transition model (arc-state's ``StateTransitionPerturbationModel``), tiny.

The llama backbone with bidirectional attention and no positions (State's ``state`` and
``state_sm`` configs) is used; State's GPT-2 backbone (``pertsets``) does not build under
transformers 5.x (``'GPT2Attention' object has no attribute 'bias'``).

Self-only attention (the no-cross-cell null) is an additive mask that leaves each cell
only its own key. State's ``mask_attn`` flag is not used for it: with transformers 5.24 it
passes a boolean identity mask that SDPA reads as a keep-mask but eager attention adds as
a +1 bias on the diagonal, so the same flag means two different models (checked in
tests/st_reliability/test_model_attention.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import warnings
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from state.tx.models.state_transition import StateTransitionPerturbationModel


def state_model_class() -> type[StateTransitionPerturbationModel]:
    """arc-state's class, imported on first use: the import pulls lightning and costs ≈ 5 s
    of CPU, which the steps that build no model (prepare, summarize, claims) should not pay;
    its import-time chatter is not the rule's business."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from state.tx.models.state_transition import StateTransitionPerturbationModel

    return StateTransitionPerturbationModel


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelConfig:
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    intermediate: int = 128
    cell_set_len: int = 32
    encoder_layers: int = 2  # State's basal and perturbation MLPs
    decoder_layers: int = 2  # State's output MLP
    dropout: float = 0.0
    blur: float = 0.05  # energy-distance loss, State's default


def build_model(
    cfg: ModelConfig, *, input_dim: int, pert_dim: int, gene_space: bool
) -> StateTransitionPerturbationModel:
    """The arc-state class at tiny size. ``gene_space``: inputs/outputs are log1p genes (the
    HVG encoder, State's ReLU output); otherwise a latent (PCA/AE) that is decoded outside.
    """
    backbone = dict(
        bidirectional_attention=True,
        max_position_embeddings=cfg.cell_set_len,
        hidden_size=cfg.hidden,
        intermediate_size=cfg.intermediate,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.heads,
        head_dim=cfg.hidden // cfg.heads,
        use_cache=False,
        attention_dropout=0.0,
        vocab_size=4,  # token ids are never used: inputs are embeddings
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
    )
    with contextlib.redirect_stdout(io.StringIO()):  # the constructor prints the model
        model = state_model_class()(
            input_dim=input_dim,
            hidden_dim=cfg.hidden,
            output_dim=input_dim,
            pert_dim=pert_dim,
            gene_dim=input_dim,
            hvg_dim=input_dim,
            transformer_backbone_key="llama",
            transformer_backbone_kwargs=backbone,
            cell_set_len=cfg.cell_set_len,
            n_encoder_layers=cfg.encoder_layers,
            n_decoder_layers=cfg.decoder_layers,
            dropout=cfg.dropout,
            blur=cfg.blur,
            loss="energy",
            distributional_loss="energy",
            predict_residual=True,
            embed_key="X_hvg" if gene_space else "X_latent",
            output_space="gene" if gene_space else "embedding",
            gene_decoder_bool=False,
        )
    if not gene_space:
        # Without a gene decoder State ReLUs its output, which would cut signed PCA/AE
        # coordinates; these latents are decoded to genes by the encoder instead.
        model.relu = nn.Identity()
    return model


def self_only_mask(n_cells: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Additive (1, 1, S, S) mask: 0 on the diagonal, the dtype's minimum elsewhere."""
    mask = torch.full((n_cells, n_cells), torch.finfo(dtype).min, dtype=dtype)
    return mask.fill_diagonal_(0.0).view(1, 1, n_cells, n_cells)


@contextlib.contextmanager
def self_only_attention(model: StateTransitionPerturbationModel):
    """Within the block every cell attends only to itself (eager and SDPA alike)."""

    def inject(_module, args, kwargs):
        embeds = kwargs["inputs_embeds"]
        kwargs["attention_mask"] = self_only_mask(embeds.shape[1], embeds.dtype).to(embeds.device)
        return args, kwargs

    handle = model.transformer_backbone.register_forward_pre_hook(inject, with_kwargs=True)
    try:
        yield model
    finally:
        handle.remove()


def set_eager(model: StateTransitionPerturbationModel, eager: bool = True) -> None:
    """Eager attention returns the attention maps; SDPA (the default) returns none."""
    model.transformer_backbone.config._attn_implementation = "eager" if eager else "sdpa"
