"""Merge rules with one signature: ``rule(problem, **params) -> Merged``.

Every rule sees the same :class:`MergeProblem`: the dense task updates ΔW_t (a dict of
parameter name → array per task), the calibration objective (``score``, higher is better),
and the calibration margins MaLoRA needs. Rules that tune a coefficient spend at most
``budget`` calls of ``score``; that count is returned, so equal budgets can be checked.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from repro.malora.merging import malora_alphas, merge

Delta = Mapping[str, np.ndarray]
log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class MergeProblem:
    deltas: Sequence[Delta]
    score: Callable[[Delta], float] | None = None  # calibration objective of a merged ΔW
    loss: Callable[[Delta], float] | None = None  # LoraHub's objective; default −score
    task_margins: np.ndarray | None = None  # m_t: adapter t on task t's calibration data
    base_margin: float | None = None  # m_0: the base model on the pre-training calibration data
    # per task, parameter name -> (B, A) with ΔW = B A (B carries the LoRA scaling): LoraHub
    # combines the factors, not the dense updates
    factors: Sequence[Mapping[str, tuple[np.ndarray, np.ndarray]]] | None = None
    seed: int = 0

    @property
    def names(self) -> list[str]:
        return list(self.deltas[0])


@dataclasses.dataclass(frozen=True)
class Merged:
    delta: dict[str, np.ndarray]
    alphas: np.ndarray | None = None  # per task, where the rule is a weighted sum
    evaluations: int = 0  # calls of the calibration objective
    tuned: dict | None = None  # the parameters a tuned rule chose on the calibration set


def _weighted(problem: MergeProblem, alphas) -> dict[str, np.ndarray]:
    zero = {n: np.zeros_like(v) for n, v in problem.deltas[0].items()}
    return merge(zero, list(problem.deltas), list(alphas))


def _flat(delta: Delta, names: list[str]) -> np.ndarray:
    return np.concatenate([np.asarray(delta[n]).ravel() for n in names])


def _unflat(vector: np.ndarray, like: Delta) -> dict[str, np.ndarray]:
    out, start = {}, 0
    for name, value in like.items():
        out[name] = vector[start : start + value.size].reshape(value.shape)
        start += value.size
    return out


def task_arithmetic(problem: MergeProblem, *, scale: float = 1.0) -> Merged:
    alphas = np.full(len(problem.deltas), float(scale))
    return Merged(_weighted(problem, alphas), alphas)


def average(problem: MergeProblem) -> Merged:
    return task_arithmetic(problem, scale=1.0 / len(problem.deltas))


def ties_vectors(vectors: np.ndarray, *, top_k: float, trim: bool = True) -> np.ndarray:
    """TIES on stacked task vectors (tasks × coordinates): trim each task to its top-k
    fraction by magnitude, elect a sign per coordinate by the summed mass, average the
    entries that agree with it (the disjoint mean)."""
    kept = vectors.copy()
    if trim:
        if not 0 < top_k <= 1:
            raise ValueError(f"top_k must lie in (0, 1], got {top_k}")
        keep = max(1, int(round(top_k * vectors.shape[1])))
        size = np.abs(vectors)
        # the keep-th largest magnitude per task (partition: linear time, no full sort)
        threshold = np.partition(size, size.shape[1] - keep, axis=1)[:, [size.shape[1] - keep]]
        kept[size < threshold] = 0.0
    sign = np.sign(kept.sum(axis=0))
    sign[sign == 0] = np.sign(sign.sum()) or 1.0  # ties go to the majority, as in TIES
    agree = (np.sign(kept) == sign) & (kept != 0)
    counts = agree.sum(axis=0)
    return np.where(counts > 0, (kept * agree).sum(axis=0) / np.maximum(counts, 1), 0.0)


def dare_vectors(vectors: np.ndarray, *, drop: float, rng: np.random.Generator) -> np.ndarray:
    """DARE: drop each coordinate with probability ``drop`` and rescale the rest by 1/(1−p)."""
    if not 0 <= drop < 1:
        raise ValueError(f"drop must lie in [0, 1), got {drop}")
    return vectors * (rng.random(vectors.shape) >= drop) / (1.0 - drop)


def _combine(vectors, inner: str, *, top_k, drop, scale, rng) -> np.ndarray:
    if inner == "ties":
        return scale * ties_vectors(vectors, top_k=top_k)
    if inner == "dare":
        return scale * dare_vectors(vectors, drop=drop, rng=rng).sum(axis=0)
    if inner == "dare_ties":
        return scale * ties_vectors(dare_vectors(vectors, drop=drop, rng=rng), top_k=1, trim=False)
    raise ValueError(f"inner merge must be ties, dare or dare_ties, got {inner!r}")


def sparse_merge(
    problem: MergeProblem,
    *,
    inner: str,
    top_k: float = 0.2,
    drop: float = 0.5,
    scale: float = 1.0,
) -> Merged:
    """TIES, DARE (+ sum) or DARE-TIES on the flattened task vectors (all layers at once)."""
    names = problem.names
    vectors = np.stack([_flat(d, names) for d in problem.deltas])
    rng = np.random.default_rng(problem.seed)
    merged = _combine(vectors, inner, top_k=top_k, drop=drop, scale=scale, rng=rng)
    return Merged(_unflat(merged, problem.deltas[0]))


def ties(problem: MergeProblem, *, top_k: float = 0.2, scale: float = 1.0) -> Merged:
    return sparse_merge(problem, inner="ties", top_k=top_k, scale=scale)


def dare(problem: MergeProblem, *, drop: float = 0.5, scale: float = 1.0) -> Merged:
    return sparse_merge(problem, inner="dare", drop=drop, scale=scale)


def dare_ties(problem: MergeProblem, *, drop: float = 0.5, scale: float = 1.0) -> Merged:
    return sparse_merge(problem, inner="dare_ties", drop=drop, scale=scale)


def knots_blocks(deltas: Sequence[Delta], tol: float = 1e-5):
    """Per layer, the joint SVD [ΔW_1 … ΔW_T] = U S [V_1ᵀ … V_Tᵀ]: the shared bases U and
    each task's block S V_tᵀ (so ΔW_t = U · block_t exactly)."""
    bases, blocks = {}, [dict() for _ in deltas]
    for name in deltas[0]:
        mats = [np.asarray(d[name]) for d in deltas]
        u, s, vt = np.linalg.svd(np.concatenate(mats, axis=1), full_matrices=False)
        support = s > tol * max(s.max(initial=0.0), 1.0)  # drop the null space of the concat
        bases[name] = u[:, support]
        for t, block in enumerate(np.split(s[support, None] * vt[support], len(mats), axis=1)):
            blocks[t][name] = block
    return bases, blocks


