"""A lint of a drawn matplotlib figure, as the report will show it.

Run on the live Figure just before it is saved (``repro.common.plotting.save_figure``), with
the renderer's own bounding boxes, so it sees the laid-out figure: no two texts overlap
(titles, axis labels, tick labels, legend texts, annotations, table cells), no legend covers
more than a small share of any plotted series, every text is at least 8 pt at the size the
report displays the PNG, and the entries of a legend differ in colour or style.

Each finding is ``{"check", "detail"}``; ``lint`` returns them all (it never raises), and
``save_figure`` writes them beside the PNG (``<name>.lint.json``), where
``repro.common.figure_lint_check`` compares them with the allow-list.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
from matplotlib import colors as mcolors
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

OVERLAP, LEGEND_COVER, SMALL_TEXT, LEGEND_COLOURS = (
    "overlap",
    "legend_cover",
    "small_text",
    "legend_colours",
)
CHECKS = (OVERLAP, LEGEND_COVER, SMALL_TEXT, LEGEND_COLOURS)

# The report (Snakemake's, with repro.common.report_view) shows a figure at most this many
# CSS pixels wide: the content beside the sidebar in a 1366×768 window, measured in Chromium
# (tests/workflow/test_report_browser.py checks it). A wider PNG is scaled down to it.
REPORT_WIDTH_PX = 980
CSS_PX_PER_INCH = 96  # a browser shows one PNG pixel as one CSS pixel, 96 to the inch
MIN_TEXT_PT = 8.0
# Two texts overlap when their shapes share more than this depth (points) in both directions:
# glyph boxes that merely touch are not flagged.
OVERLAP_TOLERANCE_PT = 0.5
# A legend may cover at most this share of one plotted series (its sampled points, or a
# bar's area); more hides data a reader needs.
LEGEND_COVER_SHARE = 0.05
# Legend entries whose colours lie closer than this (CIE76 ΔE in CIELAB) read as one colour,
# unless their line style, marker or hatch differs.
MIN_COLOUR_DISTANCE = 10.0
SAMPLE_STEP_PX = 2.0  # lines are sampled this densely (display pixels) for the cover share


def lint(fig: Figure, *, savefig_dpi: float | None = None, draw: bool = True) -> list[dict]:
    """Every finding of the four checks on ``fig`` as it would be saved with
    ``bbox_inches="tight"`` at ``savefig_dpi`` (default: rcParams["savefig.dpi"]);
    ``draw=False`` where the figure was drawn since its last change."""
    import matplotlib as mpl

    dpi = float(savefig_dpi or mpl.rcParams["savefig.dpi"])
    if draw:  # lays the figure out (layout engine, ticks) as savefig will
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = drawn_texts(fig, renderer)
    return [
        *overlaps(texts, renderer, fig.dpi),
        *legend_covers(fig, renderer),
        *small_texts(texts, display_scale(fig, renderer, dpi), dpi),
        *legend_colour_clashes(fig),
    ]


# --- which texts the figure draws ------------------------------------------------------------
def _drawn_tick_labels(fig: Figure) -> tuple[set[int], set[int]]:
    """ids of the tick labels (and axis labels) that will be drawn, and of all of them."""
    drawn, every = set(), set()
    for ax in fig.get_axes():
        for axis in ax._axis_map.values():
            ticks = axis.get_major_ticks() + axis.get_minor_ticks()
            every.update(id(label) for t in ticks for label in (t.label1, t.label2))
            every.update((id(axis.label), id(axis.offsetText)))
            if not (ax.axison and axis.get_visible()):
                continue  # set_axis_off: none of its ticks or labels are drawn
            drawn.update((id(axis.label), id(axis.offsetText)))
            # the ticks inside the view interval, which Axis.draw draws (private, stable
            # since matplotlib 1.x; the public getters also return ticks outside the view)
            for tick in axis._update_ticks():
                drawn.update(id(label) for label in (tick.label1, tick.label2))
    return drawn, every


def _roles(fig: Figure) -> dict[int, str]:
    roles = {}
    for ax in fig.get_axes():
        for title in (ax.title, ax._left_title, ax._right_title):
            roles[id(title)] = "title"
        for name, axis in ax._axis_map.items():
            roles[id(axis.label)] = f"{name} label"
            roles[id(axis.offsetText)] = f"{name} offset"
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                roles.update((id(t), f"{name} tick label") for t in (tick.label1, tick.label2))
        for text in ax.texts:
            roles[id(text)] = "annotation"
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.get_axes())]:
        if legend is not None:
            roles[id(legend.get_title())] = "legend title"
            roles.update((id(t), "legend text") for t in legend.get_texts())
    for name in ("_suptitle", "_supxlabel", "_supylabel"):
        if getattr(fig, name, None) is not None:
            roles[id(getattr(fig, name))] = "figure title"
    return roles


def drawn_texts(fig: Figure, renderer) -> list[tuple[str, Text]]:
    """(role, text) of every non-empty, visible text the figure draws, table cells included."""
    drawn_axis_texts, axis_texts = _drawn_tick_labels(fig)
    roles = _roles(fig)
    found = {id(t): t for t in fig.findobj(Text)}
    for ax in fig.get_axes():
        for table in ax.tables:
            for cell in table.get_celld().values():
                found[id(cell.get_text())] = cell.get_text()
                roles[id(cell.get_text())] = "table cell"
    return [
        (roles.get(key, "text"), text)
        for key, text in found.items()
        if (key not in axis_texts or key in drawn_axis_texts)
        and text.get_visible()
        and text.get_text().strip()
        and (text.axes is None or text.axes.get_visible())
    ]


def _plain(text: str) -> str:
    """Mathtext as read: ``$\\mathdefault{3\\times10^{4}}$`` → ``3×10^4``."""
    text = text.replace("\\times", "×").replace("\\mathdefault", "").replace("\\minus", "−")
    return re.sub(r"[${}]", "", text)


def _name(role: str, text: Text) -> str:
    words = " ".join(_plain(text.get_text()).split())
    return f"{role} '{words[:50]}{'…' if len(words) > 50 else ''}'"


# --- check 1: overlapping texts --------------------------------------------------------------
def _corners(text: Text, renderer) -> np.ndarray:
    """The text's box as drawn, a 4×2 polygon in display pixels (rotated with the text:
    the axis-aligned extent of a 45° label is far larger than its glyphs)."""
    extent = text.get_window_extent(renderer)
    angle = text.get_rotation() % 180
    if min(angle, 180 - angle) < 1e-6 or abs(angle - 90) < 1e-6:
        x0, y0, x1, y1 = extent.x0, extent.y0, extent.x1, extent.y1
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    original = text.get_rotation()
    text.set_rotation(0)
    flat = text.get_window_extent(renderer)
    text.set_rotation(original)
    theta = math.radians(original)
    u = np.array([math.cos(theta), math.sin(theta)]) * flat.width / 2
    v = np.array([-math.sin(theta), math.cos(theta)]) * flat.height / 2
    centre = np.array([(extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2])
    return np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v])


def overlap_depth(a: np.ndarray, b: np.ndarray) -> float:
    """How deep two convex polygons overlap (separating axis theorem): the smallest
    projection overlap over the edge normals; ≤ 0 when they are apart."""
    depth = math.inf
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            normal = np.array([-edge[1], edge[0]])
            length = np.hypot(*normal)
            if length == 0:
                continue
            normal = normal / length
            pa, pb = a @ normal, b @ normal
            depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return depth


def overlaps(texts, renderer, dpi: float) -> list[dict]:
    tolerance = OVERLAP_TOLERANCE_PT * dpi / 72
    shapes = [_corners(text, renderer) for _, text in texts]
    if len(shapes) < 2:
        return []
    low = np.array([s.min(axis=0) for s in shapes])
    high = np.array([s.max(axis=0) for s in shapes])
    # candidate pairs: axis-aligned boxes that overlap by the tolerance (vectorised, as a
    # table or an annotated heatmap has hundreds of texts); then the exact rotated test
    depth = np.minimum(high[:, None], high[None]) - np.maximum(low[:, None], low[None])
    candidates = np.argwhere(np.triu(np.all(depth > tolerance, axis=2), k=1))
    found = []
    for i, j in candidates:
        if overlap_depth(shapes[i], shapes[j]) > tolerance:
            (ra, ta), (rb, tb) = texts[i], texts[j]
            found.append({"check": OVERLAP, "detail": f"{_name(ra, ta)} and {_name(rb, tb)}"})
    return found


# --- check 2: legends over data --------------------------------------------------------------
def _in_data_coords(artist, ax) -> bool:
    """Plotted data, not a reference line spanning the axes (axhline: an axes transform)."""
    transform = artist.get_transform()
    return transform.contains_branch(ax.transData)


def _sample_path(points: np.ndarray) -> np.ndarray:
    """A polyline's vertices plus points every SAMPLE_STEP_PX along each segment."""
    points = points[np.all(np.isfinite(points), axis=1)]
    if len(points) < 2:
        return points
    samples = [points[:1]]
    for p, q in itertools.pairwise(points):
        n = max(1, int(np.hypot(*(q - p)) // SAMPLE_STEP_PX))
        samples.append(p + (q - p) * np.arange(1, n + 1)[:, None] / n)
    return np.concatenate(samples)


def _series(ax) -> list[tuple[str, str, np.ndarray | list]]:
    """(name, kind, data) per plotted series: "points" (display coordinates) for lines,
    markers and error bars; "boxes" (display-coordinate extents) for bars."""
    series = []
    for line in ax.get_lines():
        if line.get_visible() and _in_data_coords(line, ax):
            xy = line.get_transform().transform(line.get_xydata())
            sampled = _sample_path(xy) if line.get_linestyle() not in ("None", "") else xy
            series.append((line.get_label(), "points", sampled))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and coll.get_offset_transform().contains_branch(
            ax.transData
        ):
            xy = coll.get_offset_transform().transform(coll.get_offsets())
            series.append((coll.get_label(), "points", xy))
        elif isinstance(coll, LineCollection) and _in_data_coords(coll, ax):
            segments = [coll.get_transform().transform(s) for s in coll.get_segments()]
            points = [_sample_path(s) for s in segments if len(s)]
            if points:
                series.append((coll.get_label(), "points", np.concatenate(points)))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible() and _in_data_coords(patch, ax):
            box = patch.get_window_extent()
            if box.width * box.height > 0:
                series.append((patch.get_label(), "boxes", [box]))
    return series


def _covered_share(kind: str, data, legend_box, axes_box) -> float:
    if kind == "points":
        points = np.asarray(data)
        inside = np.all((points >= axes_box.p0) & (points <= axes_box.p1), axis=1)
        points = points[inside]  # what the axes clips is not shown anyway
        if not len(points):
            return 0.0
        under = np.all((points >= legend_box.p0) & (points <= legend_box.p1), axis=1)
        return float(under.mean())
    (box,) = data
    shown = box.intersection(box, axes_box)
    if shown is None or shown.width * shown.height == 0:
        return 0.0
    hidden = shown.intersection(shown, legend_box)
    return 0.0 if hidden is None else hidden.width * hidden.height / (shown.width * shown.height)


def legend_cover(legend, ax, renderer) -> tuple[float, str]:
    """(share, name) of the plotted series of ``ax`` that ``legend`` covers most."""
    box, axes_box = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    if box.intersection(box, axes_box) is None:
        return 0.0, ""
    shares = [(_covered_share(k, d, box, axes_box), n) for n, k, d in _series(ax)]
    return max(shares, default=(0.0, ""))


def legend_covers(fig: Figure, renderer) -> list[dict]:
    legends = [(ax.get_legend(), [ax]) for ax in fig.get_axes() if ax.get_legend()]
    legends += [(legend, fig.get_axes()) for legend in fig.legends]
    found = []
    for legend, axes in legends:
        if not legend.get_visible():
            continue
        for ax in axes:
            share, name = legend_cover(legend, ax, renderer)
            if share > LEGEND_COVER_SHARE:
                found.append(
                    {
                        "check": LEGEND_COVER,
                        "detail": f"the legend covers {share:.0%} of '{name}' "
                        f"(axes '{ax.get_title()}')",
                    }
                )
    return found


# --- check 3: text size as displayed ---------------------------------------------------------
def display_scale(fig: Figure, renderer, savefig_dpi: float) -> float:
    """How much the report shrinks the saved PNG: its width (tight bounding box plus the
    savefig padding) against REPORT_WIDTH_PX; 1 when it fits."""
    import matplotlib as mpl

    pad = float(mpl.rcParams["savefig.pad_inches"])
    width_in = fig.get_tightbbox(renderer).width + 2 * pad
    return min(1.0, REPORT_WIDTH_PX / (width_in * savefig_dpi))


def small_texts(texts, scale: float, savefig_dpi: float) -> list[dict]:
    """Texts below MIN_TEXT_PT as displayed: size × (PNG pixels per CSS pixel) × scale."""
    shown = savefig_dpi / CSS_PX_PER_INCH * scale
    small = [(role, t) for role, t in texts if t.get_fontsize() * shown < MIN_TEXT_PT - 1e-9]
    if not small:
        return []
    by_size = sorted(small, key=lambda rt: rt[1].get_fontsize())
    listed = ", ".join(_name(r, t) for r, t in by_size[:3])
    return [
        {
            "check": SMALL_TEXT,
            "detail": f"{len(small)} text(s) below {MIN_TEXT_PT:g} pt as the report shows the "
            f"figure (scaled to {scale:.2f}); smallest {by_size[0][1].get_fontsize():g} pt "
            f"→ {by_size[0][1].get_fontsize() * shown:.1f} pt: {listed}",
        }
    ]


# --- check 4: legend colours -----------------------------------------------------------------
def _lab(rgb) -> np.ndarray:
    """sRGB (0–1) to CIELAB (D65)."""
    c = np.asarray(rgb[:3], dtype=float)
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _look(handle) -> tuple[tuple, tuple | None]:
    """(style, colour) of a legend handle: what besides colour tells entries apart."""
    if isinstance(handle, Line2D):
        style = ("line", handle.get_linestyle(), handle.get_marker())
        return style, mcolors.to_rgba(handle.get_color())
    if hasattr(handle, "get_hatch") and hasattr(handle, "get_facecolor"):
        face = np.atleast_2d(handle.get_facecolor())
        colour = tuple(face[0]) if len(face) else None
        paths = getattr(handle, "get_paths", lambda: [])()  # a scatter's marker shape
        shape = paths[0].vertices.round(2).tobytes() if paths else b""
        return ("patch", handle.get_hatch(), shape), colour
    return ("other", type(handle).__name__), None


def legend_colour_clashes(fig: Figure) -> list[dict]:
    legends = [ax.get_legend() for ax in fig.get_axes() if ax.get_legend()] + list(fig.legends)
    found = []
    for legend in legends:
        entries = [
            (text.get_text(), *_look(handle))
            for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=False)
            if handle is not None
        ]
        for (na, sa, ca), (nb, sb, cb) in itertools.combinations(entries, 2):
            if ca is None or cb is None or sa != sb:
                continue
            distance = float(np.linalg.norm(_lab(ca) - _lab(cb)))
            if distance < MIN_COLOUR_DISTANCE:
                found.append(
                    {
                        "check": LEGEND_COLOURS,
                        "detail": f"legend entries '{na}' and '{nb}' share a look "
                        f"(colour ΔE {distance:.1f}, same style)",
                    }
                )
    return found
