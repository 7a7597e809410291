"""The linear theory setting of the brief (§6a): near-orthogonal tasks, W0, per-task LoRA.

Task t (t = 0 is pre-training) has a 16-dim latent z = μ_{t,c} + σ ξ and inputs
x = √(1−ε²) U_t z + ε U_sh R_t z: the U_t are mutually orthogonal, and the overlap ε copies
every task's signal into one shared subspace through a task-specific rotation R_t (ε = 0:
exactly orthogonal tasks). Labels live in a joint space, task t owning classes
t·k … t·k + k − 1; each model is trained on its own task's classes (a per-task head), as the
KnOTS adapters are. The same seed gives the same subspaces, means and noise draws at every ε,
so overlaps are compared on paired data.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.malora.convex import converge_lora, converge_ridge


@dataclasses.dataclass(frozen=True)
class LinearDesign:
    dim: int = 96
    subspace_dim: int = 16
    classes_per_task: int = 5
    n_tasks: int = 3  # fine-tuning tasks; task 0 (pre-training) comes on top
    mean_norm: float = 3.0
    train_noise: float = 0.3
    per_class: int = 40  # training examples per class at size factor 1
    pretrain_per_class: int = 40
    calib_per_class: int = 16
    test_per_class: int = 60

    def __post_init__(self):
        if (self.n_tasks + 2) * self.subspace_dim > self.dim:
            raise ValueError(
                f"dim {self.dim} cannot hold {self.n_tasks + 1} task subspaces and a shared one "
                f"of {self.subspace_dim} dims each"
            )

    @property
    def n_classes(self) -> int:
        return (self.n_tasks + 1) * self.classes_per_task


@dataclasses.dataclass(frozen=True)
class TaskData:
    x: np.ndarray  # examples × dim
    y: np.ndarray  # joint labels
    task: int


class LinearWorld:
    """Subspaces, rotations and class means drawn once per seed; samples on demand."""

    def __init__(self, design: LinearDesign, seed: int):
        self.design = design
        rng = np.random.default_rng([seed, 0])
        d, s = design.dim, design.subspace_dim
        basis = np.linalg.qr(rng.standard_normal((d, d)))[0]
        self.subspaces = [basis[:, t * s : (t + 1) * s] for t in range(design.n_tasks + 1)]
        self.shared = basis[:, (design.n_tasks + 1) * s : (design.n_tasks + 2) * s]
        self.rotations = [np.linalg.qr(rng.standard_normal((s, s)))[0] for _ in self.subspaces]
        means = rng.standard_normal((design.n_tasks + 1, design.classes_per_task, s))
        self.means = design.mean_norm * means / np.linalg.norm(means, axis=2, keepdims=True)
        self.seed = seed

    def latent(self, task: int, per_class: int, noise: float, stream: str):
        """Latent samples of one task; ``stream`` names an independent draw (train, calib…)."""
        rng = np.random.default_rng([self.seed, 1, task, sum(map(ord, stream)), per_class])
        k = self.design.classes_per_task
        local = np.repeat(np.arange(k), per_class)
        z = self.means[task][local] + noise * rng.standard_normal(
            (local.size, self.design.subspace_dim)
        )
        return z, task * k + local

    def embed(self, task: int, z: np.ndarray, overlap: float) -> np.ndarray:
        if not 0 <= overlap < 1:
            raise ValueError(f"overlap must lie in [0, 1), got {overlap}")
        own = self.subspaces[task] * np.sqrt(1 - overlap**2)
        shared = overlap * self.shared @ self.rotations[task]
        return z @ (own + shared).T

    def sample(self, task: int, per_class: int, noise: float, overlap: float, stream: str):
        z, y = self.latent(task, per_class, noise, stream)
        return TaskData(self.embed(task, z, overlap), y, task)


def task_rows(task: int, classes_per_task: int) -> slice:
    return slice(task * classes_per_task, (task + 1) * classes_per_task)


def _softmax_grad(logits: np.ndarray, local_y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of ``logits`` (n × k) and its gradient with respect to them."""
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    n = len(local_y)
    loss = -float(np.mean(np.log(p[np.arange(n), local_y] + 1e-300)))
    p[np.arange(n), local_y] -= 1.0
    return loss, p / n


def _step_size(x: np.ndarray) -> float:
    """1 / the curvature bound λ_max(XᵀX / n) of the mean cross-entropy in W."""
    return 1.0 / float(np.linalg.eigvalsh(x.T @ x / len(x)).max())