def knots(
    problem: MergeProblem,
    *,
    inner: str = "ties",
    top_k: float = 0.2,
    drop: float = 0.5,
    scale: float = 1.0,
) -> Merged:
    """KnOTS: the task blocks S V_tᵀ of the joint SVD (flattened over all layers) are merged
    by ``inner`` (ties, dare or dare_ties) and rebuilt as U · merged block."""
    bases, blocks = knots_blocks(problem.deltas)
    names = problem.names
    vectors = np.stack([_flat(b, names) for b in blocks])
    rng = np.random.default_rng(problem.seed)
    merged = _unflat(
        _combine(vectors, inner, top_k=top_k, drop=drop, scale=scale, rng=rng), blocks[0]
    )
    return Merged({n: bases[n] @ merged[n] for n in names})


def combine_factors(problem: MergeProblem, weights) -> dict[str, np.ndarray]:
    """LoraHub's merge: A = Σ_t w_t A_t and B = Σ_t w_t B_t per layer, ΔW = B A (cross terms
    B_i A_j included, as in LoraHub's weighted sum of the adapters' state dicts)."""
    out = {}
    for name in problem.names:
        b = sum(w * f[name][0] for w, f in zip(weights, problem.factors, strict=True))
        a = sum(w * f[name][1] for w, f in zip(weights, problem.factors, strict=True))
        out[name] = np.asarray(b @ a)
    return out


def lorahub(problem: MergeProblem, *, budget: int, l1: float = 0.05, bound: float = 1.5) -> Merged:
    """LoraHub (Huang et al.; its ``lorahub_learning``): nevergrad's NGOpt searches per-task
    weights w ∈ [−bound, bound]^T from w = 0 for ``budget`` calls of
    loss(merge(w)) + l1 · mean|w|. With the adapters' factors the merge combines A and B
    separately (:func:`combine_factors`; α is then not a weight of ΔW_t and is not reported);
    without them, Σ w_t ΔW_t."""
    import nevergrad as ng  # only LoraHub needs it (keeps the config check light)

    objective = problem.loss or (lambda delta: -problem.score(delta))
    n = len(problem.deltas)

    def merged(w):
        w = np.asarray(w, dtype=float)
        return _weighted(problem, w) if problem.factors is None else combine_factors(problem, w)

    calls = []

    def penalised(w):
        calls.append(1)
        return float(objective(merged(w))) + l1 * float(np.mean(np.abs(w)))

    weights = ng.p.Array(init=np.zeros(n), lower=-bound, upper=bound)
    weights.random_state = np.random.RandomState(problem.seed)
    optimiser = ng.optimizers.NGOpt(parametrization=weights, budget=budget)
    best = np.asarray(optimiser.minimize(penalised).value, dtype=float)
    alphas = best if problem.factors is None else None
    return Merged(merged(best), alphas, evaluations=len(calls), tuned={"weights": best.tolist()})


