"""repro.qsurv.ipcw (the official evaluation's C-index and IBS) on tied real data.

GBSG2 and FLCHAIN (bundled in scikit-survival) have tied durations, including event times
that coincide with censoring times. Against scikit-survival, with the censoring
distribution G passed in so that both use the same one:

* the concordance equals ``concordance_index_ipcw`` once the test censorings tied with an
  event time are moved just before it: scikit-survival counts such a censored subject as
  "still at risk" (comparable), the official rule (T_j > T_i strictly) does not, and on the
  unmodified data the two differ;
* the mean Brier score equals the mean of ``brier_score`` on the same times, and relates to
  ``integrated_brier_score`` (trapezoid / range) by the closed form for an equal grid;
* the default G (lifelines' KM, as the official code) differs from scikit-survival's
  censoring estimator only in how it orders tied events and censorings, by < 1e-3 in G.

Plus a loop-by-loop reference of the official definition for crossing curves with the
weight cap, the "full" horizon, and the grid reader.
"""

import numpy as np
import pytest
from sksurv.datasets import load_flchain, load_gbsg2
from sksurv.metrics import brier_score, concordance_index_ipcw, integrated_brier_score
from sksurv.nonparametric import CensoringDistributionEstimator
from sksurv.util import Surv

from repro.qsurv import ipcw


def tied_data(loader, seed=0):
    covariates, outcome = loader()
    event, time = (outcome[n] for n in outcome.dtype.names)
    time, event = time.astype(float), event.astype(float)
    keep = time > 0
    numeric = covariates.select_dtypes("number").to_numpy(float)[keep]
    time, event = time[keep], event[keep]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(time))
    train, test = order[: int(0.7 * len(time))], order[int(0.7 * len(time)) :]
    z = np.nan_to_num((numeric - np.nanmean(numeric, 0)) / np.nanstd(numeric, 0))  # FLCHAIN has NaN
    risk = z @ rng.normal(0, 0.5, z.shape[1]) + rng.normal(0, 1e-3, len(time))  # no ties
    risk *= 2 / np.abs(risk).max()  # in [-2, 2]: no S underflows to a tied 0
    return (time[train], event[train]), (time[test], event[test], risk[test])


@pytest.fixture(scope="module", params=[load_gbsg2, load_flchain], ids=["gbsg2", "flchain"])
def data(request):
    return tied_data(request.param)


def ph_curves(risk, scale):
    """S_i(t) = exp(-t e^{risk_i} / scale): curves that never cross, ordered by risk."""
    return lambda t: np.exp(-np.outer(np.exp(risk), np.asarray(t, float)) / scale)


def sksurv_censoring(train_t, train_e):
    estimator = CensoringDistributionEstimator().fit(Surv.from_arrays(train_e == 1, train_t))
    return estimator.predict_proba


def test_data_really_have_ties(data):
    (train_t, train_e), (t, e, _) = data
    events, censored = set(t[e == 1]), set(t[e == 0]) | set(train_t[train_e == 0])
    assert len(np.unique(t)) < len(t) and len(events & censored) > 0


def test_concordance_equals_sksurv_with_the_official_tie_rule(data):
    (train_t, train_e), (t, e, risk) = data
    tau = np.quantile(t, 0.8)
    keep = t < tau  # scikit-survival drops test subjects at or after tau altogether
    t, e, risk = t[keep], e[keep], risk[keep]
    censoring = sksurv_censoring(train_t, train_e)
    ours = ipcw.concordance(ph_curves(risk, t.mean()), t, e, censoring, tau, max_weight=None)
    train_y = Surv.from_arrays(train_e == 1, train_t)
    theirs_raw = concordance_index_ipcw(train_y, Surv.from_arrays(e == 1, t), risk)[0]
    tied = (e == 0) & np.isin(t, t[e == 1])
    nudged = np.where(tied, t - 1e-6, t)  # now strictly before the tied event time
    theirs = concordance_index_ipcw(train_y, Surv.from_arrays(e == 1, nudged), risk)[0]
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert tied.any() and abs(ours - theirs_raw) > 1e-6  # the tie rule really differs


def test_brier_mean_equals_sksurv(data):
    (train_t, train_e), (t, e, risk) = data
    tau = np.quantile(t, 0.8)
    times = ipcw.brier_times(t, e, tau, n_points=101)
    surv_fn = ph_curves(risk, t.mean())
    censoring = sksurv_censoring(train_t, train_e)
    ours = ipcw.brier_mean(surv_fn, t, e, censoring, times, max_weight=None)
    train_y, test_y = Surv.from_arrays(train_e == 1, train_t), Surv.from_arrays(e == 1, t)
    _, per_time = brier_score(train_y, test_y, surv_fn(times), times)
    assert ours == pytest.approx(per_time.mean(), rel=1e-12)
    trapezoid = integrated_brier_score(train_y, test_y, surv_fn(times), times)
    n = len(times)
    assert trapezoid == pytest.approx(
        (n * ours - (per_time[0] + per_time[-1]) / 2) / (n - 1), rel=1e-12
    )


