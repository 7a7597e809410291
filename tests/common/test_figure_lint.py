"""The figure lint (repro.common.figure_lint) and the layout fixes before it
(repro.common.figure_tidy), on small figures whose answer is known by construction:

* geometry against hand-computed cases (overlap depth of squares and a rotated square, the
  covered share of a point grid and of a bar, CIELAB of pure red from its published value);
* each check finds the defect planted in a figure and nothing in the same figure without it
  (two texts at one spot; rotated tick labels whose boxes overlap but whose glyphs do not;
  a legend over a line but not over a reference line; 7-pt text in a wide figure; two
  legend entries of one colour and style);
* a replica of the ST quality-vs-distance figure as it was drawn before this lint (two rows
  of panels, long titles, 7-pt legends) fails: panel titles over x labels without a layout
  engine, and once tidied its legends read below 8 pt as the report shows it;
* tidying: log-axis minor labels that collide are dropped, crowded names are rotated, a legend
  over data moves out of the axes, each leaving no finding of its kind.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.transforms import Bbox

from repro.common import figure_lint, figure_tidy
from repro.common.figure_lint import (
    LEGEND_COLOURS,
    LEGEND_COVER,
    OVERLAP,
    SMALL_TEXT,
    lint,
    overlap_depth,
)
from repro.common.plotting import apply_style, plt


@pytest.fixture(autouse=True)
def _style():
    apply_style()
    yield
    plt.close("all")


def _checks(findings) -> list[str]:
    return [f["check"] for f in findings]


def _square(x0, y0, side):
    return np.array([[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]], float)


def test_overlap_depth_of_hand_computed_polygons():
    assert overlap_depth(_square(0, 0, 1), _square(0.5, 0.25, 1)) == pytest.approx(0.5)
    assert overlap_depth(_square(0, 0, 1), _square(2, 0, 1)) == pytest.approx(-1.0)
    # a unit diamond centred at (2, 0.5) reaching left to x = 2 - √2/2 ≈ 1.293; the square
    # [0, 1.5]² overlaps it by 1.5 - 1.293 along x, and along the diamond's own normals by
    # the projection of the square's corner (1.5, 0.5): (2 - 1.5)·cos45° short of its half-width
    half = math.sqrt(2) / 2
    diamond = np.array([[2 - half, 0.5], [2, 0.5 - half], [2 + half, 0.5], [2, 0.5 + half]])
    depth = overlap_depth(_square(0, 0, 1.5), diamond)
    assert depth == pytest.approx(min(1.5 - (2 - half), 0.5 - (2 - 1.5 - 0.5) * half))


def test_two_texts_at_one_spot_overlap_and_apart_do_not():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "first label", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second label", transform=ax.transAxes)
    ax.text(0.05, 0.1, "far away", transform=ax.transAxes)
    overlaps = [f for f in lint(fig) if f["check"] == OVERLAP]
    assert len(overlaps) == 1
    assert "first label" in overlaps[0]["detail"] and "second label" in overlaps[0]["detail"]


def test_rotated_labels_are_compared_as_drawn_not_by_their_boxes():
    fig, ax = plt.subplots(figsize=(6, 3))
    names = [f"condition {i}" for i in range(8)]
    ax.bar(range(8), np.arange(8) + 1.0)
    ax.set_xticks(range(8), names, rotation=45, ha="right", rotation_mode="anchor")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = ax.get_xticklabels()
    a, b = (label.get_window_extent(renderer) for label in labels[:2])
    assert Bbox.intersection(a, b) is not None  # their axis-aligned boxes do overlap
    assert OVERLAP not in _checks(lint(fig))
    ax.set_xticks(range(8), names, rotation=0)  # flat, the same names collide
    assert OVERLAP in _checks(lint(fig))


def test_only_tick_labels_in_view_count():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    ax.set_xticks([0, 0.5, 1, 1.02], ["0", "0.5", "1", "outside"])
    ax.set_xlim(0, 1)
    texts = [t.get_text() for _, t in figure_lint.drawn_texts(fig, fig.canvas.get_renderer())]
    assert "0.5" in texts and "outside" not in texts


def test_covered_share_of_a_point_grid_and_of_a_bar():
    axes_box = Bbox.from_extents(-1, -1, 200, 200)
    grid = np.array([(x, y) for x in range(0, 100, 10) for y in range(0, 100, 10)], float)
    legend = Bbox.from_extents(0, 0, 50, 20)  # x in {0..50}: 6 values, y in {0, 10, 20}: 3
    assert figure_lint._covered_share("points", grid, legend, axes_box) == pytest.approx(0.18)
    bar = Bbox.from_extents(0, 0, 10, 100)
    over_top = Bbox.from_extents(0, 80, 10, 120)
    assert figure_lint._covered_share("boxes", [bar], over_top, axes_box) == pytest.approx(0.2)


def test_a_legend_over_a_line_is_found_and_one_over_a_reference_line_is_not():
    fig, (over, beside) = plt.subplots(1, 2, figsize=(8, 3))
    x = np.linspace(0, 1, 200)
    over.plot(x, 1 - x, label="falling")  # runs through the upper left corner
    over.legend(loc="upper left")
    beside.plot(x, x, label="rising")  # the upper left corner is empty
    beside.axhline(0.95, color="k", label="reference")
    beside.legend(loc="upper left")
    covers = [f for f in lint(fig) if f["check"] == LEGEND_COVER]
    assert len(covers) == 1 and "'falling'" in covers[0]["detail"]


def test_text_below_8_pt_as_the_report_shows_it():
    # a figure the report shows at 980 / ((12 + 2 × 0.1) × 150) of its pixels: the tight box
    # is the whole figure (a frame spanning it), plus savefig's 0.1-inch padding
    fig = plt.figure(figsize=(12, 3))
    fig.patches.append(
        plt.Rectangle((0, 0), 1, 1, transform=fig.transFigure, fill=False, figure=fig)
    )
    fig.text(0.5, 0.5, "nine points", fontsize=9)
    fig.canvas.draw()
    scale = figure_lint.display_scale(fig, fig.canvas.get_renderer(), 150)
    assert scale == pytest.approx(figure_lint.REPORT_WIDTH_PX / (12.2 * 150))
    texts = figure_lint.drawn_texts(fig, fig.canvas.get_renderer())
    # 9 pt at 150 dpi is 14.06 CSS pt at full size; × 0.5355 = 7.5 pt < 8
    assert _checks(figure_lint.small_texts(texts, scale, 150)) == [SMALL_TEXT]
    assert figure_lint.small_texts(texts, 0.6, 150) == []  # 8.4 pt


def test_cielab_of_pure_red_and_legend_entries_that_look_alike():
    assert figure_lint._lab((1.0, 0.0, 0.0)) == pytest.approx([53.24, 80.09, 67.20], abs=0.05)
    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.arange(5)
    ax.plot(x, x, color="#1f77b4", label="base")
    ax.plot(x, x + 1, color="#1f78b4", label="twin of base")  # ΔE < 1
    ax.plot(x, x + 2, color="#1f77b4", ls="--", label="same colour, dashed")
    ax.plot(x, x + 3, color="tab:orange", label="orange")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
    clashes = [f["detail"] for f in lint(fig) if f["check"] == LEGEND_COLOURS]
    assert len(clashes) == 1 and "'base' and 'twin of base'" in clashes[0]


def _quality_vs_distance_as_drawn_before_the_lint():
    """The layout of st_reliability's quality_vs_distance before this lint: 2 × 2 panels in
    10 × 7.6 inches, no layout engine, long titles and x labels, 7-pt legends."""
    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.6), squeeze=False)
    for row, name in zip(axes, ("shared_program", "no_shared_program"), strict=True):
        for ax, metric in zip(row, ("l2", "cosine"), strict=True):
            for model in ("hvg", "pca"):
                ax.scatter(rng.random(100) * 3, rng.random(100), s=6, alpha=0.5, label=model)
            ax.plot(np.linspace(0, 3, 10), rng.random(10), "k-o", ms=3, label="decile means")
            ax.set_title(f"{name}, {metric}: pooled ρ = 0.52 [0.41, 0.60]")
            ax.set_xlabel(f"predicted-NN-distance ({metric}) / group median train NN distance")
            ax.set_ylabel("pearson_delta (cell-eval)")
        row[0].legend(fontsize=7)
    return fig


def test_the_st_quality_vs_distance_layout_fails_the_lint():
    fig = _quality_vs_distance_as_drawn_before_the_lint()
    found = lint(fig)
    overlaps = [f["detail"] for f in found if f["check"] == OVERLAP]
    assert any("x label 'predicted-NN" in d and "title 'no_shared_program" in d for d in overlaps)
    # constrained layout separates the rows, and fills the figure's 10 inches: the report
    # shows it at 0.64, where the 7-pt legends read as 7 pt
    figure_tidy.tidy(fig)
    assert _checks(lint(fig)) == [SMALL_TEXT]


def test_tidy_drops_colliding_minor_labels_of_a_log_axis():
    fig, ax = plt.subplots(figsize=(2.5, 2.5))
    ax.loglog([1.5e4, 6e4], [1, 10])  # under one decade: minor ticks get labels, "3×10⁴4×10⁴"
    fig.set_layout_engine("constrained")
    assert OVERLAP in _checks(lint(fig))
    assert figure_tidy.tidy(fig)
    assert OVERLAP not in _checks(lint(fig))
    assert any(t.get_text() for t in ax.get_xticklabels())  # the major labels stay


def test_tidy_rotates_crowded_names_and_moves_a_covering_legend_out():
    fig, (bars, lines) = plt.subplots(1, 2, figsize=(7, 3))
    bars.bar(range(8), np.ones(8))
    bars.set_xticks(range(8), [f"method {i}" for i in range(10, 18)])
    x = np.linspace(0, 1, 100)
    lines.plot(x, 1 - x, label="falling")
    lines.legend(loc="upper left")
    fig.set_layout_engine("constrained")  # as tidy would: the same layout before and after
    assert {OVERLAP, LEGEND_COVER} <= set(_checks(lint(fig)))
    assert figure_tidy.tidy(fig)
    left = _checks(lint(fig))
    assert OVERLAP not in left and LEGEND_COVER not in left
    assert bars.get_xticklabels()[0].get_rotation() == 45
    fig.canvas.draw()
    legend = lines.get_legend().get_window_extent()
    assert legend.x0 >= lines.get_window_extent().x1  # right of the axes
