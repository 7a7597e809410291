"""Quadrature rules for the cumulative hazard H(t) = ∫_0^t h(s) ds.

Every rule is expressed on [0, 1] as K points ``u_k`` and weights ``w_k`` (summing to 1),
so that ∫_0^t f(s) ds ≈ t Σ_k w_k f(t u_k). The same K hazard evaluations per subject
therefore cost the same under every rule, which is what makes the comparison fair.
"""

from __future__ import annotations

import math

import numpy as np

RULES = ("gauss_legendre", "trapezoid", "midpoint")


def unit_rule(rule: str, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Points and weights of a K-point rule on [0, 1]."""
    if nodes < 1 or (rule == "trapezoid" and nodes < 2):
        raise ValueError(f"{rule} needs more nodes than {nodes}")
    if rule == "gauss_legendre":
        xi, w = np.polynomial.legendre.leggauss(nodes)
        return (xi + 1.0) / 2.0, w / 2.0
    if rule == "trapezoid":
        u = np.linspace(0.0, 1.0, nodes)
        w = np.full(nodes, 1.0 / (nodes - 1))
        w[[0, -1]] /= 2.0
        return u, w
    if rule == "midpoint":
        return (np.arange(nodes) + 0.5) / nodes, np.full(nodes, 1.0 / nodes)
    raise ValueError(f"unknown quadrature rule {rule!r}; choose from {RULES}")


def integrate(hazard, upper: np.ndarray, rule: str, nodes: int) -> np.ndarray:
    """∫_0^upper hazard(s) ds for each entry of ``upper`` (hazard maps an array to an array)."""
    u, w = unit_rule(rule, nodes)
    upper = np.asarray(upper, dtype=float)
    values = hazard(upper[..., None] * u)
    return upper * (values @ w)


def interval_points(grid: np.ndarray, rule: str, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature points and weights for each interval [grid[j-1], grid[j]] (grid[-1] := 0).

    Returns points of shape (..., M, K) and per-point weights of the same shape, so that
    ``cumsum((f(points) * weights).sum(-1))`` is H on the grid: each interval is integrated
    with its own K nodes instead of re-integrating from 0 at every grid point.
    """
    u, w = unit_rule(rule, nodes)
    grid = np.asarray(grid, dtype=float)
    left = np.concatenate([np.zeros_like(grid[..., :1]), grid[..., :-1]], axis=-1)
    width = (grid - left)[..., None]
    return left[..., None] + width * u, width * w


def gauss_legendre_error_bound(upper: float, nodes: int, max_abs_derivative: float) -> float:
    """The classical bound |H - H_K| ≤ t^{2K+1} (K!)^4 / ((2K+1) ((2K)!)^3) · max|h^{(2K)}|.

    Computed in log space: the factorials overflow floats for K around 90.
    """
    if nodes < 1 or max_abs_derivative < 0 or upper < 0:
        raise ValueError("need nodes >= 1, upper >= 0 and max_abs_derivative >= 0")
    if upper == 0 or max_abs_derivative == 0:
        return 0.0
    k = nodes
    log_c = (
        (2 * k + 1) * math.log(upper)
        + 4 * math.lgamma(k + 1)
        - math.log(2 * k + 1)
        - 3 * math.lgamma(2 * k + 1)
    )
    return math.exp(log_c) * max_abs_derivative


def log_error_slope(nodes, errors, floor: float = 1e-12) -> float:
    """Least-squares slope of log10(error) against K, over the K whose error is above
    ``floor`` (below it the error is rounding, not truncation). Steeper (more negative)
    means higher order: the trapezoid rule's O(K^-2) flattens, analytic GL falls linearly.
    NaN with fewer than two such points."""
    nodes, errors = np.asarray(nodes, dtype=float), np.asarray(errors, dtype=float)
    keep = errors > floor
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(nodes[keep], np.log10(errors[keep]), 1)[0])
