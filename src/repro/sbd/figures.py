"""SBD figures, from metrics JSON only."""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

from repro.common.plotting import apply_style, save_figure, ticks_at
from repro.common.stats import paired_difference
from repro.common.tables import Section, count, number
from repro.sbd.recovery import noise_grid


def compression_speedup(metrics: list[dict], png, pdf) -> None:
    """Per graph: CF of each method (left) and the SBD method's SpMM speedup per d (right)."""
    apply_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    names = [m["dataset"] for m in metrics]
    methods = list(metrics[0]["methods"])
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):  # (a graph may run only some methods)
        cf = [m["methods"].get(method, {}).get("cf", np.nan) for m in metrics]
        left.bar(np.arange(len(names)) + k * width, cf, width, label=method)
    left.axhline(10, color="k", lw=0.8, ls="--", label="CF = 10")
    left.set(xticks=np.arange(len(names)) + 0.4 - width / 2, ylabel="compression factor (entries)")
    left.set_xticklabels(names, rotation=35, ha="right", rotation_mode="anchor")
    left.legend()
    main = methods[0]
    dims = [r["d"] for r in metrics[0]["methods"][main]["spmm"]]
    width = 0.8 / (2 * len(dims))
    for k, d in enumerate(dims):
        for b, (key, hatch) in enumerate((("speedup_scipy", ""), ("speedup_torch", "//"))):
            vals = [
                next(r[key] for r in m["methods"][main]["spmm"] if r["d"] == d) for m in metrics
            ]
            right.bar(
                np.arange(len(names)) + (2 * k + b) * width,
                vals,
                width,
                hatch=hatch,
                label=f"d={d} vs {key.split('_')[1]} CSR",
            )
    right.axhline(1, color="k", lw=0.8)
    right.set(xticks=np.arange(len(names)) + 0.4, ylabel=f"SpMM speedup of {main}")
    right.set_xticklabels(names, rotation=35, ha="right", rotation_mode="anchor")
    right.legend(ncol=2)
    save_figure(fig, png, pdf)


def speedup_vs_cf(metrics: list[dict], png, pdf) -> None:
    """Every (graph, method, d): speedup over CSR against CF, with the bound y = x."""
    apply_style()
    fig, ax = plt.subplots(figsize=(5, 4))
    top = 1.0
    for key, marker in (("speedup_scipy", "o"), ("speedup_torch", "s")):
        xs, ys = [], []
        for m in metrics:
            for entry in m["methods"].values():
                for r in entry["spmm"]:
                    xs.append(entry["cf"])
                    ys.append(r[key])
        ax.scatter(xs, ys, marker=marker, label=key.replace("_", " vs "), alpha=0.7)
        top = max(top, *xs, *ys)
    ax.plot([0.5, top * 1.2], [0.5, top * 1.2], "k--", lw=0.8, label="y = x (bound)")
    ax.set(xscale="log", yscale="log", xlabel="compression factor", ylabel="SpMM speedup")
    ax.legend()
    save_figure(fig, png, pdf)


def recovery_heatmap(noise: dict, png, pdf) -> None:
    """Mean best Jaccard (mean over seeds) per deletion × background, one panel per method."""
    apply_style()
    methods = sorted({r["method"] for r in noise["rows"]})
    fig, axes = plt.subplots(1, len(methods), figsize=(4.2 * len(methods), 3.4), squeeze=False)
    for ax, method in zip(axes[0], methods, strict=True):
        dels, bgs, grid = noise_grid(noise, method)
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", origin="lower")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w" if v < 0.6 else "k")
        ax.set(
            xticks=range(len(bgs)),
            yticks=range(len(dels)),
            xlabel="background density",
            ylabel="deletion rate" if ax is axes[0][0] else "",
            title=method,
        )
        ax.set_xticklabels([f"{b:g}" for b in bgs])
        ax.set_yticklabels([f"{d:g}" for d in dels])
        ax.grid(False)
    fig.colorbar(image, ax=axes[0].tolist(), label="mean best Jaccard")
    save_figure(fig, png, pdf)


def sign_study(study: dict, png, pdf) -> None:
    """Per setting of the sign study: each method's CF, one dot per seed, the same graph's
    dots joined; above them the paired difference (first method − second) with its 95 %
    t interval."""
    apply_style()
    rows = study["rows"]
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = plt.subplots(figsize=(1.2 + 2.4 * len(settings), 3.8))
    offsets = np.linspace(-0.2, 0.2, len(methods))
    for i, setting in enumerate(settings):
        cf = {m: {r["seed"]: r["cf"] for r in rows if (r["setting"], r["method"]) == (setting, m)}
              for m in methods}  # fmt: skip
        seeds = sorted(set.intersection(*(set(v) for v in cf.values())))
        for seed in seeds:
            ax.plot(i + offsets, [cf[m][seed] for m in methods], color="0.75", lw=0.8, zorder=1)
        for k, m in enumerate(methods):
            ax.scatter([i + offsets[k]] * len(seeds), [cf[m][s] for s in seeds], color=f"C{k}",
                       s=18, zorder=2, label=m if i == 0 else None)  # fmt: skip
        if len(methods) == 2 and len(seeds) >= 2:
            diff = paired_difference(cf[methods[0]], cf[methods[1]])
            top = max(v for m in methods for v in cf[m].values())
            label = f"Δ {diff.mean:+.2f}\n[{diff.low:+.2f}, {diff.high:+.2f}]"
            ax.annotate(label, (i, top), xytext=(0, 6), textcoords="offset points",
                        ha="center", fontsize=7)  # fmt: skip
    ax.set(xticks=range(len(settings)), xlim=(-0.6, len(settings) - 0.4),
           ylabel="compression factor (entries)",
           title="signed vs unsigned greedy on the same graphs and starts")  # fmt: skip
    ax.set_xticklabels([s.replace("_", " ") for s in settings])
    ax.margins(y=0.2)
    ax.legend()
    save_figure(fig, png, pdf)


