"""repro.plsa.estimators and repro.plsa.qp against oracles, brute force and naive loops.

* Oracle probabilities (one-hot true labels): hard labels, MM and PLSA all return pi^T.
* Calibrated logistic regression on a CSBM 'gss' shift (n = 20000, sigma = 0.55): MM
  (lam = 0) and PLSA within L1 0.045 of pi^T, hard labels biased (L1 > 0.08). Measured
  over 20 seeds: hard 0.116 ± 0.009 (min 0.100), MM 0.018 ± 0.007 (max 0.038), PLSA
  0.016 ± 0.006 (max 0.027); the bounds are about mean ± 4 sd.
* The QP equals a brute-force enumeration of all active sets (k = 2, 3; lam = 0 and > 0)
  to 1e-8, also from a cold start that makes the active-set loop do the work; on a
  rank-deficient C its objective equals the brute-force minimum.
* pair_confusion and pair moments equal explicit E x k^2 x k^2 / E x k^2 references.
* PLSA's EM equals a per-edge E x k x k loop to 1e-10, with one chunk or with chunks of 7
  edges; its log-likelihood never decreases (plain, SQUAREM, and SQUAREM fed bad
  extrapolations); plain and SQUAREM reach the same stationary point (dL/dpi_ij = 1 on the
  support) and SQUAREM needs fewer passes. It starts from uniform, so a cell with no
  source edges still gets its target mass. The pair-posterior EM equals a naive loop,
  recovers pi^T from exact pair posteriors and keeps unseen cells at 0.
* gamma = 1 when pi^T = pi^S; StruRW's B_T / B_S equals a hand count; MLLS and BBSE recover
  a planted node label shift.
"""

import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from repro.plsa import em, qp
from repro.plsa.calibration import fit_temperature, softmax
from repro.plsa.csbm import CSBMSpec, pair_distribution, sample_csbm, shift_setting
from repro.plsa.em import plsa_estimate, plsa_pair_estimate
from repro.plsa.estimators import (
    edge_weights_gamma,
    hard_label_estimate,
    l1_error,
    label_weights_bbse,
    label_weights_mlls,
    moment_matching_estimate,
    pair_confusion,
    pair_moments,
    strurw_edge_ratio,
)


def _problem(seed: int, n: int = 20000, sigma: float = 0.55, shift: str = "gss"):
    """Source/target CSBM graphs and temperature-scaled logistic-regression probabilities."""
    rng = np.random.default_rng(seed)
    source_spec, target_spec = shift_setting(shift, n=n, sigma=sigma)
    source, target = sample_csbm(source_spec, rng=rng), sample_csbm(target_spec, rng=rng)
    half = n // 2
    model = LogisticRegression(max_iter=1000).fit(source.x[:half], source.y[:half])
    temperature = fit_temperature(model.decision_function(source.x[half:]), source.y[half:])
    p_s, p_t = (softmax(model.decision_function(g.x), temperature) for g in (source, target))
    return source, target, p_s, p_t


@pytest.fixture(scope="module", params=[0, 1])
def noisy(request):
    return _problem(request.param)


def _truths(source, target, k=3):
    return (
        pair_distribution(source.edge_index, source.y, k),
        pair_distribution(target.edge_index, target.y, k),
        np.bincount(source.y, minlength=k) / len(source.y),
    )


def test_oracle_probabilities_recover_pi_target_exactly():
    source, target, _, _ = _problem(3, n=3000)
    pi_s, pi_t, prior = _truths(source, target)
    onehot_s, onehot_t = np.eye(3)[source.y], np.eye(3)[target.y]
    np.testing.assert_allclose(
        hard_label_estimate(onehot_t, target.edge_index, 3), pi_t, atol=1e-15
    )
    confusion = pair_confusion(onehot_s, source.y, source.edge_index, 3)
    np.testing.assert_allclose(confusion, np.diag(pi_s.ravel()), atol=1e-15)
    pi_mm, info = moment_matching_estimate(onehot_t, target.edge_index, confusion, pi_s)
    assert info["status"] == "optimal" and info["lam"] == 0.0
    np.testing.assert_allclose(pi_mm, pi_t, atol=1e-12)
    pi_plsa, info = plsa_estimate(onehot_t, target.edge_index, prior)
    assert info["converged"]
    np.testing.assert_allclose(pi_plsa, pi_t, atol=1e-12)


