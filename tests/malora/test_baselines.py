"""Every merge rule against a naive reference or a known property, with one signature."""

import numpy as np
import pytest

from repro.malora import RULES, MergeProblem, run_rule
from repro.malora.baselines import combine_factors, dare_vectors, knots_blocks, ties_vectors


def _deltas(seed=0, tasks=3):
    rng = np.random.default_rng(seed)
    return [{"a": rng.normal(size=(4, 6)), "b": rng.normal(size=(3, 4))} for _ in range(tasks)]


def naive_ties(vectors, top_k):
    trimmed = []
    for v in vectors:
        keep = int(round(top_k * len(v)))
        threshold = np.sort(np.abs(v))[::-1][keep - 1]
        trimmed.append(np.where(np.abs(v) >= threshold, v, 0.0))
    trimmed = np.array(trimmed)
    out = np.zeros(vectors.shape[1])
    for j in range(vectors.shape[1]):
        sign = np.sign(trimmed[:, j].sum())
        agree = [t for t in trimmed[:, j] if t != 0 and np.sign(t) == sign]
        out[j] = np.mean(agree) if agree else 0.0
    return out


def test_ties_matches_a_per_coordinate_loop():
    vectors = np.random.default_rng(1).normal(size=(3, 40))
    np.testing.assert_allclose(ties_vectors(vectors, top_k=0.3), naive_ties(vectors, 0.3))


def test_ties_keeps_disjoint_supports_whole():
    vectors = np.array([[1.0, 0.0, -2.0, 0.0], [0.0, 3.0, 0.0, -4.0]])
    np.testing.assert_allclose(ties_vectors(vectors, top_k=1.0), vectors.sum(axis=0))


def test_dare_drops_the_asked_fraction_and_is_unbiased():
    vectors = np.ones((2, 20000))
    out = dare_vectors(vectors, drop=0.75, rng=np.random.default_rng(0))
    assert np.mean(out == 0) == pytest.approx(0.75, abs=0.01)
    assert out.mean() == pytest.approx(1.0, abs=0.03)
    assert set(np.unique(out)) == {0.0, 4.0}


def test_knots_blocks_rebuild_every_task_update():
    deltas = _deltas()
    bases, blocks = knots_blocks(deltas)
    for d, block in zip(deltas, blocks, strict=True):
        for name in d:
            np.testing.assert_allclose(bases[name] @ block[name], d[name], atol=1e-10)


def test_knots_without_dropping_is_task_arithmetic_and_ties_acts_on_the_blocks():
    deltas = _deltas()
    problem = MergeProblem(deltas)
    summed = run_rule("knots", problem, {"inner": "dare", "drop": 0.0}).delta
    for name in deltas[0]:
        np.testing.assert_allclose(summed[name], sum(d[name] for d in deltas), atol=1e-10)
    bases, blocks = knots_blocks(deltas)
    flat = np.stack([np.concatenate([b["a"].ravel(), b["b"].ravel()]) for b in blocks])
    merged = naive_ties(flat, 0.2)
    size = blocks[0]["a"].size
    ties = run_rule("knots", problem, {"inner": "ties", "top_k": 0.2}).delta
    np.testing.assert_allclose(
        ties["a"], bases["a"] @ merged[:size].reshape(blocks[0]["a"].shape), atol=1e-10
    )


def test_task_arithmetic_average_and_norm_rules():
    deltas = _deltas()
    problem = MergeProblem(deltas)
    ta = run_rule("task_arithmetic", problem)
    np.testing.assert_allclose(ta.delta["a"], sum(d["a"] for d in deltas))
    np.testing.assert_allclose(run_rule("average", problem).alphas, [1 / 3] * 3)
    for rule, order in (("norm_frobenius", "fro"), ("norm_nuclear", "nuc")):
        alphas = run_rule(rule, problem).alphas
        norms = [sum(np.linalg.norm(v, ord=order) for v in d.values()) for d in deltas]
        np.testing.assert_allclose(alphas * norms, np.mean(norms))  # α_t ‖ΔW_t‖ equal


