"""PLSA's results tables in docs/plsa.md (``repro.common.doctables``): the end-to-end
metrics, which the run holds only as numbers (``metrics/<dataset>.json``) and an image."""

from __future__ import annotations

from pathlib import Path

from repro.common.doctables import markdown
from repro.common.io import read_json
from repro.common.plotting import metrics_sections
from repro.plsa.figures import HIGHER_IS_BETTER, LABELS

# the accuracy table's columns with every calibration number (the figure shows the config's)
METRICS = [
    "target_accuracy",
    "pi_l1_error",
    "node_ece_before",
    "node_ece_after",
    "pair_ece_before",
    "pair_ece_after",
]


def end_to_end(paper_results: Path) -> str:
    """Mean ± sd over seeds per method, one table per end-to-end data set, best in bold."""
    documents = [read_json(p) for p in sorted((paper_results / "metrics").glob("*.json"))]
    per_dataset = [d for d in documents if "dataset" in d and "methods" in d]
    sections = metrics_sections(
        per_dataset, METRICS, labels=LABELS, higher_is_better=HIGHER_IS_BETTER
    )
    return markdown(sections)


TABLES = {"end_to_end": end_to_end}