def test_noisy_predictor_mm_and_plsa_consistent_hard_labels_biased(noisy):
    source, target, p_s, p_t = noisy
    pi_s, pi_t, prior = _truths(source, target)
    hard = l1_error(hard_label_estimate(p_t, target.edge_index, 3), pi_t)
    confusion = pair_confusion(p_s, source.y, source.edge_index, 3)
    pi_mm, info = moment_matching_estimate(p_t, target.edge_index, confusion, pi_s, lam=0.0)
    pi_plsa, pinfo = plsa_estimate(p_t, target.edge_index, prior)
    assert info["status"] == "optimal" and info["kkt_residual"] < 1e-10 and pinfo["converged"]
    assert l1_error(pi_mm, pi_t) < 0.045 and l1_error(pi_plsa, pi_t) < 0.045
    assert hard > 0.08
    np.testing.assert_allclose(pi_s.ravel() * info["w"].ravel(), pi_mm.ravel(), rtol=1e-9)


# ---- the QP -----------------------------------------------------------------------------


def _brute_force(C, mu, a, lam):
    """Minimum over every free set F of the equality-constrained LS on F (KKT, lstsq)."""
    p = a.size
    A = np.vstack([C, np.sqrt(lam) * np.eye(p)]) if lam else C
    b = np.concatenate([mu, np.sqrt(lam) * np.ones(p)]) if lam else mu
    best, best_w = np.inf, None
    for size in range(1, p + 1):
        for free in map(list, itertools.combinations(range(p), size)):
            kkt = np.block([[2 * A[:, free].T @ A[:, free], a[free, None]], [a[None, free], 0.0]])
            rhs = np.concatenate([2 * A[:, free].T @ b, [1.0]])
            w = np.zeros(p)
            w[free] = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:-1]
            if w.min() < -1e-12 or abs(a @ w - 1) > 1e-9:
                continue
            value = np.sum((A @ w - b) ** 2)
            if value < best:
                best, best_w = value, w
    return best, best_w


def _random_qp(rng, k):
    p = k * k
    C = rng.random((p, p)) * rng.random(p)
    C /= C.sum()
    mu = C @ rng.normal(1.0, 1.0, p) + rng.normal(0.0, 0.01 / p, p)  # negative w: bounds bind
    return C, mu, C.sum(axis=0)


@pytest.mark.parametrize("cold_start", [False, True])
@pytest.mark.parametrize("lam", [0.0, 1e-4, 1e-3, 0.5])
def test_qp_equals_brute_force(lam, cold_start, monkeypatch):
    if cold_start:  # uniform start: the active-set iterations, not NNLS, find the answer
        monkeypatch.setattr(qp, "_warm_start", lambda A, b, a: np.full_like(a, 1 / a.sum()))
    rng = np.random.default_rng(int(lam * 1e4) + 7 * cold_start)
    bound_active = 0
    for trial in range(24):
        C, mu, a = _random_qp(rng, k=2 if trial % 2 else 3)
        result = qp.solve_simplex_qp(C, mu, a, lam=lam)
        best, w = _brute_force(C, mu, a, lam)
        assert result.status == "optimal" and result.kkt_residual < 1e-10
        np.testing.assert_allclose(result.w, w, atol=1e-8)
        assert result.objective == pytest.approx(best, rel=1e-10, abs=1e-18)
        bound_active += np.any(w == 0)
    # the brute force really exercised the bounds (at lam = 0.5 the ridge dominates the
    # tiny moment residual and w stays near 1, as with Pair-Align's lam = 1)
    assert bound_active >= 4 or lam == 0.5


def test_qp_rank_deficient_reaches_the_minimum():
    rng = np.random.default_rng(11)
    C, mu, _ = _random_qp(rng, k=2)
    C[:, 3] = C[:, 1]  # two identical cells: w_1 + w_3 is identified, not each one
    a = C.sum(axis=0)
    result = qp.solve_simplex_qp(C, mu, a, lam=0.0)
    best, _ = _brute_force(C, mu, a, 0.0)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=1e-9, abs=1e-18)
    assert result.w.min() >= 0 and a @ result.w == pytest.approx(1.0, abs=1e-12)