def test_malora_rules_use_the_margins():
    deltas = _deltas(tasks=2)
    problem = MergeProblem(
        deltas,
        task_margins=np.array([2.0, 4.0]),
        base_margin=4.0,
    )
    np.testing.assert_allclose(run_rule("malora", problem).alphas, [2.0, 1.0])
    # the tuned variant keeps the direction 1/m_t at scale · mean(m) / m_t
    np.testing.assert_allclose(run_rule("malora", problem, {"scale": 0.5}).alphas, [0.75, 0.375])


def test_tuning_spends_the_grid_and_picks_the_best_scale():
    deltas = _deltas()
    target = 0.7 * sum(d["a"] for d in deltas)
    problem = MergeProblem(deltas, score=lambda d: -float(np.sum((d["a"] - target) ** 2)))
    grid = np.round(np.arange(0.1, 2.01, 0.1), 2)
    merged = run_rule("task_arithmetic", problem, scale_grid=grid)
    np.testing.assert_allclose(merged.alphas, [0.7] * 3)
    assert merged.evaluations == len(grid)
    nan_problem = MergeProblem(deltas, score=lambda d: float("nan"))
    with pytest.raises(ValueError, match="no finite"):
        run_rule("ties", nan_problem, scale_grid=grid)


def test_lorahub_finds_a_planted_optimum_within_its_budget():
    deltas = _deltas()
    truth = np.array([0.8, -0.3, 0.5])
    target = {k: sum(w * d[k] for w, d in zip(truth, deltas, strict=True)) for k in deltas[0]}

    def loss(delta):
        return float(sum(np.sum((delta[k] - target[k]) ** 2) for k in delta))

    merged = run_rule("lorahub", MergeProblem(deltas, loss=loss), {"budget": 100, "l1": 0.0})
    assert merged.evaluations == 100  # nevergrad spends exactly its budget
    np.testing.assert_allclose(merged.alphas, truth, atol=0.05)


def test_lorahub_combines_the_factors_separately():
    """With factors, LoraHub's merge is (Σ w B_t)(Σ w A_t), cross terms included, and it finds
    planted weights of that form; the dense sum Σ w ΔW_t is not what it builds."""
    rng = np.random.default_rng(4)
    factors = [{"a": (rng.normal(size=(4, 2)), rng.normal(size=(2, 6)))} for _ in range(2)]
    deltas = [{"a": b @ a} for f in factors for b, a in f.values()]
    truth = np.array([0.9, 0.4])
    problem = MergeProblem(deltas, factors=factors)
    target = combine_factors(problem, truth)["a"]
    assert not np.allclose(target, 0.9 * deltas[0]["a"] + 0.4 * deltas[1]["a"])

    def loss(delta):
        return float(np.sum((delta["a"] - target) ** 2))

    merged = run_rule("lorahub", MergeProblem(deltas, loss=loss, factors=factors), {"budget": 100})
    assert merged.alphas is None and merged.evaluations == 100
    w = np.array(merged.tuned["weights"])
    np.testing.assert_allclose(merged.delta["a"], combine_factors(problem, w)["a"])
    np.testing.assert_allclose(np.abs(w), truth, atol=0.05)  # (−w) gives the same product


def test_every_rule_has_the_one_signature():
    deltas = _deltas(tasks=2)
    problem = MergeProblem(
        deltas,
        score=lambda d: 0.0,
        task_margins=np.array([1.0, 2.0]),
        base_margin=1.0,
    )
    extra = {"lorahub": {"budget": 5}}
    for name in RULES:
        merged = run_rule(name, problem, extra.get(name))
        assert set(merged.delta) == {"a", "b"}
        assert merged.delta["a"].shape == (4, 6)
    with pytest.raises(ValueError, match="unknown merge rule"):
        run_rule("linear", problem)


def test_a_tuning_grid_searches_the_product_and_records_the_choice():
    """DARE's drop rate × scale: every point once, the planted best chosen and recorded."""
    deltas = _deltas()
    target = 0.5 * sum(d["a"] for d in deltas)

    def score(delta):
        return -float(np.sum((delta["a"] - target) ** 2))

    grid = {"drop": [0.0, 0.3, 0.6], "scale": [0.5, 1.0]}
    merged = run_rule("dare", MergeProblem(deltas, score=score, seed=3), grid=grid)
    assert merged.evaluations == 6
    assert merged.tuned == {"drop": 0.0, "scale": 0.5}  # no drop reproduces the target exactly
    np.testing.assert_allclose(merged.delta["a"], target)
