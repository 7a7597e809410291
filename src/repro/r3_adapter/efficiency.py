"""3R-Adapter's efficiency plot: one row per method, ordered by trainable parameters, with
the adapted domain's accuracy and the clean-domain EPE per seed, and what claim C2 and the
module ablation judge (3R-lite − method per seed, mean and paired 95 % t interval)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from repro.common.plotting import save_figure, seeds_and_interval
from repro.common.stats import paired_difference
from repro.r3_adapter.claims import per_seed


def _paired_claims(claims: dict | None, method: str, metric: str) -> dict[str, dict]:
    """The paired claims of ``method`` on ``metric``, by id."""
    return {
        cid: c
        for cid, c in (claims or {}).items()
        if c.get("kind") == "paired" and c.get("method") == method and c.get("metric") == metric
    }


def _seed_spread(ax, rows, docs, metric) -> None:
    """Every seed (hollow) and the mean ± sd over seeds (filled) of ``metric``, one row each."""
    for y, name in enumerate(rows):
        seeds = [v for v in per_seed(docs[name], metric).values() if v is not None]
        ax.plot(seeds, np.full(len(seeds), y), "o", mfc="none", mec="0.45", ms=4)
        ax.errorbar(
            docs[name]["mean"][metric],
            y,
            xerr=docs[name]["std"][metric],
            fmt="D",
            color="k",
            ms=4,
            capsize=2,
        )


def paired_differences(docs: dict, method: str, metric: str) -> dict[str, tuple]:
    """Per other method: ``method`` − it on ``metric`` over the shared seeds, as the claims
    take it (mean and paired 95 % t interval), and the per-seed differences in seed order.
    A method with a missing or non-finite seed (on either side) has none."""
    ours, out = per_seed(docs[method], metric), {}
    for name, doc in docs.items():
        theirs = per_seed(doc, metric)
        values = [*ours.values(), *theirs.values()]
        if name == method or any(v is None or not np.isfinite(v) for v in values):
            continue  # a failed seed: no paired difference (the claims say so)
        diffs = [ours[seed] - theirs[seed] for seed in sorted(ours)]
        out[name] = (paired_difference(ours, theirs), diffs)
    return out


def efficiency(docs: dict, roles: dict, severity: int, png: str, pdf: str, claims=None) -> None:
    """One row per method, ordered by trainable parameters: the parameters (log), the adapted
    domain's accuracy and the clean-domain EPE per seed with mean ± sd, and what C2 and the
    module ablation judge: 3R-lite − method per seed, its mean and paired 95 % t interval."""
    shifted, relational = f"severity{severity}/accuracy", roles["relational"]
    rows = sorted(docs, key=lambda m: (docs[m]["n_trainable"], m))
    fig, axes = plt.subplots(
        1, 4, figsize=(10, 1.6 + 0.36 * len(rows)), sharey=True, width_ratios=[0.8, 1, 1.2, 1]
    )
    y = np.arange(len(rows))
    n = [max(docs[m]["n_trainable"], 1) for m in rows]
    judging = _paired_claims(claims, relational, shifted)
    # C1 (orange) is 3R-lite's own bar, C3 (red) the margin
    colours = dict(zip(judging, ("C0", "C2", "C4", "C5", "C6"), strict=False))
    judged = {b: cid for cid, c in judging.items() for b in c["baselines"]}
    axes[0].barh(y, n, color=["C1" if m == relational else "0.6" for m in rows])
    axes[0].set(xscale="log", xlabel="trainable parameters (log)")
    axes[0].set_yticks(y, [f"{m} ({docs[m]['n_trainable']:,})" for m in rows])
    axes[0].invert_yaxis()
    _seed_spread(axes[1], rows, docs, shifted)
    axes[1].set_xlabel(f"accuracy, severity {severity} ↑")
    _seed_spread(axes[3], rows, docs, "clean/epe")
    axes[3].set_xlabel("clean EPE after adaptation ↓")
    ax = axes[2]
    paired = paired_differences(docs, relational, shifted)
    differences = {rows.index(name): (name, *paired[name]) for name in paired}
    deltas = sorted({c["criterion"]["delta"] for c in judging.values()})
    # the axis spans the claims' rows (and 0, δ): a far control (the frozen model) would
    # squeeze their intervals, so it is written at the edge instead
    judged_ends = [e for n, d, _ in differences.values() if n in judged for e in (d.low, d.high)]
    span = [*judged_ends, 0.0, *deltas] if judged_ends else None
    low, high = (min(span), max(span)) if span else (None, None)
    pad = 0.15 * (high - low) if span else 0.0
    for i, (name, d, diffs) in differences.items():
        colour = colours.get(judged.get(name), "0.6")
        if span and not low - pad <= d.mean <= high + pad:
            ax.text(
                high + pad if d.mean > high else low - pad,
                i,
                f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] →"
                if d.mean > high
                else f"← {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]",
                ha="right" if d.mean > high else "left",
                va="center",
                color=colour,
                fontsize=8,
                bbox={"fc": "white", "ec": "none", "pad": 1},
                zorder=5,
            )
            continue
        seeds_and_interval(ax, diffs, d, i, colour)
    if span:
        ax.set_xlim(low - pad, high + pad)
    ax.axvline(0, color="0.3", lw=0.8)
    for delta in deltas:
        ax.axvline(delta, color="C3", ls="--", lw=1)
    ax.set_xlabel(f"{relational} − method, severity {severity}")
    for metric_ax in axes[1:]:  # a few ticks: differences in the thousandths run together
        metric_ax.xaxis.set_major_locator(MaxNLocator(4))
    handles = [
        plt.Line2D([], [], marker="D", ls="none", color=colours[cid], label=f"baseline of {cid}")
        for cid in judging
    ]
    handles += [
        plt.Line2D([], [], color="C3", ls="--", label=f"claims' margin δ = {d:g}") for d in deltas
    ]
    handles += [
        plt.Line2D([], [], marker="o", mfc="none", mec="0.45", ls="none", label="one seed"),
        plt.Line2D(
            [], [], marker="D", color="k", ls="none", label="mean ± sd (3rd panel: 95% t CI)"
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    seeds = len(docs[relational]["seeds"])
    fig.suptitle(f"Parameters, accuracy and retention per method ({seeds} seeds)")
    save_figure(fig, png, pdf)
