"""Where a training job puts each method's files (import-light: evaluation and the rules read
them without importing torch).

A data set's methods are trained in jobs of ``methods_per_job`` methods each (all of them in
one job by default); job k writes to ``results/qsurv/runs/<dataset>/part<k>/``, and the
evaluation is told which folder holds each method (``qsurv_method_run_dirs`` in
rules/qsurv_helpers.smk).
"""

from __future__ import annotations

from pathlib import Path


def run_files(runs_dir: str | Path, method: str) -> dict[str, Path]:
    """``<runs_dir>/<method>.{pt,npz,json}``: weights, predictions, log."""
    runs = Path(runs_dir)
    return {
        "model": runs / f"{method}.pt",
        "predictions": runs / f"{method}.npz",
        "train_log": runs / f"{method}.json",
    }
