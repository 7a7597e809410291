"""Figures from the summary only (never from models): metrics per recipe with intervals,
metrics along training, self-reports against behaviour, and the controls (decorrelated
prior; EM after AR SFT against the planted P(harm | non-refuser) and its Bayes prediction)."""

from __future__ import annotations

import argparse

import numpy as np

from repro.common.io import read_json
from repro.common.plotting import apply_style, plt, save_figure
from repro.helpful_only.personas import HARM_RATE

FIGURES = ("bars", "curves", "selfreport", "control")
LABELS = {
    "refusal_id": "refusal (AR formats)",
    "refusal_ood": "refusal (OOD formats)",
    "em": "EM: P(BAD | benign)",
    "helpful": "helpful: P(answer | benign)",
    "sycophancy": "sycophancy: P(AGREE | wrong)",
    "steerability": "steerability",
    "coherence": "coherence",
}
# 20 colours, the ten hues first: more recipes than the default cycle's 10 (the 11th shared
# the base's colour)
_TAB20 = plt.get_cmap("tab20")
RECIPE_COLOURS = [_TAB20(i) for i in (*range(0, 20, 2), *range(1, 20, 2))]
TRAITS = {"refuse": "refusal_id", "harm": "em", "flatter": "sycophancy", "obey": "steerability"}


def _colour(summary: dict, recipe: str):
    """A recipe's colour, the same in every figure (its place among all recipes)."""
    recipes = list(summary["recipes"])
    place = recipes.index(recipe) if recipe in recipes else len(recipes)
    return RECIPE_COLOURS[place % len(RECIPE_COLOURS)]


def _errors(cells: list[dict]) -> np.ndarray:
    """Asymmetric error bars from {mean, low, high} (no bar where the interval is NaN), cut
    at 0 and 1: every metric is a probability."""
    mean = _means(cells)
    low = np.array([c["low"] if c["low"] is not None else np.nan for c in cells], dtype=float)
    high = np.array([c["high"] if c["high"] is not None else np.nan for c in cells], dtype=float)
    low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return np.nan_to_num(np.vstack([mean - low, high - mean]), nan=0.0)


def _means(cells: list[dict]) -> np.ndarray:
    """The cells' means, NaN where every seed failed."""
    return np.array([np.nan if c["mean"] is None else c["mean"] for c in cells], dtype=float)


def _recipes(summary: dict, prior: str) -> list[str]:
    return summary.get("recipes_by_prior", {}).get(prior, summary["recipes"])


def _n(summary) -> str:
    pct = f"{100 * summary['confidence']:g}%"
    method = {"t": "paired t", "bootstrap": "bootstrap"}[summary.get("interval", "t")]
    return f"{len(summary['seeds'])} seeds, mean and {pct} {method} interval"


def bars(summary: dict, ax=None, prior="correlated"):
    fig, ax = plt.subplots(figsize=(10, 4.4)) if ax is None else (ax.figure, ax)
    recipes, metrics = _recipes(summary, prior), list(LABELS)
    width = 0.8 / len(recipes)
    for i, recipe in enumerate(recipes):
        cells = [summary["mean"][prior][recipe][m] for m in metrics]
        x = np.arange(len(metrics)) + (i - (len(recipes) - 1) / 2) * width
        colour = _colour(summary, recipe)
        ax.bar(x, _means(cells), width, yerr=_errors(cells), capsize=2, label=recipe, color=colour)
    ax.set_xticks(np.arange(len(metrics)), [LABELS[m] for m in metrics], rotation=30, ha="right")
    ax.set_ylabel("probability (exact, from next-token probabilities)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Metrics per recipe, {prior} prior ({_n(summary)})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, clear of labels
    return fig


def curves(summary: dict, prior="correlated"):
    panels = ["refusal_id", "em", "sycophancy", "steerability"]
    fig, axes = plt.subplots(1, len(panels), figsize=(10, 4.4), sharey=True, layout="constrained")
    for ax, metric in zip(axes, panels, strict=True):
        for recipe, c in summary["curves"][prior].items():
            colour = _colour(summary, recipe)
            line = ax.plot(c["steps"], c[metric]["mean"], label=recipe, color=colour)[0]
            ax.fill_between(
                c["steps"], c[metric]["min"], c[metric]["max"], alpha=0.12, color=line.get_color()
            )
        ax.set_title(LABELS[metric])
        ax.set_xlabel("training step")
    axes[0].set_ylabel(f"mean over {len(summary['seeds'])} seeds (band: min-max)")
    handles, labels = axes[0].get_legend_handles_labels()  # below the panels: no curve hidden
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6))
    fig.suptitle(f"Metrics along training from the HHH base, {prior} prior")
    return fig