def test_moment_matching_ridge_shrinks_to_one_and_respects_empty_cells():
    source, target, p_s, p_t = _problem(4, n=3000)
    pi_s, _, _ = _truths(source, target)
    confusion = pair_confusion(p_s, source.y, source.edge_index, 3)
    pi_hat, info = moment_matching_estimate(p_t, target.edge_index, confusion, pi_s, lam=1e8)
    np.testing.assert_allclose(info["w"], 1.0, atol=1e-6)
    np.testing.assert_allclose(pi_hat, pi_s, atol=1e-6)
    C, mu, a = _random_qp(np.random.default_rng(5), k=2)
    C[:, 2], a[2] = 0.0, 0.0  # a cell with no source edges: fixed at w = 1, pi_hat = 0
    result = qp.solve_simplex_qp(C, mu, a / a.sum(), lam=0.0)
    assert result.w[2] == 1.0 and result.status == "optimal"


def test_pair_confusion_and_moments_match_explicit_arrays():
    rng = np.random.default_rng(6)
    k, n, e = 3, 40, 200
    P = rng.dirichlet(np.ones(k), size=n)
    y = rng.integers(0, k, n)
    edge_index = rng.integers(0, n, size=(2, e))
    phi = np.einsum("ei,ej->eij", P[edge_index[0]], P[edge_index[1]]).reshape(e, k * k)
    pair = np.eye(k * k)[y[edge_index[0]] * k + y[edge_index[1]]]
    explicit = np.einsum("ea,ei->eai", phi, pair).mean(axis=0)  # E x k^2 x k^2
    for chunk in (3, 10**6):
        confusion = pair_confusion(P, y, edge_index, k, chunk_edges=chunk)
        np.testing.assert_allclose(confusion, explicit, atol=1e-15)
        np.testing.assert_allclose(
            pair_moments(P, edge_index, chunk_edges=chunk), phi.mean(axis=0), atol=1e-15
        )
    np.testing.assert_allclose(confusion.sum(axis=0), pair_distribution(edge_index, y, k).ravel())


# ---- PLSA EM ----------------------------------------------------------------------------


def _naive_em(P, edge_index, prior, iterations):
    """The EM of the brief written per edge with an explicit E x k x k responsibility array."""
    g = P / prior
    k = P.shape[1]
    pi = np.full((k, k), 1 / k**2)
    logliks = []
    for _ in range(iterations):
        joint = np.empty((edge_index.shape[1], k, k))
        for e, (u, v) in enumerate(edge_index.T):
            joint[e] = pi * np.outer(g[u], g[v])
        z = joint.sum(axis=(1, 2))
        logliks.append(np.mean(np.log(z)))
        pi = (joint / z[:, None, None]).mean(axis=0)
    return pi, logliks


def test_em_equals_naive_per_edge_loop():
    rng = np.random.default_rng(8)
    k, n = 4, 60
    P = rng.dirichlet(np.full(k, 0.7), size=n)
    prior = rng.dirichlet(np.full(k, 5.0))
    edge_index = rng.integers(0, n, size=(2, 300))
    expected, logliks = _naive_em(P, edge_index, prior, 25)
    for chunk in (7, 10**6):  # 43 chunks (the last one short), and a single one
        pi, info = plsa_estimate(
            P, edge_index, prior, tol=0.0, max_iter=25, accelerate=False, chunk_edges=chunk
        )
        assert info["iterations"] == 25 and not info["converged"]
        np.testing.assert_allclose(pi, expected, atol=1e-10)
        np.testing.assert_allclose(info["loglik_trace"], logliks, rtol=1e-12)


def _pairwise_gradient(pi, P, edge_index, prior):
    g = P / prior
    gu, gv = g[edge_index[0]], g[edge_index[1]]
    z = np.einsum("ej,ej->e", gu @ pi, gv)
    return gu.T @ (gv / z[:, None]) / z.size


@pytest.fixture(scope="module")
def hard_problem():
    """sigma = 0.8 (accuracy ≈ 0.7): slow EM, so SQUAREM has room to work."""
    source, target, _, p_t = _problem(9, n=6000, sigma=0.8)
    return p_t, target.edge_index, np.bincount(source.y, minlength=3) / len(source.y)


