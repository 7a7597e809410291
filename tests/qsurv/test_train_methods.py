"""repro.qsurv.train.train_methods: every method of a data set in one job.

* It gives, method by method, the same weights, predictions and histories as one
  ``train.train`` per method (the per-method path it reuses), whatever the order.
* A job killed in its second method resumes: the first method's finished checkpoints are
  reloaded (no epoch retrained), the second resumes at its epoch, and the numbers equal an
  uninterrupted job's; the checkpoints go once every method is done.
* ``training.fail_once`` fails the job's first attempt only, each job's: the jobs of one
  data set (``methods_per_job``) share its checkpoint folder.
* Jobs of a part of the methods each (``methods_per_job``) give the numbers of one job.
"""

import dataclasses
import json

import numpy as np
import pytest
import torch

from repro.common.io import read_npz
from repro.common.parts import split_into_parts
from repro.qsurv import train
from repro.qsurv.runs import run_files
from tests.qsurv.test_neural import SMALL, Killed, assert_same_state, kill_after_checkpoint

NEURAL = {
    "family": train.NEURAL_FAMILY,
    **{k: v for k, v in dataclasses.asdict(SMALL).items() if k != "epochs"},
}
# spec keys override training keys: the two neural methods stop at different epochs
METHODS = {
    "qsurv": {**NEURAL, "epochs": 4},
    "coxph": {"family": "coxph"},
    "trapezoid": {**NEURAL, "rule": "trapezoid", "epochs": 6},
}
TRAINING = {"epochs": 6}


def run_methods(data, out, methods=METHODS, training=TRAINING):
    train.train_methods(
        methods, training, str(data), str(out / "runs"), str(out / "ckpt"), device="cpu"
    )
    return out / "runs"


def outputs(files: dict) -> tuple[dict, dict, dict]:
    log = json.loads(files["train_log"].read_text())
    for h in log["history"]:
        h.pop("train_seconds")
    return read_npz(files["predictions"]), torch.load(files["model"], weights_only=True), log


def assert_same_run(a: dict, b: dict) -> None:
    (pred_a, model_a, log_a), (pred_b, model_b, log_b) = outputs(a), outputs(b)
    for key in ("surv_metric", "surv_truth", "epochs"):
        np.testing.assert_array_equal(pred_a[key], pred_b[key])
    assert model_a.keys() == model_b.keys()
    for seed in model_a:
        assert_same_state(model_a[seed], model_b[seed])
    assert (log_a["method"], log_a["seeds"], log_a["history"]) == (
        log_b["method"],
        log_b["seeds"],
        log_b["history"],
    )


def test_train_methods_equals_one_train_per_method(tiny_synthetic, tmp_path):
    runs = run_methods(tiny_synthetic, tmp_path / "merged")
    assert sorted(p.name for p in runs.iterdir()) == sorted(
        f"{m}.{ext}" for m in METHODS for ext in ("pt", "npz", "json")
    )
    for method, spec in reversed(METHODS.items()):  # the other order, one call each
        single = tmp_path / "single" / method
        single.mkdir(parents=True)
        cfg = train.TrainConfig(method=method, spec=spec, training=TRAINING, device="cpu")
        files = run_files(single, method)
        train.train(
            cfg,
            str(tiny_synthetic),
            str(files["model"]),
            str(files["predictions"]),
            str(files["train_log"]),
            str(single / "ckpt"),
        )
        assert_same_run(run_files(runs, method), files)
    epochs = outputs(run_files(runs, "trapezoid"))[0]["epochs"]
    assert epochs.tolist() == [6] and outputs(run_files(runs, "qsurv"))[0]["epochs"].tolist() == [4]
    assert not list((tmp_path / "merged" / "ckpt").rglob("seed*.pt"))


