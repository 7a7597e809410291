"""Margins against a naive loop, the statistics' limits and homogeneity, and bad input."""

import numpy as np
import pytest
import torch

from repro.malora import margin, normalised_margin, per_example_margins
from repro.malora.margins import summarise_margins


def naive_margins(logits, y):
    out = []
    for row, label in zip(logits, y, strict=True):
        others = [v for c, v in enumerate(row) if c != label]
        out.append(row[label] - max(others))
    return np.array(out)


def test_per_example_margins_match_a_loop_and_accept_tensors():
    rng = np.random.default_rng(0)
    logits, y = rng.normal(size=(50, 7)), rng.integers(0, 7, 50)
    np.testing.assert_allclose(per_example_margins(logits, y), naive_margins(logits, y))
    np.testing.assert_allclose(
        per_example_margins(torch.tensor(logits), torch.tensor(y)), naive_margins(logits, y)
    )


def test_statistics_min_quantile_and_softmin_limits():
    rng = np.random.default_rng(1)
    logits, y = rng.normal(size=(200, 5)), rng.integers(0, 5, 200)
    m = naive_margins(logits, y)
    assert margin(logits, y) == pytest.approx(m.min())
    assert margin(logits, y, stat="quantile", q=0.1) == pytest.approx(np.quantile(m, 0.1))
    soft = margin(logits, y, stat="softmin")
    assert m.min() < soft < m.mean()
    assert margin(logits, y, stat="softmin", tau=1e-4) == pytest.approx(m.min(), abs=1e-3)
    assert margin(logits, y, stat="softmin", tau=1e4) == pytest.approx(m.mean(), abs=1e-3)


@pytest.mark.parametrize(
    "stat", [{"stat": "min"}, {"stat": "quantile", "q": 0.05}, {"stat": "softmin"}]
)
def test_every_statistic_is_homogeneous(stat):
    """m(αW) = α m(W): what makes α_t = m_0/m_t equalise the merged margins."""
    rng = np.random.default_rng(2)
    logits, y = rng.normal(size=(80, 4)) + 3 * np.eye(4)[np.arange(80) % 4], np.arange(80) % 4
    assert margin(2.5 * logits, y, **stat) == pytest.approx(2.5 * margin(logits, y, **stat))


def test_normalised_margin_divides_by_the_frobenius_norm():
    rng = np.random.default_rng(3)
    w, x, y = rng.normal(size=(3, 6)), rng.normal(size=(30, 6)), rng.integers(0, 3, 30)
    assert normalised_margin(w, x, y) == pytest.approx(margin(x @ w.T, y) / np.linalg.norm(w))


@pytest.mark.parametrize(
    "logits, y, message",
    [
        (np.zeros((3, 1)), np.zeros(3, int), "classes"),
        (np.zeros((3, 2)), np.zeros(2, int), "labels must be"),
        (np.zeros((3, 2)), np.array([0, 1, 2]), "lie in"),
        (np.zeros((0, 2)), np.zeros(0, int), "empty"),
    ],
)
def test_bad_input_is_an_error_naming_the_problem(logits, y, message):
    with pytest.raises(ValueError, match=message):
        per_example_margins(logits, y)


def test_unknown_statistic_and_bad_quantile():
    with pytest.raises(ValueError, match="stat must be"):
        summarise_margins([1.0], stat="median")
    with pytest.raises(ValueError, match="q must"):
        summarise_margins([1.0], stat="quantile", q=2)
