"""Positive and negative controls of C1's within-model attention swap (issue 24).

C1 compares the PC1 variance fraction of the set-mean attention updates across a line's
perturbations with the model's own attention against the same weights and hidden states with
uniform attention. The set-mean update is Σ_j c_j v_j W_O with c the column means of the
map, so the swap sees attention only through perturbation-dependent column weights. These
controls ask whether the statistic, as :func:`repro.st_reliability.audit.audit_model`
computes it and with C1's criterion, can see such a dependence at all.

Both controls are arc-state's ``StateTransitionPerturbationModel`` at the audited
architecture (one-layer encoders, so the embeddings are linear), with weights written by
hand. Token = basal part + perturbation part in disjoint coordinates of the first half of
the hidden state (width H): coordinate 0 carries a basal feature s_j, 1 another basal
feature b_j, 2 … H/2 − 3 a random perturbation embedding e_p (fixed norm), the last two a
selector (σ_p, √(1 − σ_p²)), so that every token's norm, and so RMSNorm's scale, does not
depend on the perturbation. In every head and layer the key reads s_j, the value reads s_j
and ε·e_p, the output is written to the second half (the MLPs are zeroed, so every layer
sees the same structure). Needs H/2 ≥ 8 and a head no wider than H/2.

- **positive** (attention-dependent bottleneck planted): the query reads the selector,
  logit ∝ β σ_p s_j, so each perturbation selects cells with high or low s and the set-mean
  update moves along one direction with σ_p; under uniform attention only ε·e_p varies, in
  many directions. Own − uniform PC1 fraction must beat the minimum effect.
- **negative** (non-uniform attention without perturbation dependence): the query reads a
  basal feature (b_j) instead, so the maps are as sharp but the same for every
  perturbation: own and uniform attention give the same centred set-mean updates.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from repro.common.io import write_json
from repro.common.seeding import set_threads
from repro.st_reliability.audit import audit_model
from repro.st_reliability.audit_summary import spectra
from repro.st_reliability.model import ModelConfig, build_model
from repro.st_reliability.predict import Loaded
from repro.st_reliability.sentences import CellIndex
from repro.st_reliability.train import Variant

N_BASAL = 2  # basal features: s (read by keys and values) and b (the negative's query)
KINDS = ("positive", "negative")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SwapControlConfig:
    beta: float = 2.0  # query gain of the planted selection (the judged control)
    eps: float = 0.1  # perturbation content the values carry directly
    n_perts: int = 24
    n_lines: int = 2
    n_control: int = 128  # basal cells per line
    n_sentences: int = 4
    doses: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)  # positive-control gains, reported


def planted_model(arch: ModelConfig, cfg: SwapControlConfig, *, kind: str, beta: float, seed: int):
    """The State model with the controls' weights (see the module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    head_dim, half = arch.hidden // arch.heads, arch.hidden // 2
    if half < 8 or head_dim > half:
        raise ValueError(f"the controls need hidden ≥ 16 and head_dim ≤ hidden / 2, got {arch}")
    pert, selector = slice(N_BASAL, half - 2), half - 2
    arch = dataclasses.replace(arch, encoder_layers=1, dropout=0.0)
    g = torch.Generator().manual_seed(seed)
    model = build_model(arch, input_dim=N_BASAL, pert_dim=cfg.n_perts + 1, gene_space=True)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.basal_encoder[0].weight[:N_BASAL] = torch.eye(N_BASAL)
        n_emb = pert.stop - pert.start
        emb = torch.randn(n_emb, cfg.n_perts + 1, generator=g)
        model.pert_encoder[0].weight[pert] = emb / emb.norm(dim=0) * math.sqrt(n_emb)
        sigma = torch.rand(cfg.n_perts + 1, generator=g) * 2 - 1
        model.pert_encoder[0].weight[selector] = sigma
        model.pert_encoder[0].weight[selector + 1] = (1 - sigma**2).sqrt()
        query_from = selector if kind == "positive" else 1
        n_val = min(head_dim - 1, n_emb)
        for layer in model.transformer_backbone.layers:
            attn = layer.self_attn
            for h in range(arch.heads):
                row = h * head_dim
                attn.q_proj.weight[row, query_from] = beta
                attn.k_proj.weight[row, 0] = 1.0
                attn.v_proj.weight[row, 0] = 1.0
                values = attn.v_proj.weight[row + 1 : row + 1 + n_val]
                values[:, pert.start : pert.start + n_val] = cfg.eps * torch.eye(n_val)
                attn.o_proj.weight[half : half + head_dim, row : row + head_dim] = torch.eye(
                    head_dim
                )
            layer.input_layernorm.weight.fill_(1.0)
            layer.post_attention_layernorm.weight.fill_(1.0)
        model.transformer_backbone.norm.weight.fill_(1.0)
    return model.eval()