def test_default_censoring_is_lifelines_km_close_to_sksurv(data):
    (train_t, train_e), (t, e, risk) = data
    ours, theirs = ipcw.censoring_km(train_t, train_e), sksurv_censoring(train_t, train_e)
    grid = np.unique(np.concatenate([train_t, train_t - 0.5]))
    gap = np.abs(ours(grid) - theirs(grid)).max()
    assert 0 < gap < 1e-3  # they order tied events and censorings differently
    tau = np.quantile(t, 0.8)
    surv_fn = ph_curves(risk, t.mean())
    c_ours = ipcw.concordance(surv_fn, t, e, ours, tau, max_weight=None)
    c_theirs = ipcw.concordance(surv_fn, t, e, theirs, tau, max_weight=None)
    assert abs(c_ours - c_theirs) < 1e-3


def naive_concordance(surv_fn, t, e, censoring, tau, max_weight):
    """The definition, event by event and pair by pair."""
    numerator = denominator = 0.0
    for i in range(len(t)):
        if e[i] != 1 or t[i] > tau:
            continue
        g = censoring(np.array([t[i]]))[0]
        if 1 / g**2 > max_weight:
            continue
        s = surv_fn(np.array([t[i]]))[:, 0]
        for j in range(len(t)):
            if t[j] > t[i]:
                numerator += ((s[i] < s[j]) + 0.5 * (s[i] == s[j])) / g**2
                denominator += 1 / g**2
    return numerator / denominator


def test_concordance_equals_naive_reference_for_crossing_curves():
    (train_t, train_e), (t, e, risk) = tied_data(load_gbsg2, seed=3)
    t, e, risk = t[:120], e[:120], risk[:120]
    shape = np.exp(0.8 * np.tanh(risk))  # Weibull shapes differ: the curves cross

    def surv_fn(times):
        s = np.exp(-((np.asarray(times)[None, :] / 1500.0) ** shape[:, None]))
        return np.round(s, 2)  # and many predictions tie

    censoring = ipcw.censoring_km(train_t, train_e)
    tau = ipcw.full_horizon(train_t, train_e)
    for cap in (10.0, 1.5):
        ours = ipcw.concordance(surv_fn, t, e, censoring, tau, max_weight=cap)
        assert ours == pytest.approx(
            naive_concordance(surv_fn, t, e, censoring, tau, cap), rel=1e-12
        )
    assert ipcw.concordance(surv_fn, t, e, censoring, tau, max_weight=1.5) != pytest.approx(
        ipcw.concordance(surv_fn, t, e, censoring, tau, max_weight=10.0)
    )


def test_full_horizon_and_brier_floor():
    # censorings at 2, 4, 6 (G: 5/6, then 2/3 after 4 ... ) and events at 1, 3, 5
    train_t = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    train_e = np.array([1, 0, 1, 0, 1, 0])
    g = ipcw.censoring_km(train_t, train_e)
    np.testing.assert_allclose(g([0.5, 2.0, 4.0, 6.0]), [1.0, 4 / 5, 4 / 5 * 2 / 3, 0.0])
    assert ipcw.full_horizon(train_t, train_e) == 6.0  # G reaches 0 <= 0.001 at the last time
    assert ipcw.full_horizon(train_t, np.ones(6)) == 6.0  # never censored: the largest time
    # with G = 0 at t = 6 the floor 1/max_weight keeps the score finite
    value = ipcw.brier_mean(lambda s: np.full((6, len(s)), 0.5), train_t, train_e, g, [6.0])
    assert np.isfinite(value) and value > 0


def test_step_reader_is_right_continuous():
    grid = np.array([0.0, 1.0, 2.0])
    surv = np.array([[1.0, 0.8, 0.5], [1.0, 0.9, 0.7]])
    read = ipcw.step_reader(surv, grid)
    np.testing.assert_array_equal(read([-1.0, 0.0, 0.99, 1.0, 5.0]), surv[:, [0, 0, 0, 1, 2]])


def test_official_metrics_on_a_perfect_and_a_reversed_ranking(data):
    (train_t, train_e), (t, e, _) = data
    z = (t - t.mean()) / t.std()  # later durations get lower risk, or higher
    perfect = ipcw.official_metrics(ph_curves(-z, t.mean()), train_t, train_e, t, e)
    reverse = ipcw.official_metrics(ph_curves(z, t.mean()), train_t, train_e, t, e)
    assert perfect["cindex_ipcw"] == pytest.approx(1.0) and reverse["cindex_ipcw"] < 0.01
    assert 0 < perfect["ibs_ipcw"] < reverse["ibs_ipcw"]
    assert perfect["horizon_ipcw"] == ipcw.full_horizon(train_t, train_e)
