"""The chunkwise scan against the sequential reference, the modes' fixed points, gradients."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from repro.delta_mem.scan import MODES, delta_rule_scan, delta_rule_scan_naive

F64 = torch.float64


def _inputs(seed, batch, T, rk, rv, *, gates="uniform", lam=True):
    g = torch.Generator().manual_seed(seed)
    q, k = (F.normalize(torch.randn(*batch, T, rk, generator=g, dtype=F64), dim=-1) for _ in "qk")
    v = torch.randn(*batch, T, rv, generator=g, dtype=F64)
    if gates == "uniform":
        beta = torch.rand(*batch, T, rv, generator=g, dtype=F64)
    elif gates == "extreme":  # near 0 and near 1: long memory and hard overwrites
        beta = torch.where(torch.rand(*batch, T, rv, generator=g) < 0.5, 1e-4, 1 - 1e-4).to(F64)
    else:  # the δ-Mem init: σ(−1.5) everywhere
        beta = torch.full((*batch, T, rv), torch.sigmoid(torch.tensor(-1.5)).item(), dtype=F64)
    lam_t = torch.rand(*batch, T, rv, generator=g, dtype=F64) if lam else None
    return q, k, v, beta, lam_t


CASES = list(
    itertools.product(
        MODES,
        [((2,), 13, 4, 3), ((), 7, 8, 8), ((2, 3), 32, 8, 8), ((1,), 1, 2, 5)],
        [1, 4, 5, 16, 64],
        ["uniform", "extreme", "init"],
    )
)


@pytest.mark.parametrize(("mode", "shape", "chunk", "gates"), CASES)
def test_chunkwise_equals_naive(mode, shape, chunk, gates):
    batch, T, rk, rv = shape
    seed = hash((mode, shape, chunk, gates)) % 2**31
    q, k, v, beta, lam = _inputs(seed, batch, T, rk, rv, gates=gates, lam=mode != "no_lambda")
    g = torch.Generator().manual_seed(seed + 1)
    state = torch.randn(*batch, rv, rk, generator=g, dtype=F64)
    mask = torch.rand(*batch, T, generator=g) < 0.7
    for kwargs in ({}, {"state": state}, {"state": state, "mask": mask}):
        for lam_arg in {lam} if mode == "no_lambda" else {None, lam}:
            ref = delta_rule_scan_naive(q, k, v, beta, lam_arg, mode=mode, **kwargs)
            got = delta_rule_scan(q, k, v, beta, lam_arg, mode=mode, chunk_size=chunk, **kwargs)
            for a, b in zip(got, ref, strict=True):
                torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
                assert (a - b).abs().max() < 1e-10  # in fact exact to rounding in float64


@pytest.mark.parametrize("mode", MODES)
def test_long_sequences_and_zero_decay_equal_naive(mode):
    """Many chunks (the two-level chain over ⌈1000/16⌉ = 63 chunk maps) and λ exactly 0."""
    q, k, v, beta, lam = _inputs(5, (2,), 1000, 8, 8, lam=mode != "no_lambda")
    if lam is not None:
        lam[:, ::37] = 0.0  # forget everything at these steps
    state = torch.randn(2, 8, 8, dtype=F64)
    ref = delta_rule_scan_naive(q, k, v, beta, lam, mode=mode, state=state)
    for chunk in (16, 64):
        got = delta_rule_scan(q, k, v, beta, lam, mode=mode, chunk_size=chunk, state=state)
        for a, b in zip(got, ref, strict=True):
            assert (a - b).abs().max() < 1e-10


def test_masked_steps_read_zero():
    q, k, v, beta, _ = _inputs(4, (2,), 12, 4, 4)
    mask = torch.rand(2, 12, generator=torch.Generator().manual_seed(0)) < 0.5
    state = torch.randn(2, 4, 4, dtype=F64)
    for chunk in (None, 4):
        m, _ = delta_rule_scan(q, k, v, beta, chunk_size=chunk, state=state, mask=mask)
        assert (m[~mask] == 0).all() and (m[mask].abs() > 0).all()


def test_naive_matches_hand_computed_step():
    """One step of each mode from a known state, written out by hand for one row."""
    k = torch.tensor([[[1.0, 0.0]]], dtype=F64)
    q = torch.tensor([[[0.6, 0.8]]], dtype=F64)
    v, beta = torch.tensor([[[2.0]]], dtype=F64), torch.tensor([[[0.25]]], dtype=F64)
    s0 = torch.tensor([[[1.0, 3.0]]], dtype=F64)  # s·k = 1
    expected = {  # λ = 0.75: standard 0.75 s − 0.25 (1) kᵀ + 0.5 kᵀ; etc.
        "standard": [0.75 - 0.25 + 0.5, 2.25],
        "lambda_outside": [0.75 * (1 - 0.25) + 0.5, 2.25],
        "no_lambda": [1 - 0.25 + 0.5, 3.0],
    }
    for mode, row in expected.items():
        m, s = delta_rule_scan_naive(q, k, v, beta, mode=mode, state=s0)
        assert m.item() == pytest.approx(0.6 + 2.4)  # read before write: S_0 q
        torch.testing.assert_close(s[0, 0], torch.tensor(row, dtype=F64))


@pytest.mark.parametrize("chunk", [None, 8])
def test_fixed_points_tell_the_modes_apart(chunk):
    """Repeated writes of one (k, v): s·k → v/2, v/(2 − β), v (brief §2.2)."""
    T, beta0, v0 = 400, 0.3, 1.7
    k = F.normalize(torch.tensor([1.0, -2.0, 0.5, 1.0], dtype=F64), dim=0).expand(1, T, 4)
    v = torch.full((1, T, 1), v0, dtype=F64)
    beta = torch.full((1, T, 1), beta0, dtype=F64)
    state = torch.tensor([[[3.0, 1.0, -1.0, 2.0]]], dtype=F64)
    limits = {"standard": v0 / 2, "lambda_outside": v0 / (2 - beta0), "no_lambda": v0}
    for mode, limit in limits.items():
        _, s = delta_rule_scan(k, k, v, beta, mode=mode, chunk_size=chunk, state=state)
        assert (s[0, 0] @ k[0, 0]).item() == pytest.approx(limit, abs=1e-9), mode
        orthogonal = s[0, 0] - (s[0, 0] @ k[0, 0]) * k[0, 0]
        keeps = mode == "no_lambda"  # the others decay what is orthogonal to k by (1 − β)
        start = state[0, 0] - (state[0, 0] @ k[0, 0]) * k[0, 0]
        torch.testing.assert_close(orthogonal, start if keeps else torch.zeros(4, dtype=F64))


def test_masked_steps_do_not_write():
    q, k, v, beta, _ = _inputs(3, (2,), 9, 4, 4)
    mask = torch.ones(2, 9, dtype=torch.bool)
    mask[0, 4:] = False  # right padding of the first sequence
    mask[1, ::2] = False
    for chunk in (None, 4):
        m, s = delta_rule_scan(q, k, v, beta, chunk_size=chunk, mask=mask)
        _, s_short = delta_rule_scan_naive(q[:1, :4], k[:1, :4], v[:1, :4], beta[:1, :4])
        torch.testing.assert_close(s[0], s_short[0])
        _, s_odd = delta_rule_scan_naive(q[1:, 1::2], k[1:, 1::2], v[1:, 1::2], beta[1:, 1::2])
        torch.testing.assert_close(s[1], s_odd[0])
        nothing = delta_rule_scan(q, k, v, beta, chunk_size=chunk, mask=torch.zeros_like(mask))
        torch.testing.assert_close(nothing[1], torch.zeros_like(s))


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_chunkwise(mode):
    q, k, v, beta, lam = _inputs(7, (1,), 5, 3, 2, lam=mode != "no_lambda")
    state = torch.randn(1, 2, 3, dtype=F64)
    leaves = [t.requires_grad_() for t in (q, k, v, beta, state)]

    def f(q, k, v, beta, state):
        return delta_rule_scan(q, k, v, beta, lam, mode=mode, chunk_size=2, state=state)

    assert torch.autograd.gradcheck(f, leaves)


def test_bad_arguments_are_named():
    q, k, v, beta, lam = _inputs(0, (1,), 4, 2, 2)
    with pytest.raises(ValueError, match="mode"):
        delta_rule_scan(q, k, v, beta, mode="gated", chunk_size=2)
    with pytest.raises(ValueError, match="no_lambda"):
        delta_rule_scan(q, k, v, beta, lam, mode="no_lambda", chunk_size=2)
    with pytest.raises(ValueError, match="initial state"):
        delta_rule_scan(q, k, v, beta, state=torch.zeros(1, 3, 2, dtype=F64))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_chunkwise_on_cuda_matches_the_float64_reference(dtype):
    q, k, v, beta, _ = _inputs(11, (2,), 512, 8, 8, lam=False)
    ref = delta_rule_scan_naive(q, k, v, beta, mode="lambda_outside")
    got = delta_rule_scan(
        *(t.cuda().to(dtype) for t in (q, k, v, beta)), mode="lambda_outside", chunk_size=64
    )
    tol = 2e-4 if dtype == torch.float32 else 1e-1
    for a, b in zip(got, ref, strict=True):
        assert (a.double().cpu() - b).abs().max() < tol * max(1.0, b.abs().max().item())