def control_audit(
    arch: ModelConfig, cfg: SwapControlConfig, *, kind: str, beta: float, seed: int
) -> dict:
    """:func:`audit_model` (without gene maps) of one planted model on random basal cells."""
    g = torch.Generator().manual_seed(10_000 + seed)
    lines = [f"line{i}" for i in range(cfg.n_lines)]
    perts = [f"p{i}" for i in range(cfg.n_perts)]
    cells = torch.randn(cfg.n_lines * cfg.n_control, N_BASAL, generator=g)
    rows = {
        (line, "non-targeting"): torch.arange(i * cfg.n_control, (i + 1) * cfg.n_control)
        for i, line in enumerate(lines)
    }
    index = CellIndex(cells, rows, ["non-targeting", *perts], lines)
    basal = {
        line: rows[(line, "non-targeting")][
            torch.randperm(cfg.n_control, generator=g)[: cfg.n_sentences * arch.cell_set_len]
        ].view(cfg.n_sentences, arch.cell_set_len)
        for line in lines
    }
    model = planted_model(arch, cfg, kind=kind, beta=beta, seed=seed)
    loaded = Loaded(model, None, Variant(), index.vocabulary)
    return audit_model(
        loaded,
        index,
        basal,
        {line: perts for line in lines},
        programs=np.array([]),
        layer=-1,
        eps=0.0,
        top=0,
        gene_maps=False,
    )


def run_controls(arch: ModelConfig, cfg: SwapControlConfig, seeds: list[int]) -> dict:
    """Per seed, the positive (at ``beta`` and every dose) and negative controls, summarised
    as :func:`repro.st_reliability.audit_summary.spectra` summarises the trained models (so
    C1's comparison code reads them unchanged)."""
    models = {"positive": ("positive", cfg.beta), "negative": ("negative", cfg.beta)}
    models |= {f"positive_beta{b:g}": ("positive", b) for b in cfg.doses}
    evals = []
    for seed in seeds:
        done: dict[tuple[str, float], dict] = {}  # the judged gain is also a dose
        for kind, beta in models.values():
            if (kind, beta) not in done:
                done[kind, beta] = control_audit(arch, cfg, kind=kind, beta=beta, seed=seed)
        evals.append({"audit": {name: done[key] for name, key in models.items()}})
    return {
        "seeds": list(seeds),
        "beta": cfg.beta,
        "doses": list(cfg.doses),
        "spectra": spectra(evals, arch.cell_set_len),
    }


def run(
    out: str, arch: ModelConfig, cfg: SwapControlConfig, seeds: list[int], *, threads: int = 1
) -> None:
    set_threads(threads)
    write_json(out, run_controls(arch, cfg, seeds))


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description="Controls of C1's within-model attention swap.")
    p.add_argument("out")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = p.parse_args(argv)
    run(a.out, ModelConfig(), SwapControlConfig(), a.seeds)


if __name__ == "__main__":
    main()
