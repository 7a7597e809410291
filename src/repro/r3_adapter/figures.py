"""The six figures, drawn from metrics documents only (never checkpoints).

collapse — GT-mass, entropy and precision per cross-attention layer vs severity (frozen);
attention — one query patch's cross-view attention: clean, shifted, LoRA, 3R-lite;
table — the method table with shifted and clean columns and trainable parameters;
ablation — 3R-lite against its module-removed variants (paired over seeds);
efficiency — per method by parameters: accuracy, clean EPE, 3R-lite − method (.efficiency);
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
from repro.r3_adapter.efficiency import efficiency
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