@dataclasses.dataclass(frozen=True)
class BaseRun:
    weight: np.ndarray  # all classes, zero outside task 0's rows
    gap: float  # bound on objective − optimum (‖∇‖² / (2 wd)); NaN without ``converge``


def train_base(
    data: TaskData, design: LinearDesign, *, weight_decay: float, steps: int, converge: bool = True
) -> BaseRun:
    """W0: full-rank gradient descent on task 0's head with weight decay (rows in S_0), then
    (``converge``) L-BFGS to the minimiser (strongly convex: its gradient certifies it)."""
    rows = task_rows(data.task, design.classes_per_task)
    local = data.y - rows.start
    w = np.zeros((design.classes_per_task, design.dim))
    lr = _step_size(data.x)
    for _ in range(steps):
        _, g = _softmax_grad(data.x @ w.T, local)
        w -= lr * (g.T @ data.x + weight_decay * w)
    gap = float("nan")
    if converge:
        w, gap = converge_ridge(data.x, local, w, weight_decay)
    full = np.zeros((design.n_classes, design.dim))
    full[rows] = w
    return BaseRun(full, gap)


@dataclasses.dataclass(frozen=True)
class LoraRun:
    delta: np.ndarray  # dense ΔW, all classes, zero outside the task's rows
    objective: list[float]  # training objective per gradient-descent step
    snapshots: dict[int, np.ndarray]  # ΔW after the requested numbers of steps
    final_objective: float = float("nan")  # after the L-BFGS stage
    gap: float = float("nan")  # duality gap: bound on final objective − optimum
    iterations: int = 0  # L-BFGS iterations
    factors: tuple[np.ndarray, np.ndarray] | None = None  # (B, A), ΔW = B A (all classes)


def train_lora(
    data: TaskData,
    base: np.ndarray,
    design: LinearDesign,
    *,
    rank: int,
    lam: float,
    steps: int,
    init_scale: float = 0.01,
    seed: int = 0,
    snapshot_steps=(),
    converge: bool = True,
) -> LoraRun:
    """ΔW = B A on task t's head rows, gradient descent on
    CE((W0 + BA) x) + (λ/2)(‖A‖² + ‖B‖²) with W0 frozen; B starts at 0 as in LoRA. With
    ``converge``, L-BFGS then runs the same objective to its minimum and the duality gap of
    the convex problem it equals (:mod:`repro.malora.convex`) certifies it.

    A starts small and random *inside the span of the task's inputs*: every gradient step
    stays there too, so at ε = 0 the adapter is exactly orthogonal to the other tasks, as the
    theory assumes (a random A in all of input space would add an interference that decays
    only at rate λ).
    """
    rows = task_rows(data.task, design.classes_per_task)
    local = data.y - rows.start
    rng = np.random.default_rng([seed, data.task, 7])
    _, sv, vt = np.linalg.svd(data.x, full_matrices=False)
    span = vt[sv > 1e-9 * sv.max()]
    z = data.x @ span.T  # inputs in an orthonormal basis of their span: A = a span
    a = init_scale * rng.standard_normal((rank, len(span)))
    b = np.zeros((design.classes_per_task, rank))
    offset = data.x @ base[rows].T
    lr = _step_size(z)  # the same curvature as in input space (span is orthonormal)
    trace, snapshots, wanted = [], {}, set(snapshot_steps)

    def dense():
        delta = np.zeros_like(base)
        delta[rows] = b @ a @ span
        return delta

    def factors():
        full = np.zeros((base.shape[0], rank))
        full[rows] = b
        return full, a @ span

    for step in range(1, steps + 1):
        loss, g = _softmax_grad(offset + z @ (b @ a).T, local)
        grad_w = g.T @ z  # classes × span
        trace.append(loss + 0.5 * lam * (np.sum(a * a) + np.sum(b * b)))
        grad_b = grad_w @ a.T + lam * b
        grad_a = b.T @ grad_w + lam * a
        b -= lr * grad_b
        a -= lr * grad_a
        if step in wanted:
            snapshots[step] = dense()
    if not converge:
        return LoraRun(dense(), trace, snapshots, factors=factors())
    done = converge_lora(z, offset, local, b, a, lam)
    b, a = done.b, done.a
    return LoraRun(dense(), trace, snapshots, done.objective, done.gap, done.iterations, factors())