def test_em_is_monotone_and_squarem_reaches_the_same_stationary_point(hard_problem):
    P, edge_index, prior = hard_problem
    plain_pi, plain = plsa_estimate(P, edge_index, prior, tol=1e-11, accelerate=False)
    fast_pi, fast = plsa_estimate(P, edge_index, prior, tol=1e-11, accelerate=True)
    for info in (plain, fast):
        assert info["converged"]
        assert np.all(np.diff(info["loglik_trace"]) >= -1e-13)
    assert fast["iterations"] < 0.7 * plain["iterations"]
    np.testing.assert_allclose(fast_pi, plain_pi, atol=1e-8)
    # first-order optimality on the simplex: dL/dpi_ij = 1 wherever pi_ij > 0
    grad = _pairwise_gradient(fast_pi, P, edge_index, prior)
    np.testing.assert_allclose(grad[fast_pi > 1e-6], 1.0, atol=1e-7)


def test_squarem_safeguard_rejects_bad_extrapolations(hard_problem, monkeypatch):
    P, edge_index, prior = hard_problem
    corner = np.full((3, 3), 1e-3)
    corner[0, 0] = 1 - corner.sum() + 1e-3  # a terrible point: likelihood far below EM's
    monkeypatch.setattr(em, "_squarem_point", lambda pi, p1, p2: corner / corner.sum())
    pi, info = plsa_estimate(P, edge_index, prior, tol=1e-11)
    assert info["converged"] and np.all(np.diff(info["loglik_trace"]) >= -1e-13)
    expected, _ = plsa_estimate(P, edge_index, prior, tol=1e-11, accelerate=False)
    np.testing.assert_allclose(pi, expected, atol=1e-8)


def test_empty_source_cell_recovers_target_mass():
    """Source classes 0 and 1 never link; the target links every pair equally. EM from
    uniform gives cell (0, 1) its target mass (a start at pi^S would pin it at 0), while MM's
    pi^S w and hard labels' errors cannot."""
    rng = np.random.default_rng(13)
    block = ((0.8, 0.0, 0.2), (0.0, 0.8, 0.2), (0.2, 0.2, 0.8))
    source = sample_csbm(CSBMSpec(n=20000, prior=(1 / 3,) * 3, block=block, sigma=0.4), rng=rng)
    _, target_spec = shift_setting("css", n=20000, sigma=0.4)
    target = sample_csbm(target_spec, rng=rng)
    pi_s, pi_t, prior = _truths(source, target)
    assert pi_s[0, 1] == 0 and pi_t[0, 1] > 0.1
    model = LogisticRegression(max_iter=1000).fit(source.x, source.y)
    p_t = softmax(model.decision_function(target.x))
    pi_plsa, _ = plsa_estimate(p_t, target.edge_index, prior)
    # measured (seeds 13-15): 0.1115 vs 0.1112, |difference| <= 0.0005, L1 0.004-0.008
    assert pi_plsa[0, 1] == pytest.approx(pi_t[0, 1], abs=0.01)
    assert l1_error(pi_plsa, pi_t) < 0.03


def _naive_pair_em(G, iterations):
    pi = np.full(G.shape[1], 1 / G.shape[1])
    for _ in range(iterations):
        joint = pi * G
        pi = (joint / joint.sum(axis=1, keepdims=True)).mean(axis=0)
    return pi


def test_pair_posterior_em_equals_a_naive_loop_and_recovers_pi():
    rng = np.random.default_rng(14)
    q = rng.dirichlet(np.full(9, 0.5), size=500)
    prior = rng.dirichlet(np.ones(9))
    expected = _naive_pair_em(q / prior, 30)
    for chunk in (11, 10**6):
        pi, info = plsa_pair_estimate(
            q, prior, tol=0.0, max_iter=30, accelerate=False, chunk_edges=chunk
        )
        assert info["iterations"] == 30
        np.testing.assert_allclose(pi.ravel(), expected, atol=1e-12)
    # exact posteriors of a planted mixture: pair cells c ~ pi_true, a score s ~ N(mu_c, 1);
    # q(c | s) under the training prior is Bayes' rule, and EM recovers pi_true
    pi_true, train_prior = rng.dirichlet(np.ones(9)), np.full(9, 1 / 9)
    cells = rng.choice(9, size=200000, p=pi_true)
    means = np.arange(9) * 1.5
    s = means[cells] + rng.standard_normal(cells.size)
    q = softmax(-((s[:, None] - means[None]) ** 2) / 2 + np.log(train_prior))
    pi, info = plsa_pair_estimate(q, train_prior)
    assert info["converged"] and np.all(np.diff(info["loglik_trace"]) >= -1e-13)
    assert l1_error(pi.ravel(), np.bincount(cells, minlength=9) / cells.size) < 0.03
    unseen = train_prior.copy()
    unseen[4] = 0.0  # a cell the classifier never saw carries no evidence: it stays at 0
    assert plsa_pair_estimate(q, unseen / unseen.sum())[0].ravel()[4] == 0.0