def malora(problem: MergeProblem, *, scale: float | None = None) -> Merged:
    """α_t = m_0 / m_t from the calibration margins (no objective calls). With ``scale`` (the
    tuned variant) only MaLoRA's direction is kept: α_t = scale · mean_s(m_s) / m_t, the scale
    chosen on the calibration grid like task arithmetic's (scale 1: the mean α is ≈ 1)."""
    if problem.task_margins is None:
        raise ValueError("malora needs the calibration task margins m_t")
    if scale is None:
        alphas = malora_alphas(problem.task_margins, problem.base_margin)
    else:
        alphas = float(scale) * malora_alphas(problem.task_margins, None)
    return Merged(_weighted(problem, alphas), alphas)


def _norm_rule(problem: MergeProblem, norm: str) -> Merged:
    norms = np.array(
        [sum(np.linalg.norm(np.asarray(v), ord=norm) for v in d.values()) for d in problem.deltas]
    )
    alphas = norms.mean() / norms  # α_t ∝ 1/‖ΔW_t‖, at task-arithmetic scale on average
    return Merged(_weighted(problem, alphas), alphas)


def norm_frobenius(problem: MergeProblem) -> Merged:
    return _norm_rule(problem, "fro")


def norm_nuclear(problem: MergeProblem) -> Merged:
    return _norm_rule(problem, "nuc")


RULES: dict[str, Callable[..., Merged]] = {
    "task_arithmetic": task_arithmetic,
    "average": average,
    "ties": ties,
    "dare": dare,
    "dare_ties": dare_ties,
    "knots": knots,
    "lorahub": lorahub,
    "malora": malora,
    "norm_frobenius": norm_frobenius,
    "norm_nuclear": norm_nuclear,
}


def failed_row(metrics, error) -> dict:
    """The metrics row of a rule that could not merge on this seed (NaN, with the reason)."""
    row = dict.fromkeys(metrics, float("nan"))
    row.update(alphas=None, calibration_evaluations=0, error=str(error))
    return row


def rule_row(spec: Mapping, problem: MergeProblem, scale_grid, evaluate, metrics) -> dict:
    """One configured rule ``{rule, params, tune}`` merged and evaluated (``evaluate`` maps
    the merged ΔW to a metrics dict). A MaLoRA rule meeting a calibration margin ≤ 0 has no
    equalising α on this seed: its row is NaN with the reason (brief §8.8), not a crash."""
    grid = tuning_grid(spec, scale_grid)
    try:
        merged = run_rule(spec["rule"], problem, spec.get("params"), grid=grid)
    except ValueError as err:
        if not spec["rule"].startswith("malora"):
            raise
        log.warning("%s: %s", spec["rule"], err)
        return failed_row(metrics, err)
    row = evaluate(merged.delta)
    row["alphas"] = None if merged.alphas is None else merged.alphas.tolist()
    row["calibration_evaluations"] = merged.evaluations
    if merged.tuned is not None:
        row["tuned"] = merged.tuned
    return row


def tuning_grid(spec: Mapping, scale_grid) -> dict | None:
    """A tuned rule's search grid: its own ``tune_grid`` (parameter → values, searched as a
    product, e.g. DARE's drop rate × scale) or the shared scale grid; None if untuned."""
    if not spec.get("tune", False):
        return None
    return dict(spec.get("tune_grid") or {"scale": list(scale_grid)})


def run_rule(
    rule: str,
    problem: MergeProblem,
    params: Mapping | None = None,
    scale_grid=None,
    *,
    grid: Mapping | None = None,
) -> Merged:
    """Run ``rule``; with ``scale_grid`` its ``scale`` (with ``grid``, every parameter the grid
    names, over the product of their values) is chosen on the calibration objective, one call
    per grid point, ties to the first, as task arithmetic's coefficient is."""
    if rule not in RULES:
        raise ValueError(f"unknown merge rule {rule!r}; choose from {sorted(RULES)}")
    params = dict(params or {})
    if grid is None and scale_grid is not None:
        grid = {"scale": list(scale_grid)}
    if grid is None:
        return RULES[rule](problem, **params)
    if problem.score is None:
        raise ValueError(f"tuning {rule} needs a calibration objective")
    names = list(grid)
    points = list(itertools.product(*(grid[n] for n in names)))
    best, best_score, best_point = None, -np.inf, None
    for point in points:
        chosen = {n: float(v) for n, v in zip(names, point, strict=True)}
        candidate = RULES[rule](problem, **{**params, **chosen})
        value = float(problem.score(candidate.delta))
        if value > best_score:  # NaN never wins
            best, best_score, best_point = candidate, value, chosen
    if best is None:
        raise ValueError(f"{rule}: no finite calibration score on the grid {dict(grid)}")
    return dataclasses.replace(best, evaluations=best.evaluations + len(points), tuned=best_point)
