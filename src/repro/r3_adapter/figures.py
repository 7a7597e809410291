"""The six figures, drawn from metrics documents only (never checkpoints).

collapse — GT-mass, entropy and precision per cross-attention layer vs severity (frozen);
attention — one query patch's cross-view attention: clean, shifted, LoRA, 3R-lite;
table — the method table with shifted and clean columns and trainable parameters;
ablation — 3R-lite against its module-removed variants (paired over seeds);
efficiency — per method by trainable parameters: shifted accuracy, clean EPE, 3R-lite − method;
pointcloud — a reconstructed scene (view 1 grey, view 2 coloured by error).
"""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

from repro.common.io import read_json
from repro.common.plotting import apply_style, save_figure
from repro.common.stats import paired_difference
from repro.common.tables import Cell, Section, count, mean_sd
from repro.r3_adapter.claims import domain_sequence, per_seed, precise_layer
from repro.r3_adapter.names import DIAGNOSTICS

LABELS = {"gt_mass": "GT-mass", "entropy": "normalised entropy", "precision": "precision"}


def _layers(doc) -> list[int]:
    return sorted({int(k.split("/")[1][5:]) for k in doc["mean"] if "/layer" in k})


def collapse(docs: dict, roles: dict, severity: int, png: str, pdf: str) -> None:
    doc = docs[roles["frozen"]]
    names, chosen = domain_sequence(doc), precise_layer(doc)
    x = np.arange(len(names))
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
    for ax, diag in zip(axes, DIAGNOSTICS, strict=True):
        for layer in _layers(doc):
            keys = [f"{d}/layer{layer}/{diag}" for d in names]
            label = f"layer {layer}" + (" (most precise clean)" if layer == chosen else "")
            ax.errorbar(
                x,
                [doc["mean"][k] for k in keys],
                [doc["std"][k] for k in keys],
                marker="o",
                lw=2.5 if layer == chosen else 1.2,
                label=label,
                capsize=2,
            )
        if diag == "precision":
            keys = [f"{d}/accuracy" for d in names]
            ax.errorbar(
                x,
                [doc["mean"][k] for k in keys],
                [doc["std"][k] for k in keys],
                color="k",
                ls="--",
                marker="s",
                label="match-head accuracy",
                capsize=2,
            )
        ax.set_xticks(x, ["clean"] + [f"sev {i}" for i in range(1, len(names))])
        ax.set_xlabel("low-light severity")
        ax.set_ylabel(LABELS[diag])
        ax.set_ylim(0, 1.05)
    axes[0].legend(loc="best")
    fig.suptitle(f"Cross-view attention of the frozen model vs shift ({len(doc['seeds'])} seeds)")
    save_figure(fig, png, pdf)


def _query(example) -> int:
    """The co-visible view-2 patch nearest the grid centre (a neutral choice)."""
    match, g = np.asarray(example["truth"]["match"]), example["truth"]["grid"]
    rows, cols = np.divmod(np.arange(g * g), g)
    dist = np.hypot(rows - (g - 1) / 2, cols - (g - 1) / 2) + 1e3 * (match < 0)
    return int(np.argmin(dist))


