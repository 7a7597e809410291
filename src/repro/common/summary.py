"""Mean and spread over seeds, in the layout every paper's metrics JSON uses."""

from __future__ import annotations

import numpy as np


def mean_std(rows: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Per key: the mean over rows and the sample standard deviation (0 for one row).

    Every row must report the same metrics: a metric missing from some seeds would
    otherwise be averaged over a different set of seeds than the others.
    """
    if not rows:
        raise ValueError("no rows to summarise")
    keys = set(rows[0])
    if any(set(row) != keys for row in rows):
        raise ValueError(f"rows report different metrics: {[sorted(row) for row in rows]}")
    values = {key: np.array([row[key] for row in rows], dtype=float) for key in rows[0]}
    return (
        {k: float(v.mean()) for k, v in values.items()},
        {k: float(v.std(ddof=1)) if len(v) > 1 else 0.0 for k, v in values.items()},
    )
