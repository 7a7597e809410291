"""One plotting style for every paper, and saving a figure as PNG (report) and PDF (paper)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # rules run without a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from repro.common import figure_lint, figure_tidy  # noqa: E402
from repro.common.io import write_json  # noqa: E402
from repro.common.tables import Section, mean_sd  # noqa: E402

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


def ticks_at(axis, values) -> None:
    """Ticks of a log ``axis`` at the data's own ``values``, written as plain numbers: a range
    within one or two decades otherwise gets colliding labels "2×10³3×10³" between decades."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    axis.set_major_locator(FixedLocator(sorted(set(values))))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def plain_log_ticks(axis) -> None:
    """Ticks of a log ``axis`` at 1, 2 and 5 × 10^k, written as plain numbers ("0.5", "20"),
    not "5×10⁻¹" or a lone "10⁰" where the data span less than a decade."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def seeds_and_interval(ax, per_seed, difference, y: float, colour, ms: float = 4) -> None:
    """One row of a forest plot at height ``y``: every seed's value (hollow circles) and, if
    given, a ``repro.common.stats.PairedDifference`` as its mean (diamond) and interval."""
    ax.plot(per_seed, np.full(len(per_seed), y), "o", mfc="none", mec=colour, ms=ms)
    if difference is not None:
        d = difference
        ax.errorbar(
            d.mean,
            y,
            xerr=[[d.mean - d.low], [d.high - d.mean]],
            fmt="D",
            color=colour,
            ms=ms,
            capsize=2,
        )


def lint_path(png: str | os.PathLike) -> Path:
    """Where ``save_figure`` writes the lint's findings of a PNG: ``<name>.lint.json`` beside it."""
    return Path(png).with_suffix(".lint.json")


def save_figure(fig: plt.Figure, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Tidy the layout (repro.common.figure_tidy), lint the figure as the report will show it
    and write the findings beside the PNG (repro.common.figure_lint), save both formats, then
    close the figure so long loops do not leak memory."""
    changed = figure_tidy.tidy(fig)
    findings = figure_lint.lint(fig, draw=changed)
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    write_json(lint_path(png), {"figure": str(png), "findings": findings})
    for path in (png, pdf):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # metadata without dates keeps the files byte-stable across reruns
        metadata = {"CreationDate": None} if str(path).endswith(".pdf") else {"Software": None}
        fig.savefig(path, bbox_inches="tight", metadata=metadata)
    plt.close(fig)


def metrics_sections(
    all_metrics: list[dict],
    metric_names: list[str],
    *,
    labels: dict[str, str],
    higher_is_better: set[str],
) -> list[Section]:
    """One table section per data set: mean ± sd over seeds of each metric per method, the
    best of each column in bold. ``all_metrics`` are metrics JSON documents: {dataset, seeds,
    methods: {m: {mean, std}}}; a metric some methods lack shows "–"."""
    sections = []
    for metrics in all_metrics:
        methods = metrics["methods"]
        present = {n for v in methods.values() for n in v["mean"]}
        names = [n for n in metric_names if n in present]
        rows, bold = [], set()
        for n_col, n in enumerate(names, start=1):
            values = {m: v["mean"][n] for m, v in methods.items() if n in v["mean"]}
            best = (max if n in higher_is_better else min)(values, key=values.get)
            bold.add((list(methods).index(best), n_col))
        for method, v in methods.items():
            cells = [
                mean_sd(v["mean"][n], v["std"][n], 4) if n in v["mean"] else "–" for n in names
            ]
            rows.append([method, *cells])
        heading = f"{metrics['dataset']} ({len(metrics['seeds'])} seeds)"
        header = ["method", *(labels.get(n, n) for n in names)]
        sections.append(Section(heading, header, rows, frozenset(bold)))
    return sections


def metrics_table(
    all_metrics: list[dict],
    metric_names: list[str],
    png: str,
    pdf: str,
    *,
    labels: dict[str, str],
    higher_is_better: set[str],
) -> None:
    """The sections of :func:`metrics_sections` drawn as tables, one per data set (the
    report shows the HTML table of ``repro.common.tables``; this image is for the paper)."""
    apply_style()
    sections = metrics_sections(
        all_metrics, metric_names, labels=labels, higher_is_better=higher_is_better
    )
    fig, axes = plt.subplots(
        len(sections),
        1,
        figsize=(9, 0.9 + 0.32 * sum(len(s.rows) + 2 for s in sections)),
        squeeze=False,
    )
    for ax, section in zip(axes[:, 0], sections, strict=True):
        table = ax.table(
            cellText=[row[1:] for row in section.rows],
            rowLabels=[row[0] for row in section.rows],
            colLabels=section.header[1:],
            loc="center",
        )
        for (r, c), cell in table.get_celld().items():  # header row 0, row labels column -1
            if (r - 1, c + 1) in section.bold:
                cell.set_text_props(fontweight="bold")
        table.scale(1, 1.2)
        ax.set_axis_off()
        ax.set_title(section.heading)
    save_figure(fig, png, pdf)
