"""repro.qsurv.quadrature against exactness degrees, closed-form errors and the GL bound.

* Gauss-Legendre with K nodes integrates every monomial of degree <= 2K-1 on [0, t]
  exactly and misses degree 2K by exactly its classical error term.
* Trapezoid and midpoint are exact for linear functions and miss s^2 by their
  closed-form composite errors.
* ``interval_points`` + cumsum reproduces ``integrate`` from 0 at every grid point.
* ``gauss_legendre_error_bound`` is >= the actual error for exp(a t), and never looser
  than a factor e^{a t / 2} (a proof is in the test's docstring), and equals the
  formula written with math.factorial.
"""

import math

import numpy as np
import pytest

from repro.qsurv.quadrature import (
    RULES,
    gauss_legendre_error_bound,
    integrate,
    interval_points,
    log_error_slope,
    unit_rule,
)

UPPERS = np.array([0.3, 1.0, 2.5])


def monomial_integral(degree: int, upper):
    return np.asarray(upper, dtype=float) ** (degree + 1) / (degree + 1)


def gl_error_constant(upper: float, nodes: int) -> float:
    """t^{2K+1} (K!)^4 / ((2K+1) ((2K)!)^3), written directly with exact integers."""
    k = nodes
    return (
        upper ** (2 * k + 1) * math.factorial(k) ** 4 / ((2 * k + 1) * math.factorial(2 * k) ** 3)
    )


@pytest.mark.parametrize("rule,nodes", [(r, k) for r in RULES for k in (2, 5, 15)])
def test_unit_rule_points_in_unit_interval_and_weights_sum_to_one(rule, nodes):
    u, w = unit_rule(rule, nodes)
    assert u.shape == w.shape == (nodes,)
    assert np.all((u >= 0) & (u <= 1)) and np.all(np.diff(u) > 0)
    assert np.all(w > 0)
    assert w.sum() == pytest.approx(1.0, rel=1e-14)
    # every rule here is symmetric about 1/2
    np.testing.assert_allclose(u, 1 - u[::-1], atol=1e-14)
    np.testing.assert_allclose(w, w[::-1], rtol=1e-13)


@pytest.mark.parametrize("nodes", [1, 2, 3, 5, 8])
def test_gauss_legendre_exact_up_to_degree_2k_minus_1(nodes):
    for degree in range(2 * nodes):
        got = integrate(lambda s, d=degree: s**d, UPPERS, "gauss_legendre", nodes)
        np.testing.assert_allclose(
            got, monomial_integral(degree, UPPERS), rtol=1e-12, err_msg=f"degree {degree}"
        )


@pytest.mark.parametrize("nodes", [1, 2, 3, 5, 8])
def test_gauss_legendre_misses_degree_2k_by_its_error_term(nodes):
    """For f = s^{2K}, f^{(2K)} = (2K)! is constant, so H - H_K is exactly the bound."""
    degree = 2 * nodes
    exact = monomial_integral(degree, UPPERS)
    got = integrate(lambda s: s**degree, UPPERS, "gauss_legendre", nodes)
    error = exact - got
    # relative error (K!)^4 / ((2K)!)^2 is 6e-9 at K = 8: far above rounding (1e-16)
    assert np.all(np.abs(error) > 1e-10 * exact)  # visibly not exact
    expected = [gl_error_constant(t, nodes) * math.factorial(degree) for t in UPPERS]
    np.testing.assert_allclose(error, expected, rtol=1e-6)  # positive: GL underestimates


@pytest.mark.parametrize("nodes", [2, 3, 7])
def test_trapezoid_closed_form(nodes):
    # exact for linear functions
    got = integrate(lambda s: 3.0 - 2.0 * s, UPPERS, "trapezoid", nodes)
    np.testing.assert_allclose(got, 3.0 * UPPERS - UPPERS**2, rtol=1e-13)
    # composite error for s^2: K-1 panels of width h, each -h^3 f''/12: -t^3 / (6 (K-1)^2)
    error = monomial_integral(2, UPPERS) - integrate(np.square, UPPERS, "trapezoid", nodes)
    np.testing.assert_allclose(error, -(UPPERS**3) / (6 * (nodes - 1) ** 2), rtol=1e-10)


