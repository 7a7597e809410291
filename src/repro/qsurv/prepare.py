"""Prepare one data set for every seed: split, preprocess, and fix the evaluation grids.

The output .npz stacks each array over seeds (leading axis), so training and evaluation
read one file per data set. Synthetic scenarios also store the analytic truth (H and h) on
the truth grid. On real data the test times are clipped to the largest training or
validation time, as the official code does, and every model predicts S on one grid: 0, then
the smallest to the largest time of any split.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging

import numpy as np

from repro.common.io import write_npz
from repro.common.seeding import seed_everything
from repro.qsurv import simulate
from repro.qsurv.data import BUNDLED, SurvivalFrame, fit_transform_split, load_bundled, load_file

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class PrepareConfig:
    dataset: str
    source: str  # "synthetic", "bundled" or a file format ("deepsurv_h5", "rdatasets_csv")
    seeds: tuple[int, ...]
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
    n_samples: int = 2500  # synthetic only
    censoring_rate: float = 0.2  # synthetic only
    prediction_grid_points: int = 200  # grid on which every model predicts S(t | x)
    truth_grid_points: int = 50
    truth_quantile: float = 0.9


def prediction_grid(arrays: dict[str, np.ndarray], points: int) -> np.ndarray:
    """0, then ``points - 1`` equal steps from the smallest duration of any split to the
    largest. Curves are read on it as right-continuous steps; S(0) = 1 for every model, so an
    event before the grid's second point would be compared at t = 0, where every subject ties."""
    times = np.concatenate([arrays[f"t_{part}"] for part in ("train", "val", "test")])
    return np.concatenate([[0.0], np.linspace(times.min(), times.max(), points - 1)])


def _synthetic_frame(cfg: PrepareConfig, seed: int):
    import pandas as pd

    rng = seed_everything(seed)
    x, duration, event, scenario = simulate.sample(
        cfg.dataset, cfg.n_samples, cfg.censoring_rate, rng
    )
    return SurvivalFrame(pd.DataFrame({"x": x}), duration, event), scenario


def prepare(cfg: PrepareConfig, output: str, raw_file: str | None = None) -> dict[str, np.ndarray]:
    if cfg.source == "bundled" and cfg.dataset not in BUNDLED:
        raise ValueError(f"{cfg.dataset!r} is not a bundled data set; choose from {BUNDLED}")
    shared = None
    if cfg.source == "bundled":
        shared = load_bundled(cfg.dataset)
    elif cfg.source != "synthetic":
        if raw_file is None:
            raise ValueError(
                f"data set {cfg.dataset!r} (source {cfg.source}) needs its downloaded file"
            )
        shared = load_file(raw_file, name=cfg.dataset, file_format=cfg.source)
    per_seed = []
    for seed in cfg.seeds:
        frame, scenario = (shared, None) if shared is not None else _synthetic_frame(cfg, seed)
        arrays = fit_transform_split(frame, cfg.fractions, seed)
        t_seen = max(arrays["t_train"].max(), arrays["t_val"].max())
        if scenario is None:
            arrays["t_test"] = np.minimum(arrays["t_test"], t_seen)
        t_test = arrays["t_test"]
        arrays["metric_grid"] = prediction_grid(arrays, cfg.prediction_grid_points)
        arrays["truth_grid"] = np.linspace(
            arrays["t_train"].min(), np.quantile(t_test, cfg.truth_quantile), cfg.truth_grid_points
        )
        if scenario is not None:
            x_raw = frame.covariates["x"].to_numpy()[arrays["index_test"]]
            truth = simulate.Scenario(cfg.dataset, x_raw)
            arrays["x_test_raw"] = x_raw
            arrays["true_cumhaz"] = truth.cumulative_hazard(arrays["truth_grid"][None, :])
            arrays["true_hazard"] = truth.hazard(arrays["truth_grid"][None, :])
        per_seed.append(arrays)
        log.info(
            "%s seed %d: %d train / %d val / %d test, %.0f%% events",
            cfg.dataset,
            seed,
            len(arrays["t_train"]),
            len(arrays["t_val"]),
            len(t_test),
            100 * arrays["e_train"].mean(),
        )
    stacked = {key: np.stack([a[key] for a in per_seed]) for key in per_seed[0]}
    stacked["seeds"] = np.asarray(cfg.seeds)
    write_npz(output, **stacked)
    return stacked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset")
    parser.add_argument("output")
    parser.add_argument("--source", default="synthetic")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--raw-file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    prepare(PrepareConfig(args.dataset, args.source, tuple(args.seeds)), args.output, args.raw_file)


if __name__ == "__main__":
    main()
