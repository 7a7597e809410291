"""One plotting style for every paper, and saving a figure as PNG (report) and PDF (paper)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # rules run without a display
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "pdf.fonttype": 42,  # editable text in the PDF
}


def apply_style() -> None:
    plt.rcParams.update(STYLE)


def save_figure(fig: plt.Figure, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Save both formats, then close the figure so long loops do not leak memory."""
    for path in (png, pdf):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # metadata without dates keeps the files byte-stable across reruns
        metadata = {"CreationDate": None} if str(path).endswith(".pdf") else {"Software": None}
        fig.savefig(path, bbox_inches="tight", metadata=metadata)
    plt.close(fig)
