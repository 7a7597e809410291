"""repro.qsurv.metrics against other libraries (scikit-survival, lifelines) and closed forms.

Data: 300 subjects, exponential event times with a proportional-hazards risk, independent
exponential censoring (40% censored). Times are continuous, so there are no tied
durations and no event time coincides with a censoring time.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.integrate
from lifelines.utils import concordance_index
from pycox.evaluation import EvalSurv
from sksurv.metrics import brier_score, concordance_index_censored, integrated_brier_score
from sksurv.nonparametric import CensoringDistributionEstimator
from sksurv.util import Surv

from repro.qsurv.metrics import curve_l1, evaluation_grid, survival_metrics

N_GRID = 501  # odd and equally spaced: Simpson vs trapezoid has the closed form used below


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(20260)
    n = 300
    risk = rng.normal(0.0, 0.7, n)
    event_time = rng.exponential(np.exp(-risk))
    censor_time = rng.exponential(1.5, n)
    durations = np.minimum(event_time, censor_time)
    events = (event_time <= censor_time).astype(int)
    # Prediction grid starts above 0 so that S(t_k) never ties across subjects.
    times = np.linspace(1e-3, durations.max(), 400)
    return durations, events, risk, times


def ph_surv(risk, times):
    """Proportional-hazards curves S_i(t) = exp(-t exp(risk_i)): they never cross."""
    return np.exp(-np.outer(np.exp(risk), times))


def step_at(surv, times, grid):
    """What pycox's steps='post' reads: S at the last prediction time <= each grid time."""
    return surv[:, np.searchsorted(times, grid, side="right") - 1]


def test_simps_shim_has_old_positional_signature():
    y, x = np.sin(np.linspace(0, 2, 11)), np.linspace(0, 2, 11)
    assert scipy.integrate.simps(y, x) == scipy.integrate.simpson(y, x=x)


def test_brier_at_single_times_matches_sksurv(data):
    # pycox weights events by 1/G(T_i-) and divides by the sum of weights; sksurv uses
    # 1/G(T_i) and divides by n. With untied continuous times G(T_i-) = G(T_i) at event
    # times, and the KM identity S_km(t) G_km(t) = #{T > t}/n makes the weights sum to n,
    # so the two agree to rounding error.
    durations, events, risk, times = data
    surv = ph_surv(risk, times)
    ev = EvalSurv(pd.DataFrame(surv.T, index=times), durations, events, "km", steps="post")
    y = Surv.from_arrays(events.astype(bool), durations)  # test data doubles as "train": same G
    for t in (0.1, 0.5, 1.0):
        ours = ev.brier_score(np.array([t])).iloc[0]
        _, theirs = brier_score(y, y, step_at(surv, times, np.array([t]))[:, 0], t)
        assert ours == pytest.approx(theirs[0], abs=1e-12)


def test_ibs_matches_sksurv(data):
    durations, events, risk, times = data
    surv = ph_surv(risk, times)
    ours = survival_metrics(surv, times, durations, events, n_grid=N_GRID)
    grid = evaluation_grid(durations, events, N_GRID)
    y = Surv.from_arrays(events.astype(bool), durations)
    est = step_at(surv, times, grid)
    theirs = integrated_brier_score(y, y, est, grid)  # trapezoid; pycox integrates by Simpson
    # Same Brier values at every grid point, so the only difference is the rule. For an odd,
    # equally spaced grid, Simpson - trapezoid = -(h/6) * sum over panel pairs of the second
    # difference f0 - 2 f1 + f2; bound it by absolute values (Brier(t) jumps at event times).
    _, bs = brier_score(y, y, est, grid)
    h, span = grid[1] - grid[0], grid[-1] - grid[0]
    second = bs[0:-2:2] - 2 * bs[1:-1:2] + bs[2::2]
    bound = h / 6 * np.abs(second).sum() / span
    assert abs(ours["ibs"] - theirs) <= bound + 1e-12
    assert abs(ours["ibs"] - theirs) < 1e-4  # ~2e-6 observed; IBS itself is ~0.17
    assert ours["horizon"] == pytest.approx(np.percentile(durations, 90))


