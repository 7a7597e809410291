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

D comes from differences of cumulative log-decays (each factor ≤ 1: no overflow). A chunk
maps its start state row-wise as s ↦ s P + w; the chunk starts are chained in two levels
(maps composed inside groups of chunks, then states passed group to group), so about
3·√(T/C) small products run one after another instead of T/C.

Masked (padding) steps neither write (a = 1, b = c = 0 there) nor read (m_t = 0), as in
the official scan.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

MODES = ("standard", "lambda_outside", "no_lambda")
DEFAULT_CHUNK = 16  # fastest on CPU at T = 4096, r = 8 (benchmarks/delta_mem_scan.py)
LOG_FLOOR = -1e4  # log of a zero decay: its exp is 0 and differences stay finite


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
    _gates(beta, lam, mode)  # validates mode and λ
    lam = 1 - beta if lam is None else lam
    s = v.new_zeros(*v.shape[:-2], v.shape[-1], k.shape[-1]) if state is None else state
    reads = []
    for t in range(q.shape[-2]):
        qt, kt = q[..., t, :], k[..., t, :]
        b, lt = beta[..., t, :, None], lam[..., t, :, None]  # per row
        read = s @ qt.unsqueeze(-1)
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
            read = read * mask[..., t, None, None]
        reads.append(read)
        s = new
    return torch.cat(reads, dim=-1).transpose(-1, -2), s


def _chain(P, w, s0):
    """Start states of s_{i+1} = s_i P_i + w_i (row vectors) and the final state.

    P: (B, n, r, r), w: (B, n, r), s0: (B, r). Maps are composed inside groups of g ≈ √n
    consecutive chunks (g steps, batched over groups), the state is passed from group to
    group (n/g steps), then run through each group from its start (g steps, batched).
    """
    B, n, r, _ = P.shape
    g = max(1, math.isqrt(n))
    G = -(-n // g)
    if G * g > n:  # identity maps at the end change nothing
        eye = torch.eye(r, dtype=P.dtype, device=P.device).expand(B, G * g - n, r, r)
        P, w = torch.cat([P, eye], 1), torch.cat([w, w.new_zeros(B, G * g - n, r)], 1)
    # position-in-group major: (g, B·G, ...) so that each step is one batched product
    Pg = P.reshape(B, G, g, r, r).permute(2, 0, 1, 3, 4).reshape(g, B * G, r, r)
    wg = w.reshape(B, G, g, 1, r).permute(2, 0, 1, 3, 4).reshape(g, B * G, 1, r)
    group_P, group_w = Pg[0], wg[0]
    for j in range(1, g):
        group_P, group_w = group_P @ Pg[j], torch.baddbmm(wg[j], group_w, Pg[j])
    group_P = group_P.reshape(B, G, r, r).transpose(0, 1)
    group_w = group_w.reshape(B, G, 1, r).transpose(0, 1)
    s = s0.unsqueeze(-2)
    group_start = P.new_empty(G, B, 1, r)
    for i in range(G):
        group_start[i] = s
        s = torch.baddbmm(group_w[i], s, group_P[i])
    cur = group_start.transpose(0, 1).reshape(B * G, 1, r)
    starts = P.new_empty(g, B * G, 1, r)
    for j in range(g):
        starts[j] = cur
        cur = torch.baddbmm(wg[j], cur, Pg[j])
    starts = starts.reshape(g, B, G, r).permute(1, 2, 0, 3).reshape(B, G * g, r)
    return starts[:, :n], s.squeeze(-2)


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
    C = min(chunk_size, T)  # a short sequence is one chunk, without padding
    log_a = torch.log(a).clamp_min(LOG_FLOOR)
    pad = -T % C
    if pad:  # trailing no-op steps (log a = 0, b = c = 0): they change nothing
        q, k, v, b, c, log_a = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v, b, c, log_a))
    n, nb = (T + pad) // C, len(batch)

    def rows(x):  # (..., T, r_v) -> (..., r_v, n, C): one "head" per state row
        return x.reshape(*batch, n, C, rv).movedim(-1, nb)

    qc, kc = (x.reshape(*batch, n, C, rk) for x in (q, k))  # shared by all rows
    log_a, b, c, vr = rows(log_a), rows(b), rows(c), rows(v)
    cum = log_a.cumsum(-1)  # log γ_t
    cum_prev = cum - log_a  # log γ_{t−1}
    # D[t−1, j] for j < t (0 elsewhere): exp of a difference ≤ 0 below the diagonal
    decay = (cum_prev.unsqueeze(-1) - cum.unsqueeze(-2)).exp().tril(-1)
    kk, qk = (x @ kc.transpose(-1, -2) for x in (kc, qc))  # (..., N, C, C)
    lhs = decay * b.unsqueeze(-1) * kk.unsqueeze(nb)  # strictly lower: I is implied
    gamma_prev = cum_prev.exp()
    rhs = torch.cat([(c * vr).unsqueeze(-1), (b * gamma_prev).unsqueeze(-1) * kc.unsqueeze(nb)], -1)
    solved = torch.linalg.solve_triangular(lhs, rhs, upper=False, unitriangular=True)
    u, x = solved[..., :1], solved[..., 1:]  # (..., r_v, N, C, 1), (..., r_v, N, C, r_k)
    to_end = (cum[..., -1:] - cum).exp()  # D[C, j]
    k_rows = kc.unsqueeze(nb)
    eye = torch.eye(rk, dtype=q.dtype, device=q.device)
    trans = (
        cum[..., -1, None, None].exp() * eye - (x * to_end.unsqueeze(-1)).transpose(-1, -2) @ k_rows
    )
    offset = ((u.squeeze(-1) * to_end).unsqueeze(-2) @ k_rows).squeeze(-2)
    s0 = q.new_zeros(*batch, rv, rk) if state is None else state
    starts, final = _chain(
        trans.reshape(-1, n, rk, rk), offset.reshape(-1, n, rk), s0.reshape(-1, rk)
    )
    starts = starts.reshape(*batch, rv, n, rk, 1)
    u_tilde = u - x @ starts  # ũ_j = u_j − S_0 x_j
    m = gamma_prev * (starts.transpose(-1, -2) @ qc.unsqueeze(nb).transpose(-1, -2)).squeeze(-2)
    m = m + ((decay * qk.unsqueeze(nb)) @ u_tilde).squeeze(-1)  # (..., r_v, N, C)
    m = m.reshape(*batch, rv, n * C)[..., :T].transpose(-1, -2)
    if mask is not None:
        m = m * mask.unsqueeze(-1).to(m.dtype)
    return m.to(out_dtype), final.reshape(*batch, rv, rk).to(out_dtype)
