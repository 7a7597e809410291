"""QSurv figures, drawn from metrics JSON only (never from models), as PNG and PDF."""

from __future__ import annotations

import argparse
import json

import matplotlib.pyplot as plt
import numpy as np

from repro.common import plotting
from repro.common.plotting import apply_style, save_figure
from repro.qsurv import curves

RULE_LABELS = {"gauss_legendre": "Gauss-Legendre", "trapezoid": "trapezoid", "midpoint": "midpoint"}
METRIC_LABELS = {
    "ctd": "Ctd (Antolini) ↑",
    "ibs": "IBS (test KM) ↓",
    "ibll": "IBLL ↓",
    "cindex_ipcw": "C-index (official IPCW) ↑",
    "ibs_ipcw": "IBS (official IPCW) ↓",
    "hazard_l1": "hazard L1 ↓",
    "hazard_l1_forward": "hazard L1 (official def.) ↓",
    "survival_l1": "survival L1 ↓",
}


def quadrature_error(quadrature: dict, png: str, pdf: str) -> None:
    apply_style()
    families = quadrature["families"]
    fig, axes = plt.subplots(1, len(families), figsize=(4.2 * len(families), 3.4), squeeze=False)
    for ax, (family, rules) in zip(axes[0], families.items(), strict=True):
        for rule, by_k in rules.items():
            k = np.array([int(n) for n in by_k])
            median = np.array([v["median"] for v in by_k.values()])
            worst = np.array([v["max"] for v in by_k.values()])
            (line,) = ax.semilogy(
                k, np.maximum(median, 1e-17), "o-", label=f"{RULE_LABELS[rule]} (median)"
            )
            ax.semilogy(
                k,
                np.maximum(worst, 1e-17),
                "--",
                color=line.get_color(),
                alpha=0.6,
                label=f"{RULE_LABELS[rule]} (max)",
            )
        ax.set(
            title=f"{family} hazard",
            xlabel="nodes K (hazard evaluations)",
            ylabel="relative error of H(t | x)",
        )
    handles, labels = axes[0][0].get_legend_handles_labels()  # below the panels: no curve hidden
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 7))
    fig.suptitle("Cumulative-hazard error vs number of quadrature nodes")
    save_figure(fig, png, pdf)


CURVE_PANELS = (
    ("S", "marginal survival S̄(t)"),
    ("H", "marginal cumulative hazard H̄(t)"),
    ("h", "marginal hazard h̄(t)"),
    ("hazard_error", "mean |ĥ(t | x) − h(t | x)|"),
)
# hazard panels stop at this multiple of the largest true hazard: a discrete-time model's
# interval hazard is 0 between its cuts and a spike at each, which would flatten the rest
HAZARD_AXIS_CAP = 2.5


def _grid_of(run: dict):
    return run["time"]


def _midpoints_of(run: dict):
    return curves.midpoints(run["time"])


def _band(ax, runs, read, times_of, **style) -> None:
    band = curves.band_over_runs([times_of(r) for r in runs], [read(r) for r in runs])
    (line,) = ax.plot(band["time"], band["mean"], **style)
    ax.fill_between(
        band["time"], band["low"], band["high"], color=line.get_color(), alpha=0.2, lw=0
    )


def hazard_curves(metrics: dict, methods: list[str], png: str, pdf: str) -> None:
    """True against estimated marginal S, H and h, and the hazard error whose time average is
    ``hazard_l1``: mean over runs (line) and their range (band), every seed of the metrics."""
    apply_style()
    runs = metrics["curves"]["runs"]
    present = [m for m in methods if m in runs[0]["methods"]]
    fig, axes = plt.subplots(2, 2, figsize=(8.5, 6.6), layout="constrained")
    true_peak = max(max(r["truth"]["h"]) for r in runs)
    for ax, (key, label) in zip(axes.flat, CURVE_PANELS, strict=True):
        times_of = _grid_of if key in ("S", "H") else _midpoints_of
        if key != "hazard_error":
            _band(
                ax, runs, lambda r, k=key: r["truth"][k], times_of, color="k", lw=2.2, label="true"
            )
        for i, method in enumerate(present):
            entry = metrics["methods"][method]
            _band(
                ax,
                runs,
                lambda r, k=key, m=method: r["methods"][m][k],
                times_of,
                color=f"C{i}",
                lw=1.3,
                label=f"{method} (hazard L1 {entry['mean']['hazard_l1']:.4f}"
                f" ± {entry['std']['hazard_l1']:.4f})",
            )
        if key in ("h", "hazard_error"):
            ax.set_ylim(0, HAZARD_AXIS_CAP * true_peak)
        ax.set(xlabel="time t", ylabel=label)
    handles, labels = axes[0][0].get_legend_handles_labels()  # below the panels: no curve hidden
    fig.legend(handles, labels, loc="outside lower center", ncol=2)
    seeds = ", ".join(str(r["seed"]) for r in runs)
    fig.suptitle(
        f"{metrics['dataset']}: mean over {len(runs)} runs (seeds {seeds}), band = their range"
    )
    save_figure(fig, png, pdf)