def test_ibll_matches_naive_ipcw_reference(data):
    # No second library ships the IPCW binomial log-likelihood; rebuild it from sksurv's
    # censoring KM (same G as pycox here) and integrate with the same Simpson rule.
    durations, events, risk, times = data
    surv = ph_surv(risk, times)
    ours = survival_metrics(surv, times, durations, events, n_grid=N_GRID)
    grid = evaluation_grid(durations, events, N_GRID)
    s = np.clip(step_at(surv, times, grid), 1e-7, 1 - 1e-7)  # pycox clips at eps=1e-7
    cens = CensoringDistributionEstimator().fit(Surv.from_arrays(events.astype(bool), durations))
    g_t, g_y = cens.predict_proba(grid), cens.predict_proba(durations)
    case = (durations[:, None] <= grid) & (events[:, None] == 1)
    control = durations[:, None] > grid
    ll = np.mean(case * np.log(1 - s) / g_y[:, None] + control * np.log(s) / g_t, axis=0)
    naive = -scipy.integrate.simpson(ll, x=grid) / (grid[-1] - grid[0])
    assert ours["ibll"] > 0
    assert ours["ibll"] == pytest.approx(naive, abs=1e-10)


def test_ctd_equals_harrell_for_proportional_hazards(data):
    # Curves that never cross order subjects by risk at every t, so Antolini's Ctd reduces to
    # Harrell's C. No tied durations and no tied predictions: both are the same ratio of
    # integer pair counts, so they agree to rounding error.
    durations, events, risk, times = data
    ctd = survival_metrics(ph_surv(risk, times), times, durations, events)["ctd"]
    harrell = concordance_index(durations, -risk, events)
    sksurv_c = concordance_index_censored(events.astype(bool), durations, risk)[0]
    ev = EvalSurv(pd.DataFrame(ph_surv(risk, times).T, index=times), durations, events)
    assert 0.6 < ctd < 0.8  # informative but imperfect risk
    assert ctd == pytest.approx(harrell, abs=1e-12)
    assert ctd == pytest.approx(sksurv_c, abs=1e-12)
    assert ctd == pytest.approx(ev.concordance_td("antolini"), abs=1e-12)


def test_ctd_oracle_reversed_and_constant(data):
    durations, events, _, times = data
    oracle = survival_metrics(ph_surv(-durations, times), times, durations, events)["ctd"]
    reverse = survival_metrics(ph_surv(durations, times), times, durations, events)["ctd"]
    constant = np.tile(np.exp(-times), (durations.size, 1))
    const = survival_metrics(constant, times, durations, events)["ctd"]
    # Every comparable pair (event i, T_i < T_j) is ordered correctly (or wrongly) by the
    # true times, and a constant curve ties every pair, which counts 1/2.
    assert oracle == pytest.approx(1.0, abs=1e-12)
    assert reverse == pytest.approx(0.0, abs=1e-12)
    assert const == pytest.approx(0.5, abs=1e-12)
    # Plain 'antolini' counts ties as discordant: why survival_metrics uses 'adj_antolini'.
    ev = EvalSurv(pd.DataFrame(constant.T, index=times), durations, events)
    assert ev.concordance_td("antolini") == 0.0


def test_curve_l1_closed_forms():
    rng = np.random.default_rng(1)
    times = np.sort(np.concatenate([[0.0, 1.0, 2.0], rng.uniform(0, 2, 40)]))  # uneven grid
    truth = rng.uniform(0, 1, (5, times.size))
    shift = np.array([0.3, -0.2, 0.0, 1.5, -0.7])[:, None]
    assert curve_l1(truth + shift, truth, times) == pytest.approx(np.abs(shift).mean(), abs=1e-12)
    # |t - 1| on [0, 2]: mean 1/2; the kink sits on a grid node, so the trapezoid is exact.
    assert curve_l1(truth + (times - 1.0), truth, times) == pytest.approx(0.5, abs=1e-12)
    # 3t on [0, 2]: mean 3.
    assert curve_l1(truth, truth + 3 * times, times) == pytest.approx(3.0, abs=1e-12)


def test_input_validation(data):
    durations, events, risk, times = data
    surv = ph_surv(risk, times)
    with pytest.raises(ValueError, match="shape"):
        survival_metrics(surv[:, :-1], times, durations, events)
    with pytest.raises(ValueError, match="increasing"):
        survival_metrics(surv, times[::-1], durations, events)
    bad = surv.copy()
    bad[3, 7] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        survival_metrics(bad, times, durations, events)
    with pytest.raises(ValueError, match="NaN"):
        survival_metrics(surv, times, np.where(events == 1, durations, np.nan), events)
    with pytest.raises(ValueError, match="0 .censored. or 1"):
        survival_metrics(surv, times, durations, events * 2)
    with pytest.raises(ValueError, match="cover"):
        survival_metrics(surv[:, :50], times[:50], durations, events)
    with pytest.raises(ValueError, match="shape"):
        survival_metrics(surv, times, durations[:-1], events)
    with pytest.raises(ValueError, match="must both be"):
        curve_l1(surv, surv[:, :-1], times)
    with pytest.raises(ValueError, match="increasing"):
        curve_l1(surv, surv, np.zeros_like(times))