def attention(docs: dict, roles: dict, severity: int, png: str, pdf: str) -> None:
    shifted = f"severity{severity}"
    frozen, layer = docs[roles["frozen"]], precise_layer(docs[roles["frozen"]])
    example = frozen["example"]
    q, g = _query(example), example["truth"]["grid"]
    target = example["truth"]["match"][q]
    panels = [
        ("frozen, clean", frozen, "clean", "attention"),
        (f"frozen, severity {severity}", frozen, shifted, "attention"),
        (
            f"{roles['matched_peft']}, severity {severity}",
            docs[roles["matched_peft"]],
            shifted,
            "attention",
        ),
        (
            f"{roles['relational']}, severity {severity}",
            docs[roles["relational"]],
            shifted,
            "attention",
        ),
        (f"{roles['relational']} rewired relation", docs[roles["relational"]], shifted, "rewired"),
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(2 * len(panels), 3.0), layout="constrained")
    for ax, (title, doc, domain, kind) in zip(axes, panels, strict=True):
        row = np.asarray(doc["example"]["domains"][domain][kind][layer])[q].reshape(g, g)
        image = ax.imshow(row, cmap="magma", vmin=0, vmax=max(row.max(), 1e-6))
        ax.plot(target % g, target // g, "c+", ms=14, mew=2, label="true correspondent")
        ax.set_title(f"{title}\nGT-mass {row.flat[target]:.2f}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(image, ax=ax, fraction=0.046)
    axes[0].legend(loc="lower left")
    fig.suptitle(f"View-2 patch {q} attending to view 1, layer {layer} (seed 0, scene 0)")
    save_figure(fig, png, pdf)


TABLE = [
    ("n_trainable", "params"),
    ("{s}/accuracy", "sev {k} acc ↑"),
    ("{s}/dustbin_free_accuracy", "sev {k} acc, no dustbin ↑"),
    ("{s}/epe", "sev {k} EPE ↓"),
    ("{s}/absrel", "sev {k} AbsRel ↓"),
    ("clean/accuracy", "clean acc ↑"),
    ("clean/epe", "clean EPE ↓"),
    ("clean/absrel", "clean AbsRel ↓"),
]


def table_rows(docs: dict, severity: int) -> tuple[list[str], list[list[Cell]]]:
    """Column labels and one row per method: its trainable parameters, then mean ± sd cells."""
    shifted = f"severity{severity}"
    header = [label.format(k=severity) for _, label in TABLE]
    rows = []
    for doc in docs.values():
        cells = [count(doc["n_trainable"])]
        for key, _ in TABLE[1:]:
            k = key.format(s=shifted)
            cells.append(mean_sd(doc["mean"][k], doc["std"][k]))
        rows.append(cells)
    return header, rows


def table_sections(docs: list[dict], severity: int) -> tuple[str, list]:
    """The table as text (the report shows it as HTML): the title and one section."""
    by_method = {d["method"]: d for d in docs}
    header, rows = table_rows(by_method, severity)
    seeds = len(docs[0]["seeds"])
    title = (
        f"3R-Adapter: low-light severity {severity} (adapted domain) and clean retention, "
        f"mean ± sd over {seeds} seeds"
    )
    return title, [
        Section(
            "per method",
            ["method", *header],
            [[m, *r] for m, r in zip(by_method, rows, strict=True)],
        )
    ]


def table(docs: dict, roles: dict, severity: int, png: str, pdf: str) -> None:
    header, rows = table_rows(docs, severity)
    fig, ax = plt.subplots(figsize=(12, 0.9 + 0.3 * len(rows)))
    cells = ax.table(cellText=rows, rowLabels=list(docs), colLabels=header, loc="center")
    cells.scale(1, 1.25)
    ax.set_axis_off()
    seeds = len(next(iter(docs.values()))["seeds"])
    ax.set_title(
        f"Low-light severity {severity} (adapted domain) and clean retention, "
        f"mean ± sd over {seeds} seeds"
    )
    save_figure(fig, png, pdf)


def ablation(docs: dict, roles: dict, severity: int, png: str, pdf: str) -> None:
    metric = f"severity{severity}/accuracy"
    full = roles["relational"]
    names = [full, *roles.get("ablations", [])]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    means = [docs[n]["mean"][metric] for n in names]
    ax.bar(
        names,
        means,
        yerr=[docs[n]["std"][metric] for n in names],
        capsize=3,
        color=["tab:orange"] + ["tab:gray"] * (len(names) - 1),
    )
    for i, name in enumerate(names[1:], start=1):
        d = paired_difference(per_seed(docs[full], metric), per_seed(docs[name], metric))
        ax.annotate(
            f"full − this\n{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]",
            (i, means[i]),
            ha="center",
            va="bottom",
            fontsize=7,
            xytext=(0, 8),
            textcoords="offset points",
        )
    ax.set_ylim(0, min(1.0, max(means) + 0.2))  # room for the labels
    ax.set_ylabel(f"correspondence accuracy, severity {severity}")
    ax.set_title("3R-lite module ablation (paired 95% t intervals over seeds)")
    ax.tick_params(axis="x", rotation=20)
    save_figure(fig, png, pdf)


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
        ax.plot(diffs, np.full(len(diffs), i), "o", mfc="none", mec=colour, ms=4)
        ax.errorbar(
            d.mean,
            i,
            xerr=[[d.mean - d.low], [d.high - d.mean]],
            fmt="D",
            color=colour,
            ms=4,
            capsize=2,
        )
    if span:
        ax.set_xlim(low - pad, high + pad)
    ax.axvline(0, color="0.3", lw=0.8)
    for delta in deltas:
        ax.axvline(delta, color="C3", ls="--", lw=1)
    ax.set_xlabel(f"{relational} − method, severity {severity}")
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


def pointcloud(docs: dict, roles: dict, severity: int, png: str, pdf: str) -> None:
    shifted = f"severity{severity}"
    panels = [
        (roles["frozen"], "clean"),
        (roles["frozen"], shifted),
        (roles["matched_peft"], shifted),
        (roles["relational"], shifted),
    ]
    drawn = []
    for name, domain in panels:
        ex = docs[name]["example"]
        truth = np.asarray(ex["truth"]["points2"])
        seen = np.asarray(ex["truth"]["match"]) >= 0
        pred = np.asarray(ex["domains"][domain]["points"])[seen]
        drawn.append((name, domain, ex, pred, np.linalg.norm(pred - truth[seen], axis=1)))
    vmax = max(float(error.max()) for *_, error in drawn)  # one scale that covers every error
    fig = plt.figure(figsize=(10, 3.8))
    for i, (name, domain, ex, pred, error) in enumerate(drawn, start=1):
        ax = fig.add_subplot(1, len(panels), i, projection="3d")
        xyz1 = np.asarray(ex["truth"]["xyz1"])
        ax.scatter(*xyz1.T, c="0.7", s=6, label="view 1 (input depth)")
        dots = ax.scatter(
            *pred.T, c=error, cmap="RdYlGn_r", vmin=0, vmax=vmax, s=14, label="view 2 predicted"
        )
        ax.set_title(f"{name}, {domain}\nmean point error {error.mean():.3f}", pad=12)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z (depth)")
        ax.view_init(elev=20, azim=-70)
    fig.colorbar(dots, ax=fig.axes, fraction=0.02, label="point error (view-1 units)")
    fig.axes[0].legend(loc="upper left")
    fig.suptitle("Reconstructed two-view point clouds (seed 0, scene 0; view-1 frame)")
    save_figure(fig, png, pdf)


FIGURES = {
    "collapse": collapse,
    "attention": attention,
    "table": table,
    "ablation": ablation,
    "efficiency": efficiency,
    "pointcloud": pointcloud,
}


def draw(
    figure: str, paths: list[str], roles: dict, severity: int, png: str, pdf: str, claims=None
) -> None:
    """Draw ``figure``; ``claims`` (papers.r3_adapter.claims) mark what the efficiency plot's
    differences are judged against."""
    apply_style()
    docs = {d["method"]: d for d in map(read_json, paths)}
    extra = {"claims": claims} if figure == "efficiency" else {}
    FIGURES[figure](docs, roles, severity, png, pdf, **extra)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Draw one 3R-Adapter figure from metrics JSON.")
    p.add_argument("figure", choices=sorted(FIGURES))
    p.add_argument("png")
    p.add_argument("pdf")
    p.add_argument("metrics", nargs="+")
    p.add_argument("--frozen", default="frozen")
    p.add_argument("--relational", default="r3_lite")
    p.add_argument("--matched-peft", default="lora_r6")
    p.add_argument("--ablations", nargs="*", default=[])
    p.add_argument("--severity", type=int, default=2)
    args = p.parse_args(argv)
    roles = {
        "frozen": args.frozen,
        "relational": args.relational,
        "matched_peft": args.matched_peft,
        "ablations": args.ablations,
    }
    draw(args.figure, args.metrics, roles, args.severity, args.png, args.pdf)


if __name__ == "__main__":
    main()