@pytest.mark.parametrize("nodes", [1, 2, 7])
def test_midpoint_closed_form(nodes):
    got = integrate(lambda s: 3.0 - 2.0 * s, UPPERS, "midpoint", nodes)
    np.testing.assert_allclose(got, 3.0 * UPPERS - UPPERS**2, rtol=1e-13)
    # composite error for s^2: K panels of width h, each h^3 f''/24 = h^3/12: t^3 / (12 K^2)
    error = monomial_integral(2, UPPERS) - integrate(np.square, UPPERS, "midpoint", nodes)
    np.testing.assert_allclose(error, UPPERS**3 / (12 * nodes**2), rtol=1e-10)


@pytest.mark.parametrize(
    "rule,nodes,rtol",
    [("gauss_legendre", 10, 1e-13), ("trapezoid", 2000, 1e-6), ("midpoint", 2000, 1e-6)],
)
def test_integrate_exp_closed_form_with_batched_upper(rule, nodes, rtol):
    a = 1.3
    upper = np.array([[0.1, 0.5], [1.0, 2.0]])
    got = integrate(lambda s: np.exp(a * s), upper, rule, nodes)
    assert got.shape == upper.shape
    np.testing.assert_allclose(got, np.expm1(a * upper) / a, rtol=rtol)


def test_gauss_legendre_converges_much_faster_than_trapezoid():
    exact = np.expm1(2.0) / 2.0
    errors = {
        rule: abs(integrate(lambda s: np.exp(2 * s), np.array(1.0), rule, 6) - exact)
        for rule in RULES
    }
    assert errors["gauss_legendre"] < 1e-8 * errors["trapezoid"]
    assert errors["gauss_legendre"] < 1e-8 * errors["midpoint"]


@pytest.mark.parametrize("rule,nodes", [("gauss_legendre", 4), ("trapezoid", 3), ("midpoint", 5)])
def test_interval_points_cumsum_equals_integrate_from_zero(rule, nodes):
    def f(s):
        return np.exp(np.sin(3 * s)) + s

    grid = np.array([0.2, 0.25, 0.7, 1.5, 3.0])
    points, weights = interval_points(grid, rule, nodes)
    assert points.shape == weights.shape == (grid.size, nodes)
    # the first interval starts at 0, the others at the previous grid point
    left = np.concatenate([[0.0], grid[:-1]])
    assert np.all(points >= left[:, None]) and np.all(points <= grid[:, None])
    np.testing.assert_allclose(weights.sum(-1), np.diff(np.concatenate([[0.0], grid])), rtol=1e-13)
    cumulative = np.cumsum((f(points) * weights).sum(-1))
    # each piece is one K-node rule on [t_{j-1}, t_j]: compare with a fine reference
    # and, for the first point, with integrate() itself (the same single interval)
    assert cumulative[0] == pytest.approx(float(integrate(f, grid[0], rule, nodes)), rel=1e-14)
    reference = np.array([integrate(f, t, "gauss_legendre", 60) for t in grid])
    # the composite is at least as accurate as a single K-node rule on [0, t]
    single = integrate(f, grid, rule, nodes)
    assert np.all(np.abs(cumulative - reference) <= np.abs(single - reference) + 1e-12)


def test_interval_points_polynomial_is_exact_on_every_grid_point():
    """GL per interval is exact for a cubic, so the cumsum equals H at every grid point."""

    def f(s):
        return 1 + 2 * s - s**2 + 0.5 * s**3

    def exact(t):
        return t + t**2 - t**3 / 3 + t**4 / 8

    grid = np.array([0.1, 0.4, 0.45, 1.2, 2.0])
    points, weights = interval_points(grid, "gauss_legendre", 2)
    np.testing.assert_allclose(np.cumsum((f(points) * weights).sum(-1)), exact(grid), rtol=1e-13)


def test_interval_points_batch_of_grids():
    grids = np.array([[0.1, 0.5, 1.0], [0.3, 0.6, 2.0]])
    points, weights = interval_points(grids, "gauss_legendre", 6)
    assert points.shape == weights.shape == (2, 3, 6)
    for row in range(2):  # each grid of the batch is handled as if alone
        p, w = interval_points(grids[row], "gauss_legendre", 6)
        np.testing.assert_array_equal(points[row], p)
        np.testing.assert_array_equal(weights[row], w)
    cumulative = np.cumsum((np.exp(points) * weights).sum(-1), axis=-1)
    np.testing.assert_allclose(cumulative, np.expm1(grids), rtol=1e-10)


@pytest.mark.parametrize("nodes", [1, 2, 3, 4, 6, 10])
def test_error_bound_matches_factorial_formula(nodes):
    for upper, derivative in [(0.5, 1.0), (1.0, 3.0), (2.7, 0.2)]:
        assert gauss_legendre_error_bound(upper, nodes, derivative) == pytest.approx(
            gl_error_constant(upper, nodes) * derivative, rel=1e-12
        )