def test_killed_in_the_second_method_resumes_and_matches(
    tiny_synthetic, tmp_path, caplog, monkeypatch
):
    methods = {"qsurv": METHODS["qsurv"], "trapezoid": METHODS["trapezoid"]}
    full = run_methods(tiny_synthetic, tmp_path / "full", methods)
    with monkeypatch.context() as patch:
        kill_after_checkpoint(patch, 5)  # only the 6-epoch method reaches epoch 5
        with pytest.raises(Killed):
            run_methods(tiny_synthetic, tmp_path / "resumed", methods)
    kept = sorted(p.parent.name for p in (tmp_path / "resumed" / "ckpt").rglob("seed*.pt"))
    assert kept == ["qsurv", "trapezoid"]  # the finished method's checkpoint is still there
    with caplog.at_level("INFO", logger="repro.qsurv"):
        resumed = run_methods(tiny_synthetic, tmp_path / "resumed", methods)
    resumes = [r.getMessage() for r in caplog.records if "resuming" in r.getMessage()]
    assert len(resumes) == 2
    assert "/qsurv/seed3-" in resumes[0] and resumes[0].endswith("at epoch 4")  # no retraining
    assert "/trapezoid/seed3-" in resumes[1] and resumes[1].endswith("at epoch 5")
    assert "method 1/2: qsurv" in caplog.text and "method 2/2: trapezoid" in caplog.text
    for method in methods:
        assert_same_run(run_files(resumed, method), run_files(full, method))
    assert not list((tmp_path / "resumed" / "ckpt").rglob("seed*.pt"))


def test_fail_once_fails_the_first_attempt_only(tiny_synthetic, tmp_path):
    methods = {"coxph": METHODS["coxph"]}
    training = {**TRAINING, "fail_once": True}
    with pytest.raises(RuntimeError, match="injected fault"):
        run_methods(tiny_synthetic, tmp_path, methods, training)
    assert (tmp_path / "ckpt" / "coxph" / "injected-fault").exists()
    assert not (tmp_path / "runs").exists()
    runs = run_methods(tiny_synthetic, tmp_path, methods, training)
    assert outputs(run_files(runs, "coxph"))[0]["surv_metric"].shape[0] == 1


def _run_part(data, out, part, methods, training):
    train.train_methods(
        {m: methods[m] for m in part}, training, str(data), str(out / "runs" / part[0]),
        str(out / "ckpt"), device="cpu",
    )  # fmt: skip
    return out / "runs" / part[0]


def test_each_job_of_a_data_set_fails_once(tiny_synthetic, tmp_path):
    """Two jobs (one method each) share the data set's checkpoint folder: both fail on their
    first attempt, not only the first to start, and both succeed on their retry."""
    methods = {"coxph": METHODS["coxph"], "qsurv": {**METHODS["qsurv"], "epochs": 1}}
    training = {**TRAINING, "fail_once": True}
    for part in split_into_parts(methods, 1):
        with pytest.raises(RuntimeError, match=f"injected fault.*training {part[0]} fails"):
            _run_part(tiny_synthetic, tmp_path, part, methods, training)
    for part in split_into_parts(methods, 1):
        runs = _run_part(tiny_synthetic, tmp_path, part, methods, training)
        assert sorted(p.name for p in runs.iterdir()) == [
            f"{part[0]}.{e}" for e in "json npz pt".split()
        ]


@pytest.mark.parametrize("methods_per_job", [1, 2])
def test_jobs_of_some_methods_each_equal_one_job(tiny_synthetic, tmp_path, methods_per_job):
    """methods_per_job splits a data set's methods into jobs; they share its checkpoint
    folder and give every method the files of one job for all (the embedded default)."""
    whole = run_methods(tiny_synthetic, tmp_path / "whole")
    for part in split_into_parts(METHODS, methods_per_job):
        runs = _run_part(tiny_synthetic, tmp_path / "parts", part, METHODS, TRAINING)
        assert sorted(p.stem for p in runs.glob("*.npz")) == sorted(part)
        for method in part:
            assert_same_run(run_files(runs, method), run_files(whole, method))
    assert not list((tmp_path / "parts" / "ckpt").rglob("seed*.pt"))
