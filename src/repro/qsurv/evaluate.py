"""Evaluate every method on one data set from saved predictions (never from models).

For each seed: Ctd, IBS and IBLL (pycox, via :mod:`repro.qsurv.metrics`) and, beside them,
the official code's IPCW C-index and IBS (:mod:`repro.qsurv.ipcw`: censoring KM of the
training and validation data, "full" horizon; S(T_i) read from the prediction grid as a
right-continuous step). On synthetic data also the time-averaged L1 error of the survival
and hazard curves against the analytic truth. The hazard of *every* model is compared as
the average hazard over each grid interval, (H(t_{j+1}) − H(t_j)) / Δt, with H = −log S:
exact for the truth, the same construction for every model, and with no O(Δt) bias from a
one-sided difference. ``hazard_l1_forward`` is the official simulation's definition
instead: the forward difference of −log S against the true h at the left grid point.

Beside the trained methods, the document holds the reference arms of
:mod:`repro.qsurv.reference` (``reference_arms``: the training Kaplan-Meier curve and, on
synthetic data, the analytic truth), scored by the same code: the per-seed sanity check's
trivial model and the claims' controls.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging

import numpy as np

from repro.common.io import read_json, read_npz, write_json
from repro.common.provenance import RunRecorder
from repro.common.summary import mean_std
from repro.qsurv import reference
from repro.qsurv.curves import interval_hazard, run_curves
from repro.qsurv.ipcw import official_metrics, step_reader
from repro.qsurv.metrics import curve_l1, survival_metrics

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class EvaluateConfig:
    dataset: str
    methods: tuple[str, ...]
    metric_grid_points: int = 100  # points of the IBS/IBLL integration grid


def _seed_metrics(split, surv_metric, surv_truth, n_grid) -> dict[str, float]:
    out = survival_metrics(
        surv_metric, split["metric_grid"], split["t_test"], split["e_test"], n_grid=n_grid
    )
    out |= official_metrics(
        step_reader(surv_metric, split["metric_grid"]),
        np.concatenate([split["t_train"], split["t_val"]]),
        np.concatenate([split["e_train"], split["e_val"]]),
        split["t_test"],
        split["e_test"],
    )
    if "true_cumhaz" in split:
        grid = split["truth_grid"]
        true_surv = np.exp(-split["true_cumhaz"])
        mid = (grid[1:] + grid[:-1]) / 2
        out["survival_l1"] = curve_l1(surv_truth, true_surv, grid)
        out["hazard_l1"] = curve_l1(
            interval_hazard(surv_truth, grid), interval_hazard(true_surv, grid), mid
        )
        out["hazard_l1_forward"] = curve_l1(
            interval_hazard(surv_truth, grid), split["true_hazard"][:, :-1], grid[:-1]
        )
    return out


def _scored(data, pred, n_grid) -> list[dict[str, float]]:
    """One method's metrics row per seed, from its curves on the data set's grids."""
    rows = []
    for i in range(len(data["seeds"])):
        split = {k: v[i] for k, v in data.items() if k != "seeds"}
        rows.append(_seed_metrics(split, pred["surv_metric"][i], pred["surv_truth"][i], n_grid))
    return rows


def _entry(dataset: str, method: str, rows: list[dict[str, float]]) -> dict:
    mean, std = mean_std(rows)
    log.info(
        "%s / %s: %s",
        dataset,
        method,
        ", ".join(f"{k} {mean[k]:.4g} ± {std[k]:.2g}" for k in mean),
    )
    return {"per_seed": rows, "mean": mean, "std": std}


def evaluate(
    cfg: EvaluateConfig,
    data_path: str,
    prediction_paths: dict[str, str],
    train_log_paths: dict[str, str],
    output: str,
) -> dict:
    data = read_npz(data_path)
    seeds = [int(s) for s in data["seeds"]]
    predictions = {m: read_npz(prediction_paths[m]) for m in cfg.methods}
    result = {
        "dataset": cfg.dataset,
        "synthetic": "true_cumhaz" in data,
        "seeds": seeds,
        "methods": {},
    }
    with RunRecorder(config=dataclasses.asdict(cfg), seed=seeds) as run:
        for method in cfg.methods:
            pred = predictions[method]
            rows = _scored(data, pred, cfg.metric_grid_points)
            for i, row in enumerate(rows):
                row["train_seconds"] = float(pred["train_seconds"][i])
                row["epochs"] = float(pred["epochs"][i])
            training = read_json(train_log_paths[method])["provenance"]
            result["methods"][method] = _entry(cfg.dataset, method, rows)
            result["methods"][method]["training_provenance"] = training
        # scored like the methods, without training: the sanity check's trivial model and
        # the claims' controls (repro.qsurv.reference)
        references = reference.predictions(cfg.dataset, data)
        for arm, pred in references.items():
            rows = _scored(data, pred, cfg.metric_grid_points)
            result["methods"][arm] = _entry(cfg.dataset, arm, rows)
        result["reference_arms"] = list(references)
        if result["synthetic"]:
            # the marginal S, H, h and hazard-error curves of every run (repro.qsurv.curves)
            result["curves"] = run_curves(data, predictions)
    result["provenance"] = run.provenance()
    write_json(output, result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", help="results/qsurv/data/<dataset>.npz")
    parser.add_argument("output", help="metrics JSON to write")
    parser.add_argument("--dataset", required=True)
    parser.add_argument(
        "--method",
        nargs=3,
        action="append",
        required=True,
        metavar=("NAME", "PREDICTIONS", "TRAIN_LOG"),
        help="a method's predictions .npz and training log .json (repeat per method)",
    )
    parser.add_argument("--metric-grid-points", type=int, default=100)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    names = tuple(name for name, _, _ in args.method)
    cfg = EvaluateConfig(args.dataset, names, args.metric_grid_points)
    predictions = {name: path for name, path, _ in args.method}
    logs = {name: path for name, _, path in args.method}
    evaluate(cfg, args.data, predictions, logs, args.output)


if __name__ == "__main__":
    main()
