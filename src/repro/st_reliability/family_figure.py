"""Fig. F of the brief (claim C4): the audited model's mean probe quality under each pool
design, and what C4 judges: the quality drop when the probe's family is removed against the
drop when the pool shrinks by as much, per seed, with their paired 95 % t interval."""

from __future__ import annotations

import numpy as np

from repro.common.plotting import apply_style, plt, save_figure, seeds_and_interval
from repro.common.stats import paired_difference

DESIGNS = {
    "full": "full pool",
    "family_removed": "family removed",
    "size_matched": "size-matched",
    "pool_shrunk": "pool shrunk",
}


def c4_drops(c4: dict) -> dict:
    """Per seed the family drop and the pool drop, and C4's two statistics: family − pool
    drop and family drop − 0, each its mean and paired 95 % t interval (as the claim)."""
    seeds = c4["seeds"]
    family = dict(zip(seeds, c4["family_drop"], strict=True))
    pool = dict(zip(seeds, c4["pool_drop"], strict=True))
    return {
        "family": family,
        "pool": pool,
        "family_minus_pool": paired_difference(family, pool),
        "family_above_zero": paired_difference(family, dict.fromkeys(seeds, 0.0)),
    }


def family_vs_pool(metrics: dict, cfg: dict, png: str, pdf: str, claims=None) -> None:
    """Left: mean probe quality per pool design, every seed (a line) and their mean; right:
    the drops per seed and C4's statistics against the claim's margin δ."""
    apply_style()
    setting = cfg["setting"]
    c4 = metrics[setting]["c4"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8), width_ratios=[1.1, 1])
    if not c4["available"]:
        for ax in (left, right):
            ax.text(0.5, 0.5, f"C4 not run: {c4.get('reason', '')}", ha="center", wrap=True)
            ax.set_axis_off()
        save_figure(fig, png, pdf)
        return
    x = np.arange(len(DESIGNS))
    quality = np.array([c4["mean_quality"][d] for d in DESIGNS], dtype=float)  # (design, seed)
    for s in range(quality.shape[1]):
        left.plot(
            x, quality[:, s], "o-", color="0.6", lw=0.8, ms=3, label="one seed" if s == 0 else None
        )
    left.plot(x, quality.mean(axis=1), "D-", color="k", ms=5, label="mean over seeds")
    left.set_xticks(x, list(DESIGNS.values()))
    left.set(ylabel="mean probe pearson_delta", title=f"{setting}: probe quality per pool design")
    left.legend(loc="best")
    drops = c4_drops(c4)
    rows = [
        ("family drop", list(drops["family"].values()), drops["family_above_zero"], "C0"),
        ("pool drop", list(drops["pool"].values()), None, "C1"),
        (
            "family − pool drop",
            [drops["family"][s] - drops["pool"][s] for s in c4["seeds"]],
            drops["family_minus_pool"],
            "C2",
        ),
    ]
    for y, (_, per_seed, d, colour) in enumerate(rows):
        seeds_and_interval(right, per_seed, d, y, colour, ms=5)
    right.axvline(0, color="0.3", lw=0.8)
    claim = next((c for c in (claims or {}).values() if c.get("kind") == "family_vs_pool"), None)
    if claim:
        right.axvline(
            claim["criterion"]["delta"],
            color="C3",
            ls="--",
            lw=1,
            label=f"margin δ = {claim['criterion']['delta']:g}",
        )
        right.legend(loc="best")
    right.set_yticks(range(len(rows)), [r[0] for r in rows])
    right.invert_yaxis()
    right.set(
        xlabel="drop in probe quality (circles: seeds; diamond: mean, 95% t CI)",
        title="what claim C4 judges",
    )
    save_figure(fig, png, pdf)
