"""repro.qsurv.simulate: analytic h, H, S and H^{-1} agree; samples follow the truth.

* H(H^{-1}(e)) = e, h = dH/dt (central differences), S = exp(-H), for every scenario;
  the families' parameters at hand-picked x match the brief's formulas.
* Event times drawn without censoring, and censored samples through Kaplan-Meier
  (lifelines), follow the marginal survival mean_i S(t | x_i) on a large sample.
* The uniform-censoring bound hits the requested censoring rate; same seed, same sample.
"""

import numpy as np
import pytest
from lifelines import KaplanMeierFitter

from repro.qsurv import simulate
from repro.qsurv.catalog import SCENARIOS

N_LARGE = 20_000


def scenario(name: str, n: int = 9) -> simulate.Scenario:
    return simulate.Scenario(name, np.linspace(-1, 1, n))


def time_grid(sc: simulate.Scenario, m: int = 25, h_max: float = 3.0) -> np.ndarray:
    """(n, m) times per subject from 2% to 100% of the time at which H = h_max."""
    t_end = sc.inverse_cumulative_hazard(np.full(len(sc.x), h_max))
    return t_end[:, None] * np.linspace(0.02, 1.0, m)[None, :]


def marginal_survival(sc: simulate.Scenario, grid: np.ndarray) -> np.ndarray:
    return sc.survival(np.broadcast_to(grid, (len(sc.x), grid.size))).mean(axis=0)


@pytest.mark.parametrize("name", SCENARIOS)
def test_inverse_cumulative_hazard_inverts(name):
    sc = scenario(name)
    for e in (1e-4, 0.1, 1.0, 5.0):
        t = sc.inverse_cumulative_hazard(np.full(len(sc.x), e))
        assert np.all(t > 0)
        np.testing.assert_allclose(sc.cumulative_hazard(t[:, None])[:, 0], e, rtol=1e-10)


@pytest.mark.parametrize("name", SCENARIOS)
def test_hazard_is_derivative_of_cumulative_hazard(name):
    sc = scenario(name)
    t = time_grid(sc)
    step = 1e-5 * t
    numeric = (sc.cumulative_hazard(t + step) - sc.cumulative_hazard(t - step)) / (2 * step)
    np.testing.assert_allclose(sc.hazard(t), numeric, rtol=1e-6)


@pytest.mark.parametrize("name", SCENARIOS)
def test_survival_is_exp_minus_cumulative_hazard(name):
    sc = scenario(name)
    t = time_grid(sc)
    np.testing.assert_allclose(sc.survival(t), np.exp(-sc.cumulative_hazard(t)), rtol=1e-14)
    assert np.all(np.diff(sc.survival(t), axis=1) < 0)
    np.testing.assert_allclose(sc.cumulative_hazard(np.zeros((len(sc.x), 1))), 0.0, atol=1e-15)


def test_family_parameters_match_the_brief():
    x = np.array([0.0, 0.5])
    # Gompertz: h = b(x) e^{0.05 t}, log b = -2 + 0.4 x - 0.2 x^2 + 0.1 x^3
    log_b = -2.0 + 0.4 * x - 0.2 * x**2 + 0.1 * x**3
    np.testing.assert_allclose(
        simulate.Scenario("gompertz", x).hazard(np.array([[0.0, 2.0]])),
        np.exp(log_b)[:, None] * np.exp(0.05 * np.array([0.0, 2.0])),
        rtol=1e-14,
    )
    # Log-logistic: the median is alpha(x), log alpha = 1.2 + 0.4 x - 0.15 x^2 + 0.08 x^3
    alpha = np.exp(1.2 + 0.4 * x - 0.15 * x**2 + 0.08 * x**3)
    ll = simulate.Scenario("loglogistic", x)
    np.testing.assert_allclose(ll.survival(alpha[:, None])[:, 0], 0.5, rtol=1e-14)
    # and shape beta: H(2 alpha) = log(1 + 2^beta), log beta = 1.0 + 0.3 x - 0.1 x^2 + 0.05 x^3
    beta = np.exp(1.0 + 0.3 * x - 0.1 * x**2 + 0.05 * x**3)
    np.testing.assert_allclose(
        ll.cumulative_hazard(2 * alpha[:, None])[:, 0], np.log1p(2.0**beta), rtol=1e-14
    )
    # the log-logistic hazard is unimodal (beta > 1): it rises, then falls
    h = ll.hazard(np.linspace(0.05, 40, 400)[None, :])
    peak = h.argmax(axis=1)
    assert np.all((peak > 0) & (peak < 399))


