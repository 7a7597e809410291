"""Mean and spread over seeds, in the layout every paper's metrics JSON uses."""

from __future__ import annotations

import numpy as np


def mean_std(rows: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Per key: the mean over rows and the sample standard deviation (0 for one row)."""
    values = {key: np.array([row[key] for row in rows], dtype=float) for key in rows[0]}
    return (
        {k: float(v.mean()) for k, v in values.items()},
        {k: float(v.std(ddof=1)) if len(v) > 1 else 0.0 for k, v in values.items()},
    )
