"""The MaLoRA figures, from the summary JSON only (they rebuild in seconds)."""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

from repro.common.io import read_json
from repro.common.plotting import apply_style, save_figure
from repro.common.stats import paired_difference
from repro.common.tables import Cell, Section, interval, mean_sd

MARGINS = {"pretrain": "pre-training", "finetune": "fine-tuning", "union": "union"}
COLOURS = {"pretrain": "tab:blue", "finetune": "tab:orange", "union": "tab:green"}


def _band(ax, x, stats, **style):
    mean, sd = np.array([s["mean"] for s in stats]), np.array([s["sd"] for s in stats])
    (line,) = ax.plot(x, mean, **style)
    ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15, lw=0)
    return line


def margins_vs_lambda(summary):
    sweep = summary["sweep"]
    fig, axes = plt.subplots(
        1, len(sweep["overlaps"]), figsize=(10, 4.2), sharey=True, layout="constrained"
    )
    for ax, block in zip(np.atleast_1d(axes), sweep["overlaps"], strict=True):
        lam = [r["lambda"] for r in block["lambdas"]]
        for key, label in MARGINS.items():
            _band(
                ax,
                lam,
                [r[f"measured_{key}"] for r in block["lambdas"]],
                color=COLOURS[key],
                marker="o",
                ms=3,
                label=f"{label}, measured",
            )
            ax.plot(
                lam,
                [r[f"closed_nuclear_{key}"]["mean"] for r in block["lambdas"]],
                color=COLOURS[key],
                ls="--",
                label=f"{label}, closed form",
            )
        ax.set_xscale("log")
        ax.set_xlabel("LoRA penalty λ")
        ax.set_title(f"overlap ε = {block['overlap']:g}")
    np.atleast_1d(axes)[0].set_ylabel("normalised margin γ (training data)")
    handles, labels = np.atleast_1d(axes)[-1].get_legend_handles_labels()  # below: no curve hidden
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    fig.suptitle(
        f"Margins vs λ: measured (mean ± sd, {len(sweep['seeds'])} seeds) and closed "
        "form along the nuclear-norm SVM ray"
    )
    return fig


def tradeoff(summary):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for i, block in enumerate(summary["sweep"]["overlaps"]):
        ft = [r["measured_finetune"]["mean"] for r in block["lambdas"]]
        pre = [r["measured_pretrain"]["mean"] for r in block["lambdas"]]
        ax.plot(ft, pre, marker="o", ms=3, label=f"ε = {block['overlap']:g}")
        if i == 0:  # every overlap sweeps the same λ: the ends are named once
            for r, x, y in (
                (block["lambdas"][0], ft[0], pre[0]),
                (block["lambdas"][-1], ft[-1], pre[-1]),
            ):
                ax.annotate(
                    f"λ={r['lambda']:.0e}", (x, y), xytext=(4, 4), textcoords="offset points"
                )
    ax.set_xlabel("fine-tuning normalised margin (adaptation)")
    ax.set_ylabel("pre-training normalised margin (retention)")
    ax.set_title("Retention / adaptation trade-off along λ")
    ax.legend()
    return fig


