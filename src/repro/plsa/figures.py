"""PLSA figures, drawn from metrics JSON only, as PNG and PDF."""

from __future__ import annotations

from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np

from repro.common import plotting
from repro.common.cli import log_to_stderr, step_parser
from repro.common.io import read_json
from repro.common.plotting import apply_style, save_figure, ticks_at

LABELS = {
    "hard_label": "hard labels (StruRW)",
    "moment_matching": "moment matching λ=0 (Pair-Align)",
    "moment_matching_ridge": "moment matching, λ_w = {ridge:g} on probability moments",
    "plsa": "PLSA (pairwise EM)",
    "population": "CSBM's expected π (planted: sampling noise only)",
    "source": "π^S, no adaptation (planted floor)",
    "target_accuracy": "target accuracy ↑",
    "source_val_accuracy": "source val. accuracy ↑",
    "pi_l1_error": "π̂ᵀ L1 error ↓",
    "node_ece_before": "node ECE, T = 1 ↓",
    "node_ece_after": "node ECE, scaled ↓",
    "pair_ece_before": "pair ECE, T = 1 ↓",
    "pair_ece_after": "pair ECE, scaled ↓",
    "train_seconds": "train s",
}
HIGHER_IS_BETTER = {"target_accuracy", "source_val_accuracy"}


def _ridge(study: dict) -> float:
    """The study's λ_w (Pair-Align's published 1 by default), for the legend."""
    return study["provenance"]["config"]["ridge"]


def _by_size(rows: list[dict], key: str) -> dict[str, dict[int, list[float]]]:
    """estimator -> n -> values of rows[key][estimator] (one per repetition)."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for estimator, value in row[key].items():
            out[estimator][row["n"]].append(value)
    return out


def _panels(rows: list[dict]) -> list[tuple[str, float, list[dict]]]:
    keys = sorted({(r["shift"], r["sigma"]) for r in rows})
    return [(s, g, [r for r in rows if (r["shift"], r["sigma"]) == (s, g)]) for s, g in keys]


def _loglog_panels(
    study: dict, key: str, ylabel: str, title: str, png: str, pdf: str, with_slopes: bool
) -> None:
    apply_style()
    panels = _panels(study["rows"])
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(max(7, 4.6 * len(panels)), 6.4 if with_slopes else 4.4),
        squeeze=False,
        layout="constrained",
    )
    for ax, (shift, sigma, rows) in zip(axes[0], panels, strict=True):
        edges = {
            n: np.mean([r["edges"] for r in rows if r["n"] == n]) for n in {r["n"] for r in rows}
        }
        for estimator, by_n in _by_size(rows, key).items():
            sizes = sorted(by_n)
            x = [edges[n] for n in sizes]
            mean = np.array([np.mean(by_n[n]) for n in sizes])
            std = np.array([np.std(by_n[n]) for n in sizes])
            label = LABELS.get(estimator, estimator).format(ridge=_ridge(study))
            if with_slopes:
                label += f" (slope {study['slopes'][f'{shift}/{sigma:g}'][estimator]:.2f})"
            ax.errorbar(x, mean, yerr=std, marker="o", capsize=3, label=label)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="target edges |E| (directed)",
            ylabel=ylabel,
            title=f"{shift}, feature noise σ = {sigma:g}",
        )
        ticks_at(ax.xaxis, edges.values())
        ax.tick_params(axis="x", labelrotation=30)  # neighbouring sizes' labels stay apart
        if with_slopes:  # the slopes differ per panel: each panel's legend below it
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8)
    if not with_slopes:  # the same estimators in every panel: one legend below, clear of points
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=2)
    fig.suptitle(title)
    save_figure(fig, png, pdf)


def error_vs_edges(study: dict, png: str, pdf: str) -> None:
    _loglog_panels(
        study,
        "error",
        "L1 error of π̂ᵀ",
        "Estimator error vs number of target "
        "edges (mean ± sd over repetitions; slope of the log-log fit)",
        png,
        pdf,
        True,
    )


def runtime_vs_edges(study: dict, png: str, pdf: str) -> None:
    _loglog_panels(
        study,
        "seconds",
        "seconds per estimate",
        "Estimator run time vs number of "
        "target edges (one CPU thread; MM includes building its confusion matrix)",
        png,
        pdf,
        False,
    )


def error_vs_shift(study: dict, png: str, pdf: str) -> None:
    apply_style()
    rows = study["rows"]
    shifts = list(dict.fromkeys(r["shift"] for r in rows))
    estimators = list(rows[0]["error"])
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(estimators)
    for j, estimator in enumerate(estimators):
        values = [[r["error"][estimator] for r in rows if r["shift"] == s] for s in shifts]
        ax.bar(
            np.arange(len(shifts)) + j * width,
            [np.mean(v) for v in values],
            width,
            yerr=[np.std(v) for v in values],
            capsize=3,
            label=LABELS.get(estimator, estimator).format(ridge=_ridge(study)),
        )
    ax.set_xticks(np.arange(len(shifts)) + 0.4 - width / 2, shifts)
    sizes = sorted({r["n"] for r in rows})
    sigmas = sorted({r["sigma"] for r in rows})
    ax.set(
        ylabel="L1 error of π̂ᵀ",
        xlabel="shift type",
        title=f"Estimator error by shift type (n = {sizes}, σ = {sigmas}; mean ± sd)",
    )
    ax.legend(fontsize=7)
    save_figure(fig, png, pdf)


def accuracy_table(all_metrics: list[dict], metric_names: list[str], png: str, pdf: str) -> None:
    plotting.metrics_table(
        all_metrics,
        metric_names,
        png,
        pdf,
        labels=LABELS,
        higher_is_better=HIGHER_IS_BETTER,
    )


FIGURES = ("error_vs_edges", "runtime_vs_edges", "error_vs_shift", "accuracy_table")


def main(argv: list[str] | None = None) -> int:
    """Draw one PLSA figure from metrics JSON (rules plsa_figure_*)."""
    p = step_parser(main.__doc__, paper="plsa", required=False)
    p.add_argument("figure", choices=FIGURES)
    p.add_argument("png")
    p.add_argument("pdf")
    p.add_argument("metrics", nargs="+", help="a study's .json, or the data sets' metrics")
    p.add_argument("--table-metrics", nargs="+", default=["target_accuracy", "pi_l1_error"])
    args = p.parse_args(argv)
    log_to_stderr()
    documents = [read_json(path) for path in args.metrics]
    if args.figure == "accuracy_table":
        accuracy_table(documents, args.table_metrics, args.png, args.pdf)
    else:
        globals()[args.figure](documents[0], args.png, args.pdf)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