HIGHER_IS_BETTER = {"ctd", "cindex_ipcw"}


def _trained(all_metrics: list[dict]) -> list[dict]:
    """The trained methods only: the reference arms (oracle, Kaplan-Meier) are left out, as
    the oracle would be the best of every column."""
    return [
        {
            **m,
            "methods": {
                k: v for k, v in m["methods"].items() if k not in m.get("reference_arms", ())
            },
        }
        for m in all_metrics
    ]


def metrics_table(all_metrics: list[dict], metric_names: list[str], png: str, pdf: str) -> None:
    """Tables 1/2 drawn for the paper (the report shows :func:`table_sections` as HTML)."""
    plotting.metrics_table(
        _trained(all_metrics),
        metric_names,
        png,
        pdf,
        labels=METRIC_LABELS,
        higher_is_better=HIGHER_IS_BETTER,
    )


def table_sections(all_metrics: list[dict], metrics: list[str]) -> tuple[str, list]:
    """Tables 1/2 as text: the title and one section per data set."""
    title = "QSurv Tables 1/2: the trained methods per data set, mean ± sd over seeds"
    return title, plotting.metrics_sections(
        _trained(all_metrics), metrics, labels=METRIC_LABELS, higher_is_better=HIGHER_IS_BETTER
    )


def ablation(all_metrics: list[dict], methods: list[str], metric: str, png: str, pdf: str) -> None:
    """Bars of one metric for the ablation arms, with every seed as a dot."""
    apply_style()
    fig, axes = plt.subplots(
        1, len(all_metrics), figsize=(4.6 * len(all_metrics), 3.4), squeeze=False
    )
    for ax, metrics in zip(axes[0], all_metrics, strict=True):
        present = [m for m in methods if m in metrics["methods"]]
        for i, method in enumerate(present):
            entry = metrics["methods"][method]
            ax.bar(i, entry["mean"][metric], yerr=entry["std"][metric], capsize=3, alpha=0.7)
            seeds = [row[metric] for row in entry["per_seed"]]
            ax.plot(np.full(len(seeds), i), seeds, "k.", ms=4)
        ax.set_xticks(range(len(present)), present, rotation=35, ha="right")
        ax.set(title=metrics["dataset"], ylabel=METRIC_LABELS.get(metric, metric))
    fig.suptitle("Ablation: time conditioning and quadrature rule (mean ± sd; dots are seeds)")
    save_figure(fig, png, pdf)


def training_time(all_metrics: list[dict], png: str, pdf: str) -> None:
    """Training wall time per method and seed on every data set (dots), mean per data set
    (bar tick), log scale: the brief's training-time figure, without SODEN."""
    apply_style()
    docs = _trained(all_metrics)
    methods = list(dict.fromkeys(m for d in docs for m in d["methods"]))
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    width = 0.8 / len(docs)
    for k, doc in enumerate(docs):
        offset = (k - (len(docs) - 1) / 2) * width
        for i, method in enumerate(methods):
            if method not in doc["methods"]:
                continue
            seconds = [row["train_seconds"] for row in doc["methods"][method]["per_seed"]]
            x = i + offset
            ax.plot(np.full(len(seconds), x), seconds, "o", ms=3, mfc="none", color=f"C{k}")
            ax.plot([x - width / 2, x + width / 2], [np.mean(seconds)] * 2, color=f"C{k}", lw=2)
        ax.plot([], [], "o-", color=f"C{k}", label=f"{doc['dataset']} ({len(doc['seeds'])} seeds)")
    ax.set_xticks(range(len(methods)), methods, rotation=30, ha="right")
    ax.set(yscale="log", ylabel="training wall time per seed (s, log)")
    plotting.plain_log_ticks(ax.yaxis)
    fig.legend(loc="outside right upper")
    fig.suptitle("Training time per method: every seed (circles) and their mean (bar)")
    save_figure(fig, png, pdf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "figure",
        choices=["quadrature_error", "hazard_curves", "metrics_table", "ablation", "training_time"],
    )
    parser.add_argument("png")
    parser.add_argument("pdf")
    parser.add_argument("metrics", nargs="+", help="metrics JSON file(s)")
    parser.add_argument("--methods", nargs="*", default=[], help="hazard_curves, ablation")
    parser.add_argument("--columns", nargs="*", default=["ctd", "ibs"], help="metrics_table")
    args = parser.parse_args()
    documents = []
    for path in args.metrics:
        with open(path) as handle:
            documents.append(json.load(handle))
    if args.figure == "quadrature_error":
        quadrature_error(documents[0], args.png, args.pdf)
    elif args.figure == "hazard_curves":
        hazard_curves(documents[0], args.methods, args.png, args.pdf)
    elif args.figure == "metrics_table":
        metrics_table(documents, args.columns, args.png, args.pdf)
    elif args.figure == "training_time":
        training_time(documents, args.png, args.pdf)
    else:
        ablation(documents, args.methods, "hazard_l1", args.png, args.pdf)


if __name__ == "__main__":
    main()
