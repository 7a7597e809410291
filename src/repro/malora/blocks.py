"""Where the summary (``repro.malora.evaluate``) keeps a study's numbers: per-seed values
by seed, a λ sweep's block and a linear setting's block at one overlap."""

from __future__ import annotations

import numpy as np


def by_seed(seeds, values) -> dict:
    """seed -> value (None where the value is missing)."""
    return {int(s): (None if v is None else float(v)) for s, v in zip(seeds, values, strict=True)}


def sweep_block(summary, overlap) -> dict:
    return next(b for b in summary["sweep"]["overlaps"] if np.isclose(b["overlap"], overlap))


def linear_block(inputs, overlap, setting=None) -> dict:
    """The linear study's block at ``overlap`` in ``setting`` (default: the primary one)."""
    linear = inputs["summary"]["linear"]
    setting = setting or inputs["section"]["linear"]["primary_setting"]
    return next(b for b in linear["settings"][setting] if np.isclose(b["overlap"], overlap))