def alignment(summary):
    sweep = summary["sweep"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for block, colour in zip(sweep["overlaps"], colours, strict=False):
        lam = [r["lambda"] for r in block["lambdas"]]
        for svm, ls in (("frobenius", "-"), ("nuclear", "--")):
            _band(
                left,
                lam,
                [r[f"cosine_{svm}"] for r in block["lambdas"]],
                color=colour,
                ls=ls,
                marker="o",
                ms=3,
                label=f"ε = {block['overlap']:g}, {svm} SVM",
            )
    left.set_xscale("log")
    left.set_xlabel("LoRA penalty λ")
    left.set_ylabel("cos(ΔW, W_SVM)")
    left.set_title("Alignment vs λ (mean ± sd over seeds)")
    left.legend()
    block = sweep["overlaps"][0]
    for r in block["lambdas"][::2]:
        steps = sorted(int(s) for s in r.get("cosine_by_step", {}).get("frobenius", {}))
        if steps:
            right.plot(
                steps,
                [r["cosine_by_step"]["frobenius"][str(s)]["mean"] for s in steps],
                marker="o",
                ms=3,
                label=f"λ = {r['lambda']:.0e}",
            )
    right.set_xscale("log")
    right.set_xlabel("gradient-descent steps")
    right.set_ylabel("cos(ΔW, Frobenius SVM)")
    right.set_title(f"Alignment along training (ε = {block['overlap']:g})")
    right.legend()
    return fig


def landscape(summary):
    blocks = [b for b in summary["linear"]["settings"][_primary(summary)]]
    # one row per overlap ε: two panels across keep the text legible at the report's width
    fig, axes = plt.subplots(len(blocks), 2, figsize=(8.4, 3.4 * len(blocks)), squeeze=False)
    for col, block in enumerate(blocks):
        land = block["landscape_first_seed"]
        axis = np.array(land["axis"])
        for row, (key, label) in enumerate(
            (
                ("union_margin", "union normalised margin (σ=0.3)"),
                ("joint_accuracy", "joint accuracy (σ=0.8)"),
            )
        ):
            ax = axes[col, row]
            mesh = ax.pcolormesh(axis, axis, np.array(land[key]).T, shading="auto", cmap="viridis")
            fig.colorbar(mesh, ax=ax, label=label)
            ax.plot(*land["malora"], "r*", ms=12, label="MaLoRA α")
            ax.plot(*land["grid_optimum"], "wx", ms=9, mew=2, label="grid optimum (margin)")
            ax.plot(1, 1, "ko", mfc="none", label="task arithmetic")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("α₁ (task 1)")
            ax.set_ylabel("α₂ (task 2)")
            ax.set_title(f"ε = {block['overlap']:g}")
    axes[0, 0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Two-task merging landscape (held-out data, first seed)")
    return fig


def _primary(summary) -> str:
    return next(k for k, v in summary["linear"]["settings"].items() if "ablations" in v[0])


def _cell(stats, seeds: int | None = None) -> Cell | str:
    if stats["mean"] is None or not np.isfinite(stats["mean"]):  # a rule that failed every seed
        return "n/a"
    defined = stats.get("defined", seeds)
    if seeds is not None and defined != seeds:
        note = f" (n = {defined} of {seeds})"
        return mean_sd(stats["mean"], stats["sd"], n=defined, note=note)
    return mean_sd(stats["mean"], stats["sd"])


def _finite(value) -> bool:
    return value is not None and bool(np.isfinite(value))


def _diff_where_formed(malora: list, rule: list) -> Cell | str:
    """MaLoRA − rule on the seeds where both have a value (MaLoRA formed a model), with its
    95% paired t interval and n: where a seed failed, the all-seed difference is undefined."""
    keep = [
        i for i, (a, b) in enumerate(zip(malora, rule, strict=True)) if _finite(a) and _finite(b)
    ]
    if len(keep) < 2:
        return "n/a (fewer than 2 seeds with a MaLoRA model)"
    d = paired_difference({i: malora[i] for i in keep}, {i: rule[i] for i in keep})
    note = f" (n = {d.n}, seeds with a MaLoRA model)"
    return interval(d.mean, d.low, d.high, n=d.n, note=note)


def _diff(d) -> Cell | str:
    if any(d[k] is None or not np.isfinite(d[k]) for k in ("mean", "low", "high")):
        return "n/a (a value missing)"
    return interval(d["mean"], d["low"], d["high"])


def table_sections(summaries: list[dict]) -> tuple[str, list[Section]]:
    """The table as text (the report shows it as HTML; :func:`table` draws it): the title,
    the digits section and the linear setting's."""
    summary = summaries[0]
    dig, lin = summary["digits"], summary["linear"]["settings"][_primary(summary)]
    seeds, reference = len(dig["seeds"]), dig["methods"].get("malora")

    def difference(name, p, metric):
        if p is None:
            return "—"
        if _finite(p[metric]["mean"]) or reference is None:
            return _diff(p[metric])
        per_seed = reference[metric]["per_seed"], dig["methods"][name][metric]["per_seed"]
        return _diff_where_formed(*per_seed)

    rows = []
    for name, m in dig["methods"].items():
        p = dig["paired_vs_malora"].get(name)
        rows.append(
            [
                name,
                _cell(m["normalised_accuracy"], seeds),
                _cell(m["joint_accuracy"], seeds),
                _cell(m["pretrain_accuracy"], seeds),
                difference(name, p, "normalised_accuracy"),
                difference(name, p, "joint_accuracy"),
            ]
        )
    digits = Section(
        f"Digits: all merge rules, mean ± sd over {len(dig['seeds'])} seeds; paired "
        "differences with t intervals",
        [
            "method",
            "normalised acc.",
            "joint acc.",
            "retention (digits 0–3)",
            "MaLoRA − rule, normalised [95% CI]",
            "MaLoRA − rule, joint [95% CI]",
        ],
        rows,
    )
    rows = []
    for name in lin[0]["methods"]:
        row = [name]
        for block in lin:
            p = block["paired_vs_malora"].get(name)
            row += [
                _cell(block["methods"][name]["union_margin"]),
                "—" if p is None else _diff(p["union_margin"]),
            ]
        rows.append(row)
    rows.append(
        ["oracle (test)", *sum(([_cell(b["oracle"]), "(upper reference)"] for b in lin), [])]
    )
    cols = sum(
        ([f"union margin ε={b['overlap']:g}", f"MaLoRA − rule ε={b['overlap']:g}"] for b in lin), []
    )
    linear = Section(
        "Linear theory setting (unequal adapter scales): held-out union normalised margin",
        ["method", *cols],
        rows,
    )
    return "MaLoRA: the merge rules compared", [digits, linear]


def table(summary):
    _, sections = table_sections([summary])
    fig, axes = plt.subplots(len(sections), 1, figsize=(13, 9.5))
    for ax, section in zip(axes, sections, strict=True):
        ax.table(
            cellText=[row[1:] for row in section.rows],
            rowLabels=[row[0] for row in section.rows],
            colLabels=section.header[1:],
            loc="center",
        ).scale(1, 1.25)
        ax.set_axis_off()
        ax.set_title(section.heading)
    return fig


def ablations(summary):
    lin = summary["linear"]["settings"][_primary(summary)]
    dig = summary["digits"]["ablations"]
    fig, axes = plt.subplots(2, 3, figsize=(10, 7.5), layout="constrained")
    ax = axes[0, 0]
    for block in lin:
        stats = block["ablations"]["margin_stat"]
        ax.errorbar(
            list(stats),
            [s["mean"] for s in stats.values()],
            yerr=[s["sd"] for s in stats.values()],
            marker="o",
            capsize=3,
            label=f"linear ε = {block['overlap']:g}",
        )
    ax.set_ylabel("MaLoRA union margin (linear)")
    ax.set_title("Margin statistic")
    ax.legend()
    ax = axes[0, 1]
    for block in lin:
        stats = {k: v for k, v in block["ablations"]["calibration_size"].items() if k != "test"}
        line = _band(
            ax,
            [int(k) for k in stats],
            list(stats.values()),
            marker="o",
            label=f"linear ε = {block['overlap']:g}",
        )
        test = block["ablations"]["calibration_size"].get("test")
        if test is not None:  # α from the test split's own margins
            ax.axhline(test["mean"], color=line.get_color(), ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("calibration examples per class (dotted: the test split)")
    ax.set_ylabel("MaLoRA union margin (linear)")
    ax.set_title("Calibration size")
    ax.legend()
    ax = axes[0, 2]
    for block in lin:
        stats = block["ablations"]["n_tasks"]
        t = [int(k) for k in stats]
        _band(
            ax,
            t,
            [stats[k]["malora"] for k in stats],
            marker="o",
            label=f"MaLoRA ε = {block['overlap']:g}",
        )
        _band(
            ax,
            t,
            [stats[k]["task_arithmetic"] for k in stats],
            ls="--",
            marker="s",
            ms=3,
            label=f"TA ε = {block['overlap']:g}",
        )
    ax.set_xlabel("number of merged tasks")
    ax.set_ylabel("union margin (linear)")
    ax.set_title("Number of tasks")
    ax.legend()
    ax = axes[1, 0]
    for metric in ("normalised_accuracy", "joint_accuracy"):
        stats = dig["margin_stat"]
        ax.errorbar(
            list(stats),
            [s[metric]["mean"] for s in stats.values()],
            yerr=[s[metric]["sd"] for s in stats.values()],
            marker="o",
            capsize=3,
            label=metric.replace("_", " "),
        )
    ax.set_ylabel("MaLoRA on digits")
    ax.set_title("Margin statistic (digits)")
    ax = axes[1, 1]
    for metric in ("normalised_accuracy", "joint_accuracy"):
        stats = dig["calibration_size"]
        _band(
            ax,
            [int(k) for k in stats],
            [s[metric] for s in stats.values()],
            marker="o",
            label=metric.replace("_", " "),
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("calibration examples per task")
    ax.set_title("Calibration size (digits)")
    ax = axes[1, 2]
    methods = summary["digits"]["methods"]
    names = [
        n
        for n in ("base", "malora", "malora_tuned_scale", "task_arithmetic", "ta_tuned")
        if n in methods
    ]
    x = np.arange(len(names))
    for i, metric in enumerate(("normalised_accuracy", "joint_accuracy")):
        ax.bar(
            x + 0.4 * i,
            [methods[n][metric]["mean"] for n in names],
            0.4,
            yerr=[methods[n][metric]["sd"] for n in names],
            label=metric.replace("_", " "),
        )
    ax.set_xticks(x + 0.2, names, rotation=20)
    # the per-layer α variant was dropped: this panel compares the merges that were run
    ax.set_title("Merging methods (digits, global α)")
    # the digits row shares its two metrics: one legend below it, clear of every panel
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels))
    fig.suptitle("MaLoRA ablations (mean ± sd over seeds; NaN where a margin was ≤ 0)")
    return fig


FIGURES = {
    "margins": margins_vs_lambda,
    "tradeoff": tradeoff,
    "alignment": alignment,
    "landscape": landscape,
    "table": table,
    "ablations": ablations,
}


def make_figure(name: str, summary: dict, png: str, pdf: str) -> None:
    apply_style()
    fig = FIGURES[name](summary)
    if fig.get_layout_engine() is None:  # a figure laid out as it was drawn keeps its layout
        fig.tight_layout()
    save_figure(fig, png, pdf)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Draw one MaLoRA figure from the summary.")
    parser.add_argument("figure", choices=sorted(FIGURES))
    parser.add_argument("--summary", required=True)
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    make_figure(args.figure, read_json(args.summary), args.png, args.pdf)


if __name__ == "__main__":
    main()
