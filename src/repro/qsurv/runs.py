"""Where a data set's training job puts each method's files (import-light: evaluation and the
rules read them without importing torch)."""

from __future__ import annotations

from pathlib import Path


def run_files(runs_dir: str | Path, method: str) -> dict[str, Path]:
    """``results/qsurv/runs/<dataset>/<method>.{pt,npz,json}``: weights, predictions, log."""
    runs = Path(runs_dir)
    return {
        "model": runs / f"{method}.pt",
        "predictions": runs / f"{method}.npz",
        "train_log": runs / f"{method}.json",
    }
