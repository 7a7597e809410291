"""The δ-Mem delta-rule scan: read-outs m_t = S_{t−1} q_t (read before write) and final state.

The state S ∈ ℝ^{r_v×r_k} has one row per value dimension, and the gates act per row
(rankwise β_i, λ_i). Writes, per row i and step t (brief §2.1–2.2):

* ``standard``:       s_i ← λ_i s_i − β_i (s_i·k) kᵀ + β_i v_i kᵀ  (δ-Mem's default)
* ``lambda_outside``: s_i ← λ_i s_i (I − β_i k kᵀ) + β_i v_i kᵀ    (gated delta rule)
* ``no_lambda``:      s_i ← s_i (I − β_i k kᵀ) + β_i v_i kᵀ        (plain DeltaNet)

λ defaults to 1 − β. All three are s ← s (a I − b k kᵀ) + c v kᵀ with per-row scalars
(a, b, c) = (λ, β, β), (λ, λβ, β), (1, β, β). The chunkwise path treats each row as its own
head (d_v = 1, scalar gates) and uses a WY/UT form that is exact for any a, including the
diagonal-plus-rank-1 transition of ``standard`` mode, which the gated-delta-rule kernels
do not cover. Derivation, inside a chunk with D[t, j] = ∏_{j<l≤t} a_l and γ_t = ∏_{l≤t} a_l:

    (I + L) U = diag(c) v,  (I + L) X = diag(b γ_{t−1}) K,  L[t, j] = b_t D[t−1, j] k_t·k_j (j < t)
    ũ_j = u_j − S_0 x_j
    m_t = γ_{t−1} S_0 q_t + Σ_{j<t} D[t−1, j] (q_t·k_j) ũ_j
    S_C = γ_C S_0 + Σ_j D[C, j] ũ_j k_jᵀ

Masked (padding) steps do not write: a = 1, b = c = 0 there.
"""

from __future__ import annotations

import torch

MODES = ("standard", "lambda_outside", "no_lambda")


def _gates(beta, lam, mode):
    """Per-row (a, b, c) of the write s ← s (a I − b k kᵀ) + c v kᵀ."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "no_lambda":
        if lam is not None:
            raise ValueError("no_lambda mode takes no λ")
        return torch.ones_like(beta), beta, beta
    lam = 1 - beta if lam is None else lam
    return lam, (beta if mode == "standard" else lam * beta), beta


def _check(q, k, v, beta, state, mask):
    if q.shape != k.shape or q.shape[:-1] != v.shape[:-1] or beta.shape != v.shape:
        raise ValueError(
            f"q, k: (..., T, r_k), v, beta: (..., T, r_v); got {q.shape} {k.shape} "
            f"{v.shape} {beta.shape}"
        )
    if state is not None and state.shape != (*v.shape[:-2], v.shape[-1], k.shape[-1]):
        raise ValueError(f"initial state must be (..., r_v, r_k), got {tuple(state.shape)}")
    if mask is not None and mask.shape != v.shape[:-1]:
        raise ValueError(f"mask must be (..., T), got {tuple(mask.shape)}")


def delta_rule_scan_naive(q, k, v, beta, lam=None, *, mode="standard", state=None, mask=None):
    """Sequential reference: the brief's per-row formulas, one step at a time."""
    _check(q, k, v, beta, state, mask)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "no_lambda" and lam is not None:
        raise ValueError("no_lambda mode takes no λ")
    lam = 1 - beta if lam is None else lam
    s = v.new_zeros(*v.shape[:-2], v.shape[-1], k.shape[-1]) if state is None else state
    reads = []
    for t in range(q.shape[-2]):
        qt, kt = q[..., t, :], k[..., t, :]
        b, lt = beta[..., t, :, None], lam[..., t, :, None]  # per row
        reads.append(s @ qt.unsqueeze(-1))
        sk = (s @ kt.unsqueeze(-1)) * kt.unsqueeze(-2)  # (s_i·k) kᵀ per row
        write = b * v[..., t, :, None] * kt.unsqueeze(-2)
        if mode == "standard":
            new = lt * s - b * sk + write
        elif mode == "lambda_outside":
            new = lt * (s - b * sk) + write
        else:
            new = s - b * sk + write
        if mask is not None:
            new = torch.where(mask[..., t, None, None], new, s)
        s = new
    return torch.cat(reads, dim=-1).transpose(-1, -2), s


