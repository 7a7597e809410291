"""repro.qsurv.model: the quadrature likelihood and the three hazard networks.

* QuadratureLikelihood equals the closed-form Weibull NLL when GL is exact (integer
  shape), and converges in K for a non-integer shape.
* TimeLoRAHazard's factorised logit equals the naive h' = h + (α/r) U(g(v) ⊙ V h),
  logit = w·h' + b0 + b(v), from its own (randomised) parameters; the covariate-time
  interaction of the logit has rank <= r.
* The backbone runs once per subject for time_lora and FiLM whatever K is; concat's
  backbone sees B·(K+1) rows.
* Initial hazards: softplus(-5) exactly for FiLM and concat, softplus(-5 + b(v)) for
  time_lora; which parameters get gradient at step 0 and at step 1.
"""

import math

import pytest
import torch
from torch.nn import functional as F

from repro.qsurv.model import (
    CONDITIONINGS,
    ConcatHazard,
    FiLMHazard,
    QuadratureLikelihood,
    TimeLoRAHazard,
    build_hazard_net,
)

B, P = 12, 3


def make_net(conditioning: str, **overrides) -> torch.nn.Module:
    kwargs = dict(
        in_features=P, hidden=[16, 8], dropout=0.0, rank=4, alpha=8.0, time_width=10, time_depth=3
    )
    return build_hazard_net(conditioning, **{**kwargs, **overrides})


def batch(seed: int = 0, n: int = B):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, P, generator=g) * 0.5
    v = torch.rand(n, generator=g) * 0.9 + 0.05
    event = (torch.rand(n, generator=g) < 0.7).float()
    return x, v, event


def weibull_nll(x, v, event, shape: float) -> float:
    """-mean[e log h(v) - H(v)] with h = e^{x0} k v^{k-1}, H = e^{x0} v^k, in float64."""
    x, v, event = x.double(), v.double(), event.double()
    scale = torch.exp(x[:, 0])
    log_h = torch.log(scale * shape * v ** (shape - 1))
    return float(-(event * log_h - scale * v**shape).mean())


@pytest.mark.parametrize("shape,nodes", [(1, 1), (2, 1), (3, 2), (4, 3), (5, 3), (5, 15)])
def test_likelihood_matches_weibull_closed_form(weibull_hazard, shape, nodes):
    """h has degree shape-1, so GL with 2K-1 >= shape-1 integrates it exactly."""
    x, v, event = batch()
    loss = QuadratureLikelihood(rule="gauss_legendre", nodes=nodes)(
        weibull_hazard(shape), x, v, event
    )
    expected = weibull_nll(x, v, event, shape)
    assert float(loss) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_likelihood_not_exact_below_gl_degree(weibull_hazard):
    """shape 5 (degree 4) needs K >= 3: with K = 1 and 2 the loss is visibly off."""
    x, v, event = batch()
    expected = weibull_nll(x, v, event, 5.0)
    for nodes in (1, 2):
        loss = QuadratureLikelihood(rule="gauss_legendre", nodes=nodes)(
            weibull_hazard(5), x, v, event
        )
        assert abs(float(loss) - expected) > 1e-3


def test_likelihood_converges_in_k_for_non_integer_shape(weibull_hazard):
    """h ~ v^{0.5} is not smooth at 0: convergence is algebraic, but monotone to 0."""
    x, v, event = batch()
    expected = weibull_nll(x, v, event, 1.5)
    errors = []
    for nodes in (1, 2, 4, 8, 16, 32):
        loss = QuadratureLikelihood(rule="gauss_legendre", nodes=nodes)(
            weibull_hazard(1.5), x, v, event
        )
        errors.append(abs(float(loss) - expected))
    assert all(b < a for a, b in zip(errors[:4], errors[1:5], strict=True)), errors
    assert errors[0] > 1e-3 and errors[-1] < 1e-4, errors


def test_likelihood_time_scale_gives_the_raw_time_likelihood(weibull_hazard):
    """h is per unit of raw time t = s v: H(t) = s ∫_0^v h, so the NLL is
    -mean[e log h - s e^{x0} v^k] for the Weibull-shaped h = e^{x0} k v^{k-1}."""
    x, v, event = batch()
    scale = 7.5
    loss = QuadratureLikelihood(rule="gauss_legendre", nodes=3, time_scale=scale)(
        weibull_hazard(3), x, v, event
    )
    xd, vd, ed = x.double(), v.double(), event.double()
    log_h = torch.log(torch.exp(xd[:, 0]) * 3 * vd**2)
    expected = -(ed * log_h - scale * torch.exp(xd[:, 0]) * vd**3).mean()
    assert float(loss) == pytest.approx(float(expected), rel=1e-5)
    unscaled = QuadratureLikelihood(rule="gauss_legendre", nodes=3)(weibull_hazard(3), x, v, event)
    assert abs(float(unscaled) - float(expected)) > 0.1