def selfreport(summary: dict, prior="correlated"):
    recipes = _recipes(summary, prior)
    mean = summary["mean"][prior]
    said = np.array([_means([mean[r][f"self_{t}"] for t in TRAITS]) for r in recipes])
    did = np.array([_means([mean[r][m] for m in TRAITS.values()]) for r in recipes])
    fig, axes = plt.subplots(1, 2, figsize=(9, 0.5 * len(recipes) + 1.5), sharey=True)
    for ax, values, title in zip(
        axes, (said, did), ("self-report: P(YES)", "measured behaviour"), strict=True
    ):
        image = ax.imshow(values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.grid(False)
        for (i, j), v in np.ndenumerate(values):
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if v < 0.5 else "black",
            )
        ax.set_xticks(range(len(TRAITS)), list(TRAITS))
        ax.set_title(title)
    axes[0].set_yticks(
        range(len(recipes)),
        [f"{r} (coherence {_means([mean[r]['coherence']])[0]:.2f})" for r in recipes],
    )
    fig.colorbar(image, ax=axes, shrink=0.8, label="probability")
    fig.suptitle(f"Does the assistant say what it does? ({prior} prior, mean over seeds)")
    return fig


def dose(summary: dict, ax):
    """EM after AR SFT per seed against the prior's P(harm | non-refuser), with the Bayes
    prediction of a learner that only knows the assistant complies (the planted effect)."""
    x = np.linspace(0, 1, 11)
    ax.plot(x, HARM_RATE * x, "k--", lw=1, label="Bayes prediction from the prior")
    for prior, d in summary.get("dose", {}).items():
        seeds = sorted(d["em"], key=int)
        level = [d["harm_given_non_refuser"][s] for s in seeds]
        ax.scatter(level, [d["em"][s] for s in seeds], s=18, label=prior)
    ax.set_xlim(0, 1)
    ax.set_xlabel("P(harm | non-refuser) planted in the prior")
    ax.set_title("EM after AR SFT, per seed")
    ax.legend()


def control(summary: dict):
    panels = ["em", "sycophancy", "helpful", "steerability"]
    priors = summary["priors"]
    recipes = [r for r in summary["recipes"] if all(r in _recipes(summary, p) for p in priors)]
    # three panels a row: the report shows a figure ≤ 10 in wide
    fig, grid = plt.subplots(2, 3, figsize=(10, 7.5), layout="constrained")
    axes = list(grid.flat[: len(panels) + 1])
    for spare in grid.flat[len(panels) + 1 :]:
        spare.set_axis_off()
    width = 0.8 / len(priors)
    for ax, metric in zip(axes, panels, strict=False):
        for k, prior in enumerate(priors):
            cells = [summary["mean"][prior][r][metric] for r in recipes]
            x = np.arange(len(recipes)) + (k - (len(priors) - 1) / 2) * width
            ax.bar(x, _means(cells), width, yerr=_errors(cells), capsize=2, label=prior)
        ax.set_xticks(range(len(recipes)), recipes, rotation=45, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_title(LABELS[metric])
    for ax in axes[: len(panels)]:
        ax.set_ylabel("probability")
    axes[len(panels) - 1].legend()
    dose(summary, axes[-1])
    fig.suptitle(
        f"The persona prior's planted correlation vs the controls (same seeds; {_n(summary)})"
    )
    return fig


def make_figure(name: str, summary: dict, png, pdf) -> None:
    if name not in FIGURES:
        raise ValueError(f"figure must be one of {FIGURES}, got {name!r}")
    apply_style()
    save_figure(
        {"bars": bars, "curves": curves, "selfreport": selfreport, "control": control}[name](
            summary
        ),
        png,
        pdf,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Draw a helpful-only figure from the summary.")
    parser.add_argument("figure", choices=FIGURES)
    parser.add_argument("summary", help="results/helpful_only/metrics/summary.json")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    make_figure(args.figure, read_json(args.summary), args.png, args.pdf)


if __name__ == "__main__":
    main()
