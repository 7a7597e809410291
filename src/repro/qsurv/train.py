"""Train methods on one prepared data set for every seed; save models and predictions.

``train_methods`` trains several methods of a data set in one process (one workflow job per
data set and part of ``methods_per_job`` methods: the start-up is paid once per job), each
through the same per-method code as ``train``.

Predictions are survival curves of the test subjects on the data set's two grids (the
metric grid and, for synthetic data, the truth grid), so evaluation never needs a model.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from repro.common.device import select_device
from repro.common.io import read_npz, write_json, write_npz
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.qsurv import baselines, neural
from repro.qsurv.runs import run_files

log = logging.getLogger(__name__)

NEURAL_FAMILY = "neural_hazard"


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    method: str
    spec: dict[str, Any]  # config ``methods.<name>``: family and its own keys
    training: dict[str, Any]  # config ``training``: shared by every method
    device: str = "auto"
    threads: int = 1


def _fingerprint(cfg: Any, split: dict[str, np.ndarray]) -> str:
    """Identifies (config, training data): a resume checkpoint is reused only for the same."""
    digest = hashlib.sha256(json.dumps(dataclasses.asdict(cfg), sort_keys=True).encode())
    for key in ("x_train", "t_train", "e_train"):
        digest.update(np.ascontiguousarray(split[key]).tobytes())
    return digest.hexdigest()[:16]


def _train_one(cfg: TrainConfig, split, seed, device, checkpoints: Path):
    family = cfg.spec["family"]
    if family == NEURAL_FAMILY:
        keys = {f.name for f in dataclasses.fields(neural.NeuralConfig)}
        ncfg = neural.NeuralConfig(
            **{k: v for k, v in {**cfg.training, **cfg.spec}.items() if k in keys}
        )
        checkpoint = checkpoints / f"seed{seed}-{_fingerprint(ncfg, split)}.pt"
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        net, history = neural.fit(ncfg, split, seed=seed, device=device, checkpoint=checkpoint)

        def predict(x, grid):
            return neural.predict_survival(
                net, x, grid, t_max=history["t_max"], nodes=ncfg.eval_nodes, device=device
            )

        history["state_dict"] = {k: v.cpu() for k, v in net.state_dict().items()}
        return predict, history, checkpoint
    keys = {f.name for f in dataclasses.fields(baselines.BaselineConfig)}
    bcfg = baselines.BaselineConfig(
        **{k: v for k, v in {**cfg.training, **cfg.spec}.items() if k in keys}
    )
    predict, history = baselines.fit(bcfg, split, seed=seed, device=device)
    return predict, history, None


def _inject_fault_once(training: dict[str, Any], checkpoint_dir: str, what: str) -> None:
    """Config ``training.fail_once`` (tests only): fail the first attempt of each job.

    A marker in ``checkpoint_dir`` (the job's own: its first method's resume folder)
    remembers the failure, so the retry (local ``--retries`` or the SLURM profile's
    ``retries``) runs normally.
    """
    if not training.get("fail_once"):
        return
    marker = Path(checkpoint_dir) / "injected-fault"
    if not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        raise RuntimeError(f"injected fault (training.fail_once): {what} fails once")


def _train_method(
    cfg: TrainConfig,
    data: dict[str, np.ndarray],
    model_path: str,
    predictions_path: str,
    log_path: str,
    checkpoint_dir: str,
) -> list[Path]:
    """Every seed of one method; returns the resume checkpoints it is done with."""
    set_threads(cfg.threads)
    device = select_device(cfg.device)
    seeds = [int(s) for s in data["seeds"]]
    states, surv_metric, surv_truth, histories, finished = {}, [], [], [], []
    with RunRecorder(config=dataclasses.asdict(cfg), device=device, seed=seeds) as run:
        for i, seed in enumerate(seeds):
            split = {k: v[i] for k, v in data.items() if k != "seeds"}
            seed_everything(seed)
            predict, history, checkpoint = _train_one(
                cfg, split, seed, device, Path(checkpoint_dir)
            )
            set_threads(cfg.threads)  # pycox's numba code may have reset torch's threads
            states[f"seed{seed}"] = history.pop("state_dict", None) or {}
            surv_metric.append(predict(split["x_test"], split["metric_grid"]))
            if "true_cumhaz" in split:  # the truth grid matters only where a truth exists
                surv_truth.append(predict(split["x_test"], split["truth_grid"]))
            histories.append({k: v for k, v in history.items() if np.ndim(v) == 0})
            finished.append(checkpoint)
            log.info(
                "%s seed %d: %d epochs, %.1f s",
                cfg.method,
                seed,
                history["epochs"],
                history["train_seconds"],
            )
    torch.save(states, model_path)
    write_npz(
        predictions_path,
        surv_metric=np.stack(surv_metric),
        surv_truth=np.stack(surv_truth) if surv_truth else np.empty((len(seeds), 0, 0)),
        train_seconds=np.array([h["train_seconds"] for h in histories]),
        epochs=np.array([h["epochs"] for h in histories]),
    )
    write_json(
        log_path,
        {
            "method": cfg.method,
            "seeds": seeds,
            "history": histories,
            "provenance": run.provenance(),
        },
    )
    return [c for c in finished if c is not None]


def _remove(checkpoints: list[Path]) -> None:
    for checkpoint in checkpoints:  # resume state is only for interrupted runs
        checkpoint.unlink(missing_ok=True)


def train(
    cfg: TrainConfig,
    data_path: str,
    model_path: str,
    predictions_path: str,
    log_path: str,
    checkpoint_dir: str,
) -> None:
    """One method, every seed (the command line and the unit tests)."""
    _inject_fault_once(cfg.training, checkpoint_dir, cfg.method)
    data = read_npz(data_path)
    _remove(_train_method(cfg, data, model_path, predictions_path, log_path, checkpoint_dir))


def train_methods(
    methods: dict[str, dict[str, Any]],
    training: dict[str, Any],
    data_path: str,
    runs_dir: str,
    checkpoint_dir: str,
    *,
    device: str = "auto",
    threads: int = 1,
) -> None:
    """Methods (name -> config ``methods.<name>``) of one data set, one after another.

    Writes ``run_files(runs_dir, method)`` per method; method m resumes from
    ``checkpoint_dir/m`` (the same folder whichever job trains m, so jobs of other methods
    of the data set may share ``checkpoint_dir``). A method's finished checkpoints are kept
    until every method of the job is done, so a job killed in its third method resumes the
    first two without training them.
    """
    first = Path(checkpoint_dir) / next(iter(methods), "")
    _inject_fault_once(training, str(first), f"training {', '.join(methods)}")
    data = read_npz(data_path)
    Path(runs_dir).mkdir(parents=True, exist_ok=True)
    finished = []
    for i, (method, spec) in enumerate(methods.items(), start=1):
        log.info("method %d/%d: %s", i, len(methods), method)
        cfg = TrainConfig(
            method=method, spec=dict(spec), training=dict(training), device=device, threads=threads
        )
        files = {k: str(v) for k, v in run_files(runs_dir, method).items()}
        finished += _train_method(
            cfg,
            data,
            files["model"],
            files["predictions"],
            files["train_log"],
            str(Path(checkpoint_dir) / method),
        )
    _remove(finished)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data")
    parser.add_argument("out_prefix", help="writes PREFIX.pt, PREFIX.npz, PREFIX.json")
    parser.add_argument("--family", default=NEURAL_FAMILY)
    parser.add_argument("--conditioning", default="time_lora")
    parser.add_argument("--rule", default="gauss_legendre")
    parser.add_argument("--nodes", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    spec = {
        "family": args.family,
        "conditioning": args.conditioning,
        "rule": args.rule,
        "nodes": args.nodes,
    }
    cfg = TrainConfig(method="cli", spec=spec, training={"epochs": args.epochs}, device=args.device)
    prefix = args.out_prefix
    train(cfg, args.data, f"{prefix}.pt", f"{prefix}.npz", f"{prefix}.json", f"{prefix}.ckpt")


if __name__ == "__main__":
    main()