def delta_rule_scan(
    q, k, v, beta, lam=None, *, mode="standard", chunk_size=None, state=None, mask=None
):
    """Read-outs (..., T, r_v) and final state (..., r_v, r_k); chunkwise when chunk_size is set.

    q, k: (..., T, r_k) (δ-Mem passes them L2-normalised); v, beta, lam: (..., T, r_v);
    state: optional initial (..., r_v, r_k); mask: optional bool (..., T), False = padding.
    """
    if chunk_size is None:
        return delta_rule_scan_naive(q, k, v, beta, lam, mode=mode, state=state, mask=mask)
    _check(q, k, v, beta, state, mask)
    out_dtype = q.dtype  # half precision: the triangular solve and products run in float32
    q, k, v, beta, lam, state = (
        None if x is None else x.to(torch.promote_types(x.dtype, torch.float32))
        for x in (q, k, v, beta, lam, state)
    )
    a, b, c = _gates(beta, lam, mode)
    if mask is not None:
        keep = mask.unsqueeze(-1).to(a.dtype)
        a, b, c = a * keep + (1 - keep), b * keep, c * keep
    *batch, T, rk = q.shape
    rv = v.shape[-1]
    chunk_size = min(chunk_size, T)  # a short sequence is one chunk, without padding
    pad = -T % chunk_size
    if pad:  # trailing no-op steps: they change neither earlier reads nor the final state
        q, k, v, b, c = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (q, k, v, b, c))
        a = torch.nn.functional.pad(a, (0, 0, 0, pad), value=1.0)
    n, C = (T + pad) // chunk_size, chunk_size

    def rows(x):  # (..., T, r_v) -> (..., r_v, N, C): one "head" per state row
        return x.reshape(*batch, n, C, rv).permute(*range(len(batch)), -1, -3, -2)

    qc, kc = (x.reshape(*batch, n, C, rk) for x in (q, k))  # shared by all rows
    a, b, c, vr = rows(a), rows(b), rows(c), rows(v)
    ones = torch.ones(C, C, dtype=torch.bool, device=q.device)
    lower, strict = ones.tril(), ones.tril(-1)
    # D[t, j] = ∏_{j<l≤t} a_l: cumulative product down a column of [a_t if t > j else 1]
    grid = torch.where(strict, a.unsqueeze(-1), torch.ones_like(a).unsqueeze(-1))
    decay = grid.cumprod(dim=-2) * lower
    prev = torch.cat([torch.zeros_like(decay[..., :1, :]), decay[..., :-1, :]], dim=-2)
    gamma = a.cumprod(dim=-1)
    gamma_prev = torch.cat([torch.ones_like(gamma[..., :1]), gamma[..., :-1]], dim=-1)
    kk = (kc @ kc.transpose(-1, -2)).unsqueeze(len(batch))  # (..., 1, N, C, C)
    qk = (qc @ kc.transpose(-1, -2)).unsqueeze(len(batch)) * prev  # read weights, j < t
    eye = torch.eye(C, dtype=q.dtype, device=q.device)
    lhs = eye + b.unsqueeze(-1) * prev * kk
    k_rows = kc.unsqueeze(len(batch))
    rhs = torch.cat([(c * vr).unsqueeze(-1), (b * gamma_prev).unsqueeze(-1) * k_rows], -1)
    solved = torch.linalg.solve_triangular(lhs, rhs, upper=False, unitriangular=True)
    u, x = solved[..., 0], solved[..., 1:]  # (..., r_v, N, C), (..., r_v, N, C, r_k)
    # A chunk maps its start state row-wise as s ↦ s P + w (P = γ_C I − Σ_j D[C, j] x_j k_jᵀ,
    # w = Σ_j D[C, j] u_j k_jᵀ): only this r_k×r_k product runs sequentially over chunks.
    d_last = decay[..., -1, :]
    trans = gamma[..., -1, None, None] * torch.eye(rk, dtype=q.dtype, device=q.device)
    trans = trans - (x * d_last.unsqueeze(-1)).transpose(-1, -2) @ k_rows
    offset = ((d_last * u).unsqueeze(-2) @ k_rows).squeeze(-2)
    s = q.new_zeros(*batch, rv, rk) if state is None else state
    starts = []
    for i in range(n):
        starts.append(s)
        s = (s.unsqueeze(-2) @ trans[..., i, :, :]).squeeze(-2) + offset[..., i, :]
    starts = torch.stack(starts, dim=-2).unsqueeze(-1)  # (..., r_v, N, r_k, 1)
    u_tilde = u - (x @ starts).squeeze(-1)  # ũ_j = u_j − S_0 x_j
    m = gamma_prev * (qc.unsqueeze(len(batch)) @ starts).squeeze(-1)
    m = m + (qk @ u_tilde.unsqueeze(-1)).squeeze(-1)  # (..., r_v, N, C)
    m = m.reshape(*batch, rv, n * C)[..., :T].transpose(-1, -2)
    return m.to(out_dtype), s.to(out_dtype)
