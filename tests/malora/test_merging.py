"""The MaLoRA rule (with its fallback) and W0 + Σ α_t ΔW_t for arrays and state dicts."""

import numpy as np
import pytest
import torch

from repro.malora import malora_alphas, merge


def test_alphas_are_base_margin_over_task_margin():
    np.testing.assert_allclose(malora_alphas([2.0, 4.0, 8.0], 4.0), [2.0, 1.0, 0.5])


@pytest.mark.parametrize("base", [None, 0.0, -1.0, float("nan")])
def test_without_a_usable_base_margin_the_mean_task_margin_sets_the_scale(base):
    m = np.array([1.0, 3.0])
    alphas = malora_alphas(m, base)
    np.testing.assert_allclose(alphas, 2.0 / m)
    np.testing.assert_allclose(alphas * m, [2.0, 2.0])  # still equalised


@pytest.mark.parametrize("bad", [[1.0, 0.0], [1.0, -2.0], [np.inf, 1.0], []])
def test_no_equalising_alpha_for_non_positive_margins(bad):
    with pytest.raises(ValueError):
        malora_alphas(bad, 1.0)


def test_merge_of_arrays_and_tensors():
    rng = np.random.default_rng(0)
    base, d1, d2 = (rng.normal(size=(3, 4)) for _ in range(3))
    np.testing.assert_allclose(merge(base, [d1, d2], [0.5, 2.0]), base + 0.5 * d1 + 2.0 * d2)
    t = [torch.tensor(a) for a in (base, d1, d2)]
    torch.testing.assert_close(merge(t[0], t[1:], [0.5, 2.0]), t[0] + 0.5 * t[1] + 2.0 * t[2])


def test_merge_of_state_dicts_with_per_layer_alphas_leaves_the_inputs_alone():
    base = {"a": np.ones(2), "b": np.zeros(2), "frozen": np.full(2, 7.0)}
    deltas = [{"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}, {"a": np.array([0.0, 2.0])}]
    merged = merge(base, deltas, [{"a": 2.0, "b": 3.0}, 0.5])
    np.testing.assert_allclose(merged["a"], [3.0, 2.0])
    np.testing.assert_allclose(merged["b"], [0.0, 3.0])
    np.testing.assert_allclose(merged["frozen"], [7.0, 7.0])
    np.testing.assert_allclose(base["a"], [1.0, 1.0])


def test_merge_errors_name_the_key_or_shape():
    base = {"a": np.ones(2)}
    with pytest.raises(KeyError, match="'z'"):
        merge(base, [{"z": np.ones(2)}], [1.0])
    with pytest.raises(ValueError, match="shape"):
        merge(base, [{"a": np.ones(3)}], [1.0])
    with pytest.raises(ValueError, match="alphas"):
        merge(base, [{"a": np.ones(2)}], [1.0, 2.0])
    with pytest.raises(KeyError, match="per-layer"):
        merge(base, [{"a": np.ones(2)}], [{"b": 1.0}])


def test_fallback_scale_is_the_mean_of_three_unequal_margins():
    """Margins 1, 2, 6: mean 3 (the median would be 2), so α = 3, 1.5, 0.5."""
    np.testing.assert_allclose(malora_alphas([1.0, 2.0, 6.0], None), [3.0, 1.5, 0.5])


def test_a_base_margin_below_one_is_used_and_errors_name_the_problem():
    """m_0 = 0.5 is a usable pre-training margin (only ≤ 0 falls back): α = 0.5 / m."""
    np.testing.assert_allclose(malora_alphas([1.0, 2.0], 0.5), [0.5, 0.25])
    with pytest.raises(ValueError, match=r"^task_margins must be a non-empty vector, got shape"):
        malora_alphas(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match=r"got \[1\.0, -2\.0\]; use a robust statistic"):
        malora_alphas([1.0, -2.0], 1.0)
    with pytest.raises(ValueError, match=r"^delta of shape \(3,\) for \(2,\)$"):
        merge(np.ones(2), [np.ones(3)], [1.0])
