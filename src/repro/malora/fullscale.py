"""The full-scale benchmarks' shared job: published LoRA adapters merged by every rule, α
from calibration draws of the held-out validation data, accuracy on the test data through per-task
heads (KnOTS's per-task setting). GPU jobs; CPU works for tests.

A benchmark is a *bench* (:class:`DeltaBench`): a model whose adapted weights are set to
W0 + ΔW on demand, its per-task logits and its tasks' calibration and test data. The KnOTS
CLIP vision benchmark (``clip_bench``) and the NLI benchmark (``nli_bench``) are the two
benches; both go through :func:`run_individual` and :func:`run_method` below.

Calibration draws play the role of seeds (paired across rules). The pre-training data is
not available, so MaLoRA's scale falls back to the mean task margin (brief §2.3, §8.4).
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import torch

from repro.malora.baselines import MergeProblem, rule_row
from repro.malora.margins import margin
from repro.malora.names import FULL_METRICS

log = logging.getLogger(__name__)
METRICS = FULL_METRICS


@dataclasses.dataclass(frozen=True)
class FullConfig:
    model_dir: str
    tasks: tuple  # clip_bench.FullTask or nli_bench.NliTask, one per adapter
    methods: dict
    scale_grid: tuple[float, ...]
    seeds: tuple[int, ...]  # calibration draws (papers.malora.full_scale.seeds)
    calibration_per_task: int = 32
    test_limit: int | None = None
    margin: dict = dataclasses.field(default_factory=lambda: {"stat": "quantile", "q": 0.05})
    batch_size: int = 256
    device: str = "auto"
    dtype: str = "float32"  # the model's weights (W0 + ΔW is formed in this type)


class DeltaBench:
    """What the benches share: per-task dense updates ``deltas`` (parameter name → tensor)
    and their LoRA ``factors`` (name → (scaling · B, A), which LoraHub combines separately),
    the base weights they apply to and :meth:`set_delta`. A bench also defines
    ``logits(task, inputs) -> tensor`` and ``data(seed) -> (calibration, test)``, each a list
    over tasks of (inputs, integer labels)."""

    def __init__(self, cfg: FullConfig, model, deltas, factors, device):
        self.cfg, self.model, self.deltas, self.device = cfg, model, deltas, device
        self.factors = factors
        params = dict(model.named_parameters())
        self.base = {n: params[n].detach().clone() for n in deltas[0]}

    @property
    def task_names(self) -> list[str]:
        return [t.name for t in self.cfg.tasks]

    @torch.no_grad()
    def set_delta(self, delta) -> None:
        params = dict(self.model.named_parameters())
        for name, value in self.base.items():
            update = delta.get(name)
            params[name].copy_(
                value
                if update is None
                else value + torch.as_tensor(update, device=self.device, dtype=value.dtype)
            )


def _accuracy_one(bench, t, data) -> float:
    inputs, y = data
    return float((bench.logits(t, inputs).argmax(1).numpy() == y).mean())


def _accuracy(bench, delta, data) -> list[float]:
    bench.set_delta(delta)
    return [_accuracy_one(bench, t, d) for t, d in enumerate(data)]


def _problem(bench, calib, seed) -> MergeProblem:
    """The rules' shared view of one calibration draw."""
    stat = bench.cfg.margin
    numpy_deltas = [{k: v.cpu().numpy() for k, v in d.items()} for d in bench.deltas]
    factors = [
        {k: (b.cpu().numpy(), a.cpu().numpy()) for k, (b, a) in f.items()} for f in bench.factors
    ]

    def task_margin(delta, t):
        bench.set_delta(delta)
        return margin(bench.logits(t, calib[t][0]), calib[t][1], **stat)

    def loss(delta):
        bench.set_delta(delta)
        losses = [
            torch.nn.functional.cross_entropy(bench.logits(t, x), torch.as_tensor(y)).item()
            for t, (x, y) in enumerate(calib)
        ]
        return float(np.mean(losses))

    return MergeProblem(
        numpy_deltas,
        score=lambda delta: float(np.mean(_accuracy(bench, delta, calib))),
        loss=loss,
        task_margins=np.array([task_margin(d, t) for t, d in enumerate(numpy_deltas)]),
        base_margin=None,  # no pre-training data: α_t = mean_s(m_s) / m_t
        factors=factors,
        seed=seed,
    )


def run_individual(bench) -> dict:
    """The base model and each adapter alone, on every task's test set (the normalisers)."""
    _, test = bench.data(0)
    own = []
    for t, delta in enumerate(bench.deltas):
        bench.set_delta(delta)
        own.append(_accuracy_one(bench, t, test[t]))
        log.info("%s alone: accuracy %.4f", bench.task_names[t], own[-1])
    return {"tasks": bench.task_names, "zero_shot": _accuracy(bench, {}, test), "individual": own}


def run_method(bench, method: str, individual: dict) -> dict:
    """One rule, every calibration draw: α, calibration calls, per-task test accuracy."""
    spec = bench.cfg.methods[method]
    rows = []
    for seed in bench.cfg.seeds:
        calib, test = bench.data(seed)

        def evaluate(delta, test=test):
            acc = _accuracy(bench, delta, test)
            return {
                "task_accuracy": acc,
                "mean_accuracy": float(np.mean(acc)),
                "normalised_accuracy": float(np.mean(np.array(acc) / individual["individual"])),
            }

        problem = _problem(bench, calib, seed)
        row = rule_row(spec, problem, bench.cfg.scale_grid, evaluate, METRICS)
        rows.append({"seed": seed, **row})
        log.info("%s seed %d: normalised accuracy %.4f", method, seed, row["normalised_accuracy"])
    return {"method": method, "tasks": bench.task_names, "runs": rows}