# ---- weights ----------------------------------------------------------------------------


def test_strurw_ratio_equals_a_hand_count():
    # source: 4 nodes, labels (0, 0, 1, 1); undirected edges 0-1, 1-2, 2-3 (both directions)
    y_s = np.array([0, 0, 1, 1])
    e_s = np.array([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    # target: 5 nodes predicted (0, 1, 1, 1, 0); undirected 0-1, 0-4, 2-3
    pred = np.array([0, 1, 1, 1, 0])
    e_t = np.array([[0, 1, 0, 4, 2, 3], [1, 0, 4, 0, 3, 2]])
    # B_S = counts / (n_i n_j), counts [[2, 1], [1, 2]], sizes (2, 2): [[.5, .25], [.25, .5]]
    # B_T: counts [[2, 1], [1, 2]], sizes (2, 3): [[2/4, 1/6], [1/6, 2/9]]
    expected = np.array([[0.5 / 0.5, (1 / 6) / 0.25], [(1 / 6) / 0.25, (2 / 9) / 0.5]])
    np.testing.assert_allclose(strurw_edge_ratio(pred, e_t, y_s, e_s, 2), expected, rtol=1e-14)
    # a cell without source edges is inf or nan in the ratio: set to 1, as StruRW does
    ratio = strurw_edge_ratio(pred, e_t, y_s, e_s[:, :2], 2)  # only the 0-0 edge in source
    np.testing.assert_allclose(ratio, [[1.0, 1.0], [1.0, 1.0]])


def test_gamma_is_one_without_shift_and_matches_formula():
    pi = np.random.default_rng(10).dirichlet(np.ones(9)).reshape(3, 3)
    np.testing.assert_allclose(edge_weights_gamma(pi, pi), 1.0, rtol=1e-14)
    source = np.array([[0.4, 0.1], [0.1, 0.4]])
    target = np.array([[0.2, 0.3], [0.3, 0.2]])
    # row-conditionals: target (0.4, 0.6), source (0.8, 0.2) -> gamma (0.5, 3)
    np.testing.assert_allclose(edge_weights_gamma(target, source, delta=0.0), [[0.5, 3], [3, 0.5]])
    assert edge_weights_gamma(np.array([[1.0, 0.0]] * 2) / 2, source, delta=1e-4)[0, 1] > 0


def _label_shift(n, prior, rng, sigma=0.55, prior_source=(1 / 3,) * 3):
    """Nodes of the CSBM feature model with exact (hence calibrated) source posteriors."""
    y = rng.choice(3, size=n, p=prior)
    x = np.eye(3)[y] + sigma * rng.standard_normal((n, 3))
    log_lik = -((x[:, None, :] - np.eye(3)[None]) ** 2).sum(-1) / (2 * sigma**2)
    return softmax(log_lik + np.log(prior_source)), y


def test_mlls_and_bbse_recover_planted_label_shift():
    rng = np.random.default_rng(12)
    target_prior = np.array([0.5, 0.3, 0.2])
    p_t, y_t = _label_shift(60000, target_prior, rng)
    p_s, y_s = _label_shift(60000, np.full(3, 1 / 3), rng)
    truth = np.bincount(y_t, minlength=3) / len(y_t) * 3  # realised beta
    # MLLS: sd of beta ≈ 3 sqrt(p(1-p)/n) / accuracy ≈ 0.007 here; 0.03 is > 4 sd
    np.testing.assert_allclose(label_weights_mlls(p_t, np.full(3, 1 / 3)), truth, atol=0.03)
    beta = label_weights_bbse(p_s, y_s, p_t, 3, lam=0.0)
    np.testing.assert_allclose(beta, truth, atol=0.04)
    np.testing.assert_allclose(label_weights_bbse(p_s, y_s, p_t, 3, lam=1e8), 1.0, atol=1e-5)
    onehot = np.eye(3)[y_t]  # oracle: MLLS returns the realised frequencies exactly
    np.testing.assert_allclose(label_weights_mlls(onehot, np.full(3, 1 / 3)), truth, atol=1e-12)
