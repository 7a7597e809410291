"""repro.plsa.csbm against the model's closed forms.

* Class counts realise the prior exactly (largest remainder); 'gss' has its target prior.
* Graphs are simple and undirected: both directions, no self loops, no duplicates.
* The empirical pair distribution of a large sample lies within 5 binomial standard
  deviations of n_a (n_b - [a=b]) M_ab (normalised), and is far from a wrong block.
* Every node pair of a block is an edge with probability B_ab (checked pair by pair on a
  tiny graph over many draws), so dedup and subsampling do not bias the sampler.
* Degrees match avg_degree * sum_b prior_b M_ab; the 'degree' shift doubles them and
  leaves the expected pair distribution unchanged; features are e_y + N(0, sigma^2).
"""

import numpy as np
import pytest

from repro.plsa.csbm import (
    SHIFTS,
    CSBMSpec,
    class_counts,
    expected_pair_distribution,
    pair_distribution,
    sample_csbm,
    shift_setting,
)


@pytest.mark.parametrize("n", [7, 100, 1001])
@pytest.mark.parametrize("prior", [(1 / 3, 1 / 3, 1 / 3), (0.5, 0.3, 0.2), (0.05, 0.9, 0.05)])
def test_class_counts_realise_the_prior(n, prior):
    counts = class_counts(n, prior)
    assert counts.sum() == n
    assert np.all(np.abs(counts - n * np.asarray(prior)) < 1)
    spec = CSBMSpec(n=n, prior=prior, block=((1.0,) * 3,) * 3, avg_degree=2.0)
    graph = sample_csbm(spec, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(np.bincount(graph.y, minlength=3), counts)


@pytest.mark.parametrize("shift", SHIFTS)
def test_graph_is_simple_and_undirected(shift):
    _, spec = shift_setting(shift, n=2000, sigma=0.55)
    graph = sample_csbm(spec, rng=np.random.default_rng(1))
    u, v = graph.edge_index
    assert graph.edge_index.dtype == np.int64 and graph.y.dtype == np.int64
    assert graph.x.dtype == np.float32 and graph.x.shape == (2000, 3)
    assert graph.num_classes == 3 and graph.edge_index.shape[1] > 0
    assert not np.any(u == v)
    keys = u * 2000 + v
    assert np.unique(keys).size == keys.size  # no duplicate directed edges
    np.testing.assert_array_equal(np.sort(keys), np.sort(v * 2000 + u))  # every edge both ways


def test_dense_small_graph_has_no_duplicates():
    # B = 25/30 * 0.8 ≈ 0.67 on the diagonal: most draws collide, the top-up loop must cope.
    spec = CSBMSpec(n=30, prior=(0.5, 0.5), block=((0.8, 0.4), (0.4, 0.8)), avg_degree=25.0)
    graph = sample_csbm(spec, rng=np.random.default_rng(2))
    keys = graph.edge_index[0] * 30 + graph.edge_index[1]
    assert np.unique(keys).size == keys.size and not np.any(
        graph.edge_index[0] == graph.edge_index[1]
    )


def test_every_node_pair_has_probability_b():
    """Over R draws of an 8-node graph, each pair's edge frequency ~ Binomial(R, B_ab)/R."""
    spec = CSBMSpec(n=8, prior=(0.5, 0.5), block=((0.9, 0.3), (0.3, 0.6)), avg_degree=4.0)
    b = spec.edge_probabilities()
    rng = np.random.default_rng(3)
    reps = 1500
    freq = np.zeros((8, 8))
    for _ in range(reps):
        graph = sample_csbm(spec, rng=rng)
        order = np.argsort(graph.y, kind="stable")  # relabel nodes by class: ranks 0-3, 4-7
        rank = np.empty(8, dtype=np.int64)
        rank[order] = np.arange(8)
        np.add.at(freq, (rank[graph.edge_index[0]], rank[graph.edge_index[1]]), 1.0)
    labels = np.repeat([0, 1], 4)
    expected = b[labels[:, None], labels[None, :]]
    off = ~np.eye(8, dtype=bool)
    sd = np.sqrt(expected * (1 - expected) / reps)
    assert np.all(np.abs(freq / reps - expected)[off] < 5 * sd[off])
    assert np.all(np.diag(freq) == 0)


@pytest.mark.parametrize("shift", SHIFTS)
def test_pair_distribution_approaches_the_expected_one(shift):
    """|pi_hat - pi| <= 5 sqrt(pi (1 - pi) / m), m undirected edges.

    Conditional on m, an undirected edge lands in cell {a, b} like a multinomial draw; an
    off-diagonal cell's directed share is half that of its unordered cell, so the
    unordered-cell binomial sd is an upper bound for every directed cell.
    """
    _, spec = shift_setting(shift, n=20000, sigma=0.55)
    graph = sample_csbm(spec, rng=np.random.default_rng(4))
    pi_hat = pair_distribution(graph.edge_index, graph.y, 3)
    pi = expected_pair_distribution(spec)
    m = graph.edge_index.shape[1] // 2
    tolerance = 5 * np.sqrt(pi * (1 - pi) / m)
    assert pi_hat.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(pi_hat, pi_hat.T, atol=1e-15)
    assert np.all(np.abs(pi_hat - pi) <= tolerance), np.abs(pi_hat - pi) / tolerance
    # the tolerance is tight enough to reject the wrong block
    wrong = expected_pair_distribution(
        shift_setting("css" if shift != "css" else "none", n=20000, sigma=0.55)[1]
    )
    assert np.any(np.abs(pi_hat - wrong) > tolerance)


def test_pair_distribution_counts_directed_edges():
    y = np.array([0, 1, 1, 2])
    und = np.array([[0, 1, 2], [1, 2, 3]])
    edge_index = np.concatenate([und, und[::-1]], axis=1)
    expected = np.array([[0, 1, 0], [1, 2, 1], [0, 1, 0]]) / 6
    np.testing.assert_allclose(pair_distribution(edge_index, y, 3), expected)


def test_shift_settings_and_degrees():
    rng = np.random.default_rng(5)
    source, gss = shift_setting("gss", n=30000, sigma=0.8)
    assert gss.prior == (0.5, 0.3, 0.2) and np.all(np.asarray(gss.block) == 0.5)
    assert source.prior == pytest.approx((1 / 3,) * 3) and source.sigma == gss.sigma == 0.8
    graph = sample_csbm(gss, rng=rng)
    np.testing.assert_array_equal(np.bincount(graph.y), [15000, 9000, 6000])
    assert shift_setting("none", n=100, sigma=0.5)[1] == shift_setting("none", n=100, sigma=0.5)[0]
    _, degree = shift_setting("degree", n=30000, sigma=0.55)
    np.testing.assert_allclose(
        expected_pair_distribution(degree), expected_pair_distribution(source)
    )
    # mean degree = avg_degree * sum_b prior_b M_ab: 4 (source), 8 ('degree'), 5 (M = 0.5);
    # the undirected edge count is a sum of independent Bernoullis: sd <= sqrt(mean)
    for spec, mean_degree in ((source, 4.0), (degree, 8.0), (gss, 5.0)):
        m = sample_csbm(spec, rng=rng).edge_index.shape[1] / 2
        assert abs(m - 30000 * mean_degree / 2) < 5 * np.sqrt(30000 * mean_degree / 2)
    with pytest.raises(ValueError, match="unknown shift"):
        shift_setting("cond", n=100, sigma=0.5)


def test_features_are_class_means_plus_gaussian_noise():
    spec = CSBMSpec(n=30000, prior=(0.2, 0.3, 0.5), block=((1.0,) * 3,) * 3, sigma=0.7)
    means = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 1.0]])
    graph = sample_csbm(spec, rng=np.random.default_rng(6), means=means)
    assert graph.x.shape == (30000, 2)
    for c in range(3):
        xc = graph.x[graph.y == c].astype(float)
        assert np.all(np.abs(xc.mean(0) - means[c]) < 5 * 0.7 / np.sqrt(len(xc)))
        assert np.all(np.abs(xc.std(0) - 0.7) < 0.03)
    default = sample_csbm(spec, rng=np.random.default_rng(6))
    assert default.x.shape == (30000, 3)


def test_same_seed_same_graph():
    spec = shift_setting("gss", n=500, sigma=0.55)[1]
    a, b = (sample_csbm(spec, rng=np.random.default_rng(7)) for _ in range(2))
    for field in ("x", "y", "edge_index"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
