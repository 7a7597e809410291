"""Per-perturbation quality: cell-eval's metrics on the log1p scale, plus energy distance.

Control references are fixed and recorded (the pitfall of brief §3): the true Δ uses the
real controls of the line, Δ̂ the model's own predicted controls on the same basal cells;
cell-eval's ``pearson_delta`` makes the same choice because the prediction AnnData holds
the predicted controls and the real AnnData the real ones.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from typing import TYPE_CHECKING

import anndata as ad
import numpy as np
import pandas as pd

from repro.st_reliability.data import CONTROL

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)
# per-perturbation metrics taken from cell-eval (the costly, unused ones are skipped)
CELL_EVAL_SKIP = ["clustering_agreement", "pearson_edistance"]


def energy_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """E|X−Y| − ½E|X−X'| − ½E|Y−Y'| over all pairs (V-statistic, uniform weights): the
    quantity geomloss's ``SamplesLoss("energy")`` (State's training loss) computes."""
    import torch  # the summaries that import this module need no torch

    xy = torch.cdist(x, y).mean((-2, -1))
    xx = torch.cdist(x, x).mean((-2, -1))
    yy = torch.cdist(y, y).mean((-2, -1))
    return xy - 0.5 * xx - 0.5 * yy


def pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of a with the same row of b (over genes)."""
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    denom = np.sqrt((a**2).sum(-1) * (b**2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (a * b).sum(-1) / denom, np.nan)


def as_anndata(cells: dict[str, np.ndarray], genes: list[str]) -> ad.AnnData:
    """Cells per perturbation name (controls under ``non-targeting``) as one AnnData."""
    names = [p for p, x in cells.items() for _ in range(len(x))]
    adata = ad.AnnData(np.vstack(list(cells.values())).astype(np.float32))
    adata.obs["pert_name"] = pd.Categorical(names)
    adata.obs_names = [f"c{i}" for i in range(adata.n_obs)]
    adata.var_names = genes
    return adata


def cell_eval_metrics(
    predicted: dict[str, np.ndarray],
    real: dict[str, np.ndarray],
    genes: list[str],
    *,
    de: bool,
) -> pd.DataFrame:
    """cell-eval's per-perturbation table (pearson_delta, mse_delta, discrimination scores
    and, with ``de``, DE overlap/precision@N) for one (encoder, line) group."""
    from cell_eval import MetricsEvaluator

    for name, cells in (("predicted", predicted), ("real", real)):
        if CONTROL not in cells:
            raise ValueError(f"{name} cells need controls under {CONTROL!r}")
        low = min(float(np.min(x)) for x in cells.values())
        if low < 0:
            raise ValueError(f"{name} cells have negative values ({low:g}); use log1p scale")
    with tempfile.TemporaryDirectory() as outdir, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = MetricsEvaluator(
            as_anndata(predicted, genes),
            as_anndata(real, genes),
            control_pert=CONTROL,
            pert_col="pert_name",
            num_threads=1,
            outdir=outdir,
            skip_de=not de,
        )
        results, _ = evaluator.compute(
            profile="full" if de else "anndata", skip_metrics=CELL_EVAL_SKIP, write_csv=False
        )
    return results.to_pandas().set_index("perturbation")