def greedy_trace(metrics: list[dict], png, pdf) -> None:
    """Cumulative gain and CF vs number of factors, per graph and method."""
    apply_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    methods = list(dict.fromkeys(method for m in metrics for method in m["methods"]))
    styles = {method: ["-", "--", ":", "-."][i % 4] for i, method in enumerate(methods)}
    for i, m in enumerate(metrics):  # a colour per graph, a line style per method
        for method, entry in m["methods"].items():
            trace = entry["trace"]
            k = [t["factor"] for t in trace]
            gains = np.cumsum([t["gain"] for t in trace]) / max(entry["nnz"], 1)
            look = {"color": f"C{i % 10}", "ls": styles[method]}
            left.plot(k, gains, label=f"{m['dataset']} / {method}", **look)
            right.plot(k, [t["cf"] for t in trace], **look)
    left.set(xscale="symlog", xlabel="factors", ylabel="cumulative gain / nnz(A)")
    right.set(xscale="symlog", xlabel="factors", ylabel="compression factor")
    fig.legend(loc="outside lower center", ncol=4)
    save_figure(fig, png, pdf)


def time_vs_edges(scaling: dict, png, pdf) -> None:
    apply_style()
    rows = scaling["rows"]
    fig, ax = plt.subplots(figsize=(5, 4))
    edges = np.array([r["edges"] for r in rows])
    ax.loglog(edges, [r["seconds"] for r in rows], "o-", label="greedy SBD (min-hash seeds)")
    ref = rows[0]["seconds"] * edges / edges[0]
    ax.loglog(edges, ref, "k--", lw=0.8, label="∝ edges")
    ax.set(xlabel="edges (nnz)", ylabel="decomposition time (s)")
    ticks_at(ax.xaxis, edges)
    ax.legend()
    save_figure(fig, png, pdf)


def table_sections(metrics: list[dict]) -> tuple[str, list[Section]]:
    """The brief's per-data-set table: one row per graph and method, with its nnz, factors,
    compression factors, decomposition time and SpMM speedup (fastest call over fastest
    call) against SciPy's and torch's CSR at each d."""
    dims = sorted({r["d"] for m in metrics for v in m["methods"].values() for r in v["spmm"]})
    header = [
        "data set",
        "method",
        "nnz",
        "factors",
        "CF (entries)",
        "CF (bytes)",
        "decomposition s",
        *(f"speedup vs {lib} CSR, d={d}" for d in dims for lib in ("SciPy", "torch")),
    ]
    rows = []
    for m in metrics:
        for method, v in m["methods"].items():
            by_d = {r["d"]: r for r in v["spmm"]}
            speedups = [
                number(by_d[d][f"speedup_{lib}"], "{:.2f}") if d in by_d else "–"
                for d in dims
                for lib in ("scipy", "torch")
            ]
            rows.append(
                [
                    m["dataset"],
                    method,
                    count(v["nnz"]),
                    count(v["rank"]),
                    number(v["cf"], "{:.2f}"),
                    number(v["cf_bytes"], "{:.2f}"),
                    number(v["decompose_seconds"], "{:.2f}"),
                    *speedups,
                ]
            )
    title = "SBD: compression and SpMM speedup per data set (one run; times on this machine)"
    return title, [Section("per data set and method", header, rows)]


def main(argv: list[str] | None = None) -> None:
    from repro.common.io import read_json

    p = argparse.ArgumentParser(description="Draw one SBD figure from metrics JSON.")
    studies = {"recovery_heatmap", "sign_study", "time_vs_edges"}
    per_graph = {"compression_speedup", "speedup_vs_cf", "greedy_trace"}
    p.add_argument("figure", choices=sorted(studies | per_graph))
    p.add_argument("png")
    p.add_argument("pdf")
    p.add_argument("inputs", nargs="+", help="per-graph metrics, or a study's per-method files")
    a = p.parse_args(argv)
    docs = [read_json(path) for path in a.inputs]
    if a.figure in studies:
        docs = {"rows": [row for doc in docs for row in doc["rows"]]}
    globals()[a.figure](docs, a.png, a.pdf)


if __name__ == "__main__":
    main()