def test_error_bound_large_k_does_not_overflow():
    bounds = [gauss_legendre_error_bound(2.0, k, 1.0) for k in (80, 100, 170)]
    assert all(math.isfinite(b) and b >= 0 for b in bounds)
    assert bounds[0] >= bounds[1] >= bounds[2]


@pytest.mark.parametrize("a,upper", [(1.0, 1.0), (2.0, 1.0), (0.5, 3.0), (4.0, 0.5)])
def test_error_bound_holds_and_is_not_loose_for_exp(a, upper):
    """Bound with M = max|h^{(2K)}| = a^{2K} e^{a t} against the actual error of e^{a s}.

    The error is c_K ∫ P(s) a^{2K} e^{a s} ds with the Peano kernel P >= 0 (Gauss rules),
    symmetric about t/2 and of mass 1, so by Jensen the actual error is
    >= c_K a^{2K} e^{a t/2}: bound / error <= e^{a t/2}. It is >= 1 since e^{a s} <= e^{a t}.
    Measured: the ratio lies in [0.95, 1] · e^{a t/2}; 0.9 leaves room.
    """
    exact = np.expm1(a * upper) / a
    checked = 0
    for nodes in range(1, 9):
        error = exact - float(
            integrate(lambda s: np.exp(a * s), np.array(upper), "gauss_legendre", nodes)
        )
        if abs(error) < 1e-11 * exact:  # rounding, not truncation
            continue
        bound = gauss_legendre_error_bound(upper, nodes, a ** (2 * nodes) * math.exp(a * upper))
        assert error > 0
        ratio = bound / error
        assert 0.9 * math.exp(a * upper / 2) <= ratio <= math.exp(a * upper / 2) * (1 + 1e-6), (
            nodes,
            ratio,
        )
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize(
    "rule,nodes", [("gauss_legendre", 0), ("midpoint", 0), ("trapezoid", 1), ("simpson", 5)]
)
def test_unit_rule_rejects_invalid(rule, nodes):
    with pytest.raises(ValueError):
        unit_rule(rule, nodes)


def test_integrate_rejects_unknown_rule():
    with pytest.raises(ValueError, match="unknown quadrature rule"):
        integrate(np.exp, np.array([1.0]), "simpson", 4)


def test_error_bound_at_zero_upper_is_zero():
    assert gauss_legendre_error_bound(0.0, 3, 1.0) == 0.0


def test_error_bound_rejects_invalid_arguments():
    for args in [(1.0, 0, 1.0), (1.0, 3, -1.0)]:
        with pytest.raises(ValueError):
            gauss_legendre_error_bound(*args)


def test_log_error_slope_of_exponential_and_algebraic_decay():
    k = np.array([2, 3, 4, 8, 15, 30])
    # error 10^(1 - 0.7 K): slope -0.7 exactly; below the floor the points are ignored
    exponential = 10.0 ** (1 - 0.7 * k)
    assert log_error_slope(k, exponential, floor=1e-12) == pytest.approx(-0.7, rel=1e-12)
    assert log_error_slope(k[:3], exponential[:3]) == pytest.approx(-0.7, rel=1e-12)
    # error K^-2 (the trapezoid's order) is shallow in K: the LS slope of -2 log10 K
    algebraic = k**-2.0
    expected = np.polyfit(k, -2 * np.log10(k), 1)[0]
    assert log_error_slope(k, algebraic) == pytest.approx(expected, rel=1e-12)
    assert -0.2 < expected < 0
    assert math.isnan(log_error_slope(k, np.full(6, 1e-16)))  # all rounding


def test_edges_of_the_slope_the_bound_and_the_rules():
    """An error exactly at the floor is rounding (left out); two points above it make a
    slope; a zero derivative bounds the error by 0; bad arguments name themselves."""
    floor = 1e-12
    assert log_error_slope([2, 3, 4], [1e-2, 1e-4, floor], floor=floor) == pytest.approx(-2.0)
    assert np.isnan(log_error_slope([2, 3, 4], [1e-2, floor, floor], floor=floor))
    assert gauss_legendre_error_bound(1.0, 3, 0.0) == 0.0
    with pytest.raises(ValueError, match="^need nodes >= 1, upper >= 0 and max_abs_derivative"):
        gauss_legendre_error_bound(1.0, 3, -1.0)
    with pytest.raises(ValueError, match="^trapezoid needs more nodes than 1$"):
        unit_rule("trapezoid", 1)
