"""Layout fixes every figure gets before it is saved (``repro.common.plotting.save_figure``),
for the overlaps that need no knowledge of the figure:

* a figure without a layout engine gets constrained layout (titles, labels, colour bars and
  axes legends get room; ``tight_layout`` callers keep theirs);
* tick labels of one axis that run into each other: numeric ones are thinned (minor labels
  first, then every k-th major label), categorical ones are rotated by 45°;
* an axes legend that covers more than ``figure_lint.LEGEND_COVER_SHARE`` of a plotted series
  moves to the right of its axes.

What these cannot fix, ``repro.common.figure_lint`` reports.
"""

from __future__ import annotations

import itertools

from matplotlib.figure import Figure
from matplotlib.ticker import (
    FixedFormatter,
    FixedLocator,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from repro.common import figure_lint


def tidy(fig: Figure) -> bool:
    """Apply the fixes to ``fig`` (drawn once here); True when one changed it, so that it
    must be drawn again before its texts are measured."""
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
        try:
            fig.canvas.draw()
        except ZeroDivisionError:  # colour bars that stole their axes' space cannot be laid out
            fig.set_layout_engine("none")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            changed |= _untangle_tick_labels(ax, axis, renderer)
        changed |= _legend_outside_if_covering(ax, renderer)
    return changed


def _drawn_labels(ticks) -> list:
    return [
        label
        for tick in ticks
        for label in (tick.label1, tick.label2)
        if label.get_visible() and label.get_text().strip()
    ]


def _colliding(labels, renderer) -> bool:
    tolerance = figure_lint.OVERLAP_TOLERANCE_PT * renderer.points_to_pixels(1.0)
    shapes = [figure_lint._corners(t, renderer) for t in labels]
    return any(
        figure_lint.overlap_depth(a, b) > tolerance for a, b in itertools.combinations(shapes, 2)
    )


def _is_number(text: str) -> bool:
    try:
        float(figure_lint._plain(text).replace("−", "-"))
    except ValueError:
        return False
    return True


def _categorical(axis, labels) -> bool:
    """Names (methods, groups), which thinning would lose, rather than numbers: categorical
    units, fixed labels, or ticks placed by hand (``set_xticks(x, names)``) that are not all
    numbers."""
    if axis.units is not None or isinstance(axis.get_major_formatter(), FixedFormatter):
        return True
    if not isinstance(axis.get_major_locator(), FixedLocator):
        return False
    return not all(_is_number(label.get_text()) for label in labels)


def _untangle_tick_labels(ax, axis, renderer) -> bool:
    """One pass (the lint reports what is left): minor labels off, then rotate names or
    halve the number of numeric ticks. Ticks are re-placed at every draw, so this changes
    locators and formatters, never single labels."""
    if not (ax.axison and axis.get_visible()) or ax.name != "rectilinear":
        return False
    drawn = axis._update_ticks()  # the ticks in view (see figure_lint._drawn_tick_labels)
    if not _colliding(_drawn_labels(drawn), renderer):
        return False
    minor = set(map(id, axis.get_minor_ticks()))
    majors = [t for t in drawn if id(t) not in minor]
    if len(majors) < len(drawn):  # log axes label 2×10³, 3×10³, ... between the decades
        axis.set_minor_formatter(NullFormatter())
        if not _colliding(_drawn_labels(majors), renderer):
            return True
    locator = axis.get_major_locator()
    if _categorical(axis, _drawn_labels(majors)):
        if axis is ax.xaxis:  # "xtick" mode aligns the label's end under its tick
            axis.set_tick_params(which="major", labelrotation=45, labelrotation_mode="xtick")
    elif isinstance(locator, LogLocator):
        axis.set_major_locator(LogLocator(numticks=max(2, len(majors) // 2)))
    elif isinstance(locator, FixedLocator):
        axis.set_major_locator(FixedLocator(locator.locs[::2]))
    else:
        axis.set_major_locator(MaxNLocator(nbins=max(2, len(majors) // 2)))
    return True


def _legend_outside_if_covering(ax, renderer) -> bool:
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return False
    share, _ = figure_lint.legend_cover(legend, ax, renderer)
    if share <= figure_lint.LEGEND_COVER_SHARE:
        return False
    legend.set_loc("upper left")
    legend.set_bbox_to_anchor((1.02, 1.0), transform=ax.transAxes)
    return True