def test_unknown_scenario_rejected():
    with pytest.raises(ValueError, match="unknown scenario"):
        simulate.Scenario("exponentialish", np.zeros(3)).hazard(np.ones((3, 1)))


@pytest.mark.parametrize("name", SCENARIOS)
def test_uncensored_event_times_follow_marginal_survival(name):
    rng = np.random.default_rng(11)
    sc = simulate.Scenario(name, rng.uniform(-1, 1, N_LARGE))
    times = sc.inverse_cumulative_hazard(rng.exponential(size=N_LARGE))
    grid = np.quantile(times, np.linspace(0.02, 0.95, 30))
    empirical = (times[None, :] > grid[:, None]).mean(axis=1)
    # binomial sd <= 0.5 / sqrt(n) = 0.0035; 0.015 is more than 4 sd at every point
    np.testing.assert_allclose(empirical, marginal_survival(sc, grid), atol=0.015)


@pytest.mark.parametrize("name", SCENARIOS)
def test_censored_sample_kaplan_meier_matches_marginal_survival(name):
    x, duration, event, sc = simulate.sample(name, N_LARGE, 0.3, np.random.default_rng(5))
    assert np.all(duration > 0)
    grid = np.quantile(duration, np.linspace(0.02, 0.9, 30))
    km = KaplanMeierFitter().fit(duration, event)
    estimate = km.survival_function_at_times(grid).to_numpy()
    truth = marginal_survival(sc, grid)
    band = km.confidence_interval_survival_function_
    lower = np.interp(grid, band.index.to_numpy(), band.iloc[:, 0].to_numpy())
    upper = np.interp(grid, band.index.to_numpy(), band.iloc[:, 1].to_numpy())
    half_width = (upper - lower) / 2  # 95% pointwise; 30 points, so allow 2x the band
    assert np.all(np.abs(estimate - truth) <= np.maximum(2 * half_width, 0.005))
    assert np.abs(estimate - truth).max() < 0.02


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("rate", [0.2, 0.5])
def test_censoring_rate_hits_target(name, rate):
    _, duration, event, _ = simulate.sample(name, N_LARGE, rate, np.random.default_rng(7))
    assert abs((1 - event.mean()) - rate) < 0.02


def test_uniform_censoring_bound_solves_its_equation():
    times = np.random.default_rng(0).exponential(2.0, 500)
    for rate in (0.05, 0.2, 0.7):
        c = simulate.uniform_censoring_bound(times, rate)
        assert np.minimum(times, c).mean() / c == pytest.approx(rate, rel=1e-9)
    # a single time T with c >= T: P(C < T) = T / c, so c = T / rate
    assert simulate.uniform_censoring_bound(np.array([2.0]), 0.25) == pytest.approx(8.0)


@pytest.mark.parametrize("rate", [0.0, 1.0, -0.1, 1.5])
def test_uniform_censoring_bound_rejects_invalid_rate(rate):
    with pytest.raises(ValueError, match="censoring rate"):
        simulate.uniform_censoring_bound(np.ones(10), rate)


def test_same_seed_same_sample():
    first = simulate.sample("loglogistic", 200, 0.2, np.random.default_rng(42))
    second = simulate.sample("loglogistic", 200, 0.2, np.random.default_rng(42))
    other = simulate.sample("loglogistic", 200, 0.2, np.random.default_rng(43))
    for a, b in zip(first[:3], second[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])
    np.testing.assert_array_equal(first[3].x, first[0])
    assert set(np.unique(first[2])) <= {0.0, 1.0}