@pytest.mark.parametrize("rule,nodes", [("trapezoid", 2), ("midpoint", 1)])
def test_likelihood_other_rules_exact_for_linear_hazard(polynomial_hazard, rule, nodes):
    x, v, event = batch()
    net = polynomial_hazard([0.5, 2.0])  # h = e^{x0} (0.5 + 2 v), H = e^{x0}(0.5 v + v^2)
    scale = torch.exp(x[:, 0].double())
    vd = v.double()
    expected = -(
        event.double() * torch.log(scale * (0.5 + 2 * vd)) - scale * (0.5 * vd + vd**2)
    ).mean()
    loss = QuadratureLikelihood(rule=rule, nodes=nodes)(net, x, v, event)
    assert float(loss) == pytest.approx(float(expected), rel=1e-5)


def randomise(net: torch.nn.Module, seed: int = 1) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.4)


def naive_time_lora_logit(net: TimeLoRAHazard, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Subject by subject, time by time: h' = h + (α/r) U(g(v) ⊙ V h); w·h' + b0 + b(v)."""
    logits = torch.empty(v.shape, dtype=x.dtype)
    V, U = net.down.weight, net.up.weight  # (r, D), (D, r)
    w, b0 = net.head.weight[0], net.head.bias[0]
    scale = net.scale
    for i in range(x.shape[0]):
        h = net.backbone(x[i : i + 1])[0]
        for m in range(v.shape[1]):
            out = net.time(v[i : i + 1, m : m + 1])[0, 0]
            g, b = out[: net.rank], out[net.rank]
            h_prime = h + scale * (U @ (g * (V @ h)))
            logits[i, m] = w @ h_prime + b0 + b
    return logits


def test_time_lora_equals_naive_reference():
    torch.manual_seed(0)
    net = make_net("time_lora").double()
    assert net.scale == 8.0 / 4
    randomise(net)
    assert net.up.weight.abs().min() > 0
    x = torch.randn(5, P, dtype=torch.float64)
    v = torch.rand(5, 7, dtype=torch.float64)
    logit = naive_time_lora_logit(net, x, v)
    assert logit.abs().max() < 15  # away from the clamp, so softplus is invertible
    expected = F.softplus(logit).clamp(1e-8, 30.0)
    torch.testing.assert_close(net(x, v), expected, rtol=1e-10, atol=1e-12)
    # and in float32 at the brief's tolerance
    net32 = net.float()
    torch.testing.assert_close(net32(x.float(), v.float()), expected.float(), rtol=1e-5, atol=1e-6)


def test_time_lora_with_silu_time_network_equals_naive_reference():
    """The official simulation's time MLP uses SiLU: the same factorised logit holds."""
    torch.manual_seed(0)
    net = make_net("time_lora", time_activation="silu").double()
    assert any(isinstance(m, torch.nn.SiLU) for m in net.time.modules())
    assert not any(isinstance(m, torch.nn.Tanh) for m in net.time.modules())
    randomise(net, seed=3)
    x, v = torch.randn(4, P, dtype=torch.float64), torch.rand(4, 5, dtype=torch.float64)
    logit = naive_time_lora_logit(net, x, v)
    torch.testing.assert_close(net.logit(x, v), logit, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(net(x, v), F.softplus(logit).clamp(1e-8, 30.0))
    with pytest.raises(ValueError, match="unknown activation"):
        make_net("film", time_activation="relu")


def test_time_lora_interaction_has_rank_at_most_r():
    """Double-centred logit matrix L[i, m] = (α/r) Σ_j (z_j u_j)(x_i) g_j(v_m) + ...: rank <= r."""
    torch.manual_seed(0)
    rank = 3
    net = make_net("time_lora", rank=rank, alpha=3.0).double()
    randomise(net, seed=4)
    x = torch.randn(30, P, dtype=torch.float64)
    v = torch.linspace(0.01, 1.0, 25, dtype=torch.float64).expand(30, -1)
    hazard = net(x, v)
    assert hazard.min() > 1e-6 and hazard.max() < 29
    logit = torch.log(torch.expm1(hazard))  # inverse softplus
    centred = logit - logit.mean(0, keepdim=True) - logit.mean(1, keepdim=True) + logit.mean()
    singular = torch.linalg.svdvals(centred)
    assert singular[rank - 1] > 1e-3 * singular[0]
    assert singular[rank] < 1e-9 * singular[0]


@pytest.mark.parametrize("conditioning", CONDITIONINGS)
def test_shared_time_grid_equals_per_subject_grid(conditioning):
    """v of shape (1, M) (one grid for every subject) gives the same as v expanded to (B, M)."""
    torch.manual_seed(0)
    net = make_net(conditioning).double()
    randomise(net, seed=2)
    x = torch.randn(B, P, dtype=torch.float64)
    grid = torch.rand(1, 9, dtype=torch.float64)
    shared = net(x, grid)
    assert shared.shape == (B, 9)
    torch.testing.assert_close(shared, net(x, grid.expand(B, -1)), rtol=1e-12, atol=1e-14)
    # and a one-subject batch with its own grid is not mistaken for anything else
    torch.testing.assert_close(net(x[:1], grid), shared[:1], rtol=1e-12, atol=1e-14)


def count_backbone_rows(net: torch.nn.Module, nodes: int) -> list[int]:
    rows = []

    def hook(module, inputs, output):
        rows.append(inputs[0].numel() // inputs[0].shape[-1])

    handle = net.backbone.register_forward_hook(hook)
    try:
        x, v, event = batch()
        QuadratureLikelihood(rule="gauss_legendre", nodes=nodes)(net, x, v, event)
    finally:
        handle.remove()
    return rows


@pytest.mark.parametrize("conditioning", ["time_lora", "film"])
@pytest.mark.parametrize("nodes", [3, 30])
def test_backbone_runs_once_per_subject(conditioning, nodes):
    assert count_backbone_rows(make_net(conditioning), nodes) == [B]


@pytest.mark.parametrize("nodes", [3, 30])
def test_concat_backbone_sees_every_time_point(nodes):
    assert count_backbone_rows(make_net("concat"), nodes) == [B * (nodes + 1)]


@pytest.mark.parametrize("cls", [FiLMHazard, ConcatHazard])
def test_initial_hazard_is_softplus_minus_five(cls):
    torch.manual_seed(0)
    net = cls(in_features=P, hidden=[16, 8])
    x, _, _ = batch()
    v = torch.rand(B, 9)
    torch.testing.assert_close(
        net(x, v), torch.full((B, 9), math.log1p(math.exp(-5.0))), rtol=1e-6, atol=0
    )


def test_initial_time_lora_hazard_is_softplus_of_minus_five_plus_time_bias():
    """At init U = 0 and w = 0, so the logit is exactly -5 + b(v).

    No tolerance for b(v) is documented. Its analytic bound is |b| <= ||row|| ||body(v)|| <=
    sqrt(time_width) (orthonormal rows, tanh features): loose. Measured over 50 init seeds
    at the simulation (r 16, width 32) and tabular (r 32, width 64) sizes: max |b| = 0.62
    and 0.82, so |b| < 1 and the hazard lies in [softplus(-6), softplus(-4)].
    """
    x, _, _ = batch()
    v = torch.linspace(0, 1, 41).expand(B, -1)
    for seed, (rank, width) in enumerate([(16, 32), (32, 64)] * 3):
        torch.manual_seed(seed)
        net = TimeLoRAHazard(
            in_features=P, hidden=[32, 32], rank=rank, alpha=rank, time_width=width, time_depth=3
        )
        time_bias = net.time(v)[..., rank]
        torch.testing.assert_close(net(x, v), F.softplus(-5.0 + time_bias), rtol=1e-6, atol=0)
        assert time_bias.abs().max() < 1.0
        assert torch.all(net.time(v)[..., :rank].mean() > 0.5)  # gate bias 1: gates open


def test_time_lora_gradients_at_step_zero_and_one():
    """dL/dU = (α/r) Σ dL/dlogit · w (g ⊙ V h)ᵀ, and the head weight w starts at 0.

    So at step 0 U (and V, and the backbone, whose paths all pass through w) get an
    exactly zero gradient, whatever the gates are; the head and the time bias do get one.
    After one optimiser step w != 0 and the gradient reaches U: the gates being open
    (bias 1) is what makes it non-zero then.
    """
    torch.manual_seed(0)
    net = make_net("time_lora")
    loss_fn = QuadratureLikelihood(rule="gauss_legendre", nodes=5)
    x, v, event = batch()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-2)
    loss_fn(net, x, v, event).backward()
    grads = {n: p.grad.abs().max().item() for n, p in net.named_parameters()}
    assert grads["up.weight"] == 0.0 and grads["down.weight"] == 0.0
    assert grads["backbone.0.weight"] == 0.0
    assert grads["head.weight"] > 0 and grads["head.bias"] > 0 and grads["time.out.bias"] > 0
    optimizer.step()
    optimizer.zero_grad()
    loss_fn(net, x, v, event).backward()
    assert net.up.weight.grad.abs().max() > 1e-6
    assert net.backbone[0].weight.grad.abs().max() > 0


@pytest.mark.parametrize("conditioning", CONDITIONINGS)
def test_build_hazard_net_builds_each_conditioning(conditioning):
    net = make_net(conditioning)
    expected = {"time_lora": TimeLoRAHazard, "film": FiLMHazard, "concat": ConcatHazard}
    assert type(net) is expected[conditioning]
    x, _, _ = batch()
    out = net(x, torch.rand(B, 4))
    assert out.shape == (B, 4) and torch.all(out > 0)


def test_build_hazard_net_rejects_unknown():
    with pytest.raises(ValueError, match="unknown conditioning"):
        make_net("lora")


def test_hazard_is_clamped():
    net = make_net("concat")
    with torch.no_grad():
        net.head.bias.fill_(100.0)
    assert torch.all(net(*batch()[:1], torch.rand(B, 3)) == 30.0)
    with torch.no_grad():
        net.head.bias.fill_(-100.0)
    assert torch.all(net(*batch()[:1], torch.rand(B, 3)) == 1e-8)
