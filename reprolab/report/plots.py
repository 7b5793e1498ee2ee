"""Overlay plots: the reproduction drawn over the paper's digitized curves."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reprolab.fileio import atomic_write_bytes  # noqa: E402
from reprolab.paper import Paper  # noqa: E402


def overlay(paper: Paper, fig_result: dict, out_png: str | Path) -> str:
    """Paper points and reproduced lines per curve; right-axis curves on a second y
    axis; a curve without digitized data (qualitative) shows the reproduction alone.

    No overlay's title names a class: it is drawn when the curves are compared, before
    the stage's verdict may cap the figure's class (report/verdicts.py), so the class is
    said only by the report's text, from the same verdict everywhere."""
    fig_meta = paper.figure(fig_result["figure_id"])
    meta = {c.curve_id: c for c in fig_meta.curves}
    # drawn small and read at about its own size in the report's three-image row, so
    # that the legend's text stays legible once the page scales the image down
    fig, ax = plt.subplots(figsize=(5, 3.6), dpi=100)
    right = ax.twinx() if fig_meta.y_axes.right else None
    xs: list[float] = []
    for i, curve in enumerate(fig_result["curves"]):
        color, cid = f"C{i}", curve["curve_id"]
        on = right if right is not None and meta[cid].y_axis == "right" else ax
        if meta[cid].digitized:  # in the figure's x unit, as its axis label says
            xp, yp = paper.curve_data(fig_meta.figure_id, cid)
            on.plot(xp, yp, "o", ms=3, color=color, alpha=0.6, label=f"paper: {meta[cid].label}")
            xs += xp
        if "sim" in curve:
            sim_x = paper.x_in_figure_units(
                fig_meta.figure_id, curve.get("x_column"), curve["sim"]["x"]
            )
            sim_y = as_plotted(paper, fig_meta, cid, curve["sim"]["y"])
            style = line_style(len(sim_x))
            on.plot(sim_x, sim_y, style, color=color, lw=1.5, ms=4, label=f"reproduced: {cid}")
            xs += [] if meta[cid].digitized else list(sim_x)
    for ref in (c for c in fig_meta.curves if getattr(c, "reference", False)):
        on = right if right is not None and ref.y_axis == "right" else ax
        xr, yr = paper.curve_data(fig_meta.figure_id, ref.curve_id)
        on.plot(xr, yr, "--", color="k", lw=1.2, label=f"paper reference: {ref.label}")
        xs += xr
    log_axes_as_the_paper(fig_meta, ax, right)
    ax.set_xlabel(fig_meta.x_label)
    ax.set_ylabel(fig_meta.y_axes.left.label)
    if right is not None:
        right.set_ylabel(fig_meta.y_axes.right.label)
    qualitative = " (qualitative: no digitized data)" if fig_result.get("qualitative") else ""
    ax.set_title(f"{fig_meta.figure_id}: paper against run{qualitative}")
    if xs:
        ax.set_xlim(min(xs), max(xs))
    handles = [h for a in (ax, right) if a is not None for h in a.get_legend_handles_labels()[0]]
    ax.legend(handles=handles, fontsize=10, framealpha=0.8)
    fig.tight_layout()
    return save_figure(fig, out_png)


def log_axes_as_the_paper(fig_meta, ax, right) -> None:
    """A y axis the paper draws on a log scale drawn log here too."""
    for axis, side in ((ax, fig_meta.y_axes.left), (right, fig_meta.y_axes.right)):
        if axis is not None and side is not None and side.scale == "log":
            axis.set_yscale("log")


def as_plotted(paper: Paper, fig_meta, curve_id: str, y: list[float]):
    """A polar figure's reproduction as the paper plots it (normalised, in dB)."""
    if getattr(fig_meta, "polar", None) is None or not paper.has_data(fig_meta.figure_id, curve_id):
        return y
    from reprolab.physics import positions

    _, yp = paper.curve_data(fig_meta.figure_id, curve_id)
    ctx = positions.axis_context(fig_meta, curve_id)
    ctx["y_scale"] = "linear"  # a log axis is drawn log, not as ln(y)
    return positions.to_compared_y(yp, y, ctx)[1]


def field_map(paper: Paper, fig_result: dict, out_png: str | Path) -> str:
    """A reproduced field map drawn as the paper's: its axes (labels, units, limits),
    colour map and colour scale (vmin, vmax), the maximum marked."""
    from matplotlib.colors import LogNorm, Normalize

    fig_meta = paper.figure(fig_result["figure_id"])
    fm = fig_meta.field_map
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    (curve,) = fig_result["curves"]
    if "sim" in curve:
        sim = curve["sim"]
        norm = (LogNorm if fm.colour.scale == "log" else Normalize)(vmin=fm.vmin, vmax=fm.vmax)
        mesh = ax.pcolormesh(
            sim["x"], sim["y"], sim["z"], shading="auto", cmap=fm.colormap, norm=norm
        )
        fig.colorbar(mesh, ax=ax, label=fm.colour.label)
        ax.plot(sim["x_at_max"], sim["y_at_max"], "c+", ms=12, mew=2)
        ax.set_title(
            f"{fig_meta.figure_id} (qualitative: field map); "
            f"max {sim['max']:.3g} at ({sim['x_at_max']:.4g}, {sim['y_at_max']:.4g})",
            fontsize=9,
        )
    else:
        ax.set_title(f"{fig_meta.figure_id}: {curve.get('error', 'no field map')}", fontsize=8)
    ax.set_xlabel(fig_meta.x_axis.label)
    ax.set_ylabel(fig_meta.y_axes.left.label)
    if fm.x_limits:
        ax.set_xlim(*fm.x_limits)
    if fm.y_limits:
        ax.set_ylim(*fm.y_limits)
    fig.tight_layout()
    return save_figure(fig, out_png)


def reproduction(paper: Paper, figure_id: str, curves: dict, out_png: str | Path) -> str:
    """The reproduced curves alone ({curve_id: (x, y)}) on the paper figure's axes: the
    report's "reproduction" column where the simulation wrote no plot of its own."""
    fig_meta = paper.figure(figure_id)
    # drawn small and read at about its own size in the report's three-image row, so
    # that the legend's text stays legible once the page scales the image down
    fig, ax = plt.subplots(figsize=(5, 3.6), dpi=100)
    right = ax.twinx() if fig_meta.y_axes.right else None
    for i, (curve_id, (x, y)) in enumerate(curves.items()):
        order = sorted(range(len(x)), key=x.__getitem__)
        xs, ys = [x[j] for j in order], [y[j] for j in order]
        on = right if right is not None and fig_meta.curve_axis(curve_id) == "right" else ax
        on.plot(xs, ys, line_style(len(xs)), color=f"C{i}", ms=4, label=curve_id)
    log_axes_as_the_paper(fig_meta, ax, right)
    ax.set_xlabel(fig_meta.x_label)
    ax.set_ylabel(fig_meta.y_axes.left.label)
    if right is not None:  # a right-hand axis is drawn on the right, with its own scale
        right.set_ylabel(fig_meta.y_axes.right.label)
    ax.set_title(f"{figure_id} reproduced (simulation output)")
    handles = [h for a in (ax, right) if a is not None for h in a.get_legend_handles_labels()[0]]
    ax.legend(handles=handles, fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out_png)


def band_overlay(paper: Paper, entry: dict, out_png: str | Path) -> str:
    """A band diagram: the paper's digitized omega(k) (points) and the run's modes
    (crosses, per band) on the labelled k path, symmetry points ticked, the stated gaps
    shaded and the measured ones outlined, missing modes circled."""
    fig_meta = paper.figure(entry["figure_id"])
    fig, ax = plt.subplots(figsize=(6, 5), dpi=100)
    stated = paper.band_points(entry["figure_id"])
    ax.plot([p[0] for p in stated], [p[1] for p in stated], "o", ms=3, color="0.4", alpha=0.6)
    ax.plot([], [], "o", ms=3, color="0.4", label="paper (digitized)")
    by_band: dict[int, list] = {}
    for m in entry.get("measured", []):
        by_band.setdefault(m["band"], []).append((m["k_path"], m["freq"]))
    for i, (band, pts) in enumerate(sorted(by_band.items())):
        ax.plot(
            *zip(*pts, strict=True), "x", ms=6, mew=1.5, color=f"C{i}", label=f"run: band {band}"
        )
    lost = entry.get("missing", [])
    if lost:
        ax.plot(
            [p["k_path"] for p in lost],
            [p["stated"] for p in lost],
            "o",
            ms=11,
            mfc="none",
            mec="red",
            label="missing in the run",
        )
    for gap in entry.get("gaps", []):
        st, me = gap["stated"], gap.get("measured")
        if st.get("lower") is not None and st.get("upper") is not None:
            ax.axhspan(st["lower"], st["upper"], color="gold", alpha=0.25)
        if me and me["upper"] > me["lower"]:
            ax.axhspan(me["lower"], me["upper"], fill=False, hatch="//", ec="C1", lw=0)
    ticks = entry.get("k_path_labels", [])
    ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks])
    for t in ticks:
        ax.axvline(t[0], color="0.85", lw=0.8, zorder=0)
    if ticks:
        ax.set_xlim(ticks[0][0], ticks[-1][0])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(fig_meta.x_axis.label)
    ax.set_ylabel(fig_meta.y_axes.left.label)
    ax.set_title(
        f"{entry['figure_id']}: paper against run (gaps: stated shaded, run hatched)",
        fontsize=9,
    )
    # below the axes: inside, any corner covers some band's points; beside them, the
    # figure grows wide and the report's half-width cell shrinks its text
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3)
    fig.tight_layout()
    return save_figure(fig, out_png)


def table_overlay(entry: dict, out_png: str | Path) -> str:
    """A table: each stated value against the run's, one panel per measure (Q and
    linewidth on log axes), y = x drawn; missing and above-measurable values marked."""
    panels: dict[str, list] = {}
    for row in entry.get("rows", []):
        for v in row["values"]:
            if isinstance(v.get("stated"), (int, float)):
                panels.setdefault(v["measure"], []).append(v)
    fig, axes = plt.subplots(
        1, max(len(panels), 1), figsize=(4 * max(len(panels), 1), 3.6), dpi=100
    )
    axes = [axes] if not hasattr(axes, "__len__") else list(axes)
    for ax, (measure, values) in zip(axes, panels.items(), strict=False):
        got = [v for v in values if isinstance(v.get("measured"), (int, float))]
        ax.plot([v["stated"] for v in got], [v["measured"] for v in got], "o", color="C0")
        lo_hi = [v["stated"] for v in values] + [v["measured"] for v in got]
        lo, hi = min(lo_hi), max(lo_hi)
        ax.plot([lo, hi], [lo, hi], "-", color="0.6", lw=0.8)
        lost = [v for v in values if v not in got]
        for v in lost:
            ax.axvline(v["stated"], color="red", ls=":", lw=1)
        if measure in ("quality_factor", "linewidth") and lo > 0:
            ax.set_xscale("log")
            ax.set_yscale("log")
        unit = values[0].get("unit") or ""
        unit = "" if unit in ("", "1") else f" ({unit})"  # no "(1)" after a pure number
        ax.set_xlabel(f"paper: {measure.replace('_', ' ')}{unit}")
        # the red line's meaning only where one is drawn
        ax.set_ylabel("run (red dotted line: not measured)" if lost else "run")
    axes[0].set_title(f"{entry['figure_id']}: paper against run", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out_png)


def line_style(points: int) -> str:
    """A sweep's few points drawn as points (joined); a spectrum's many as a line."""
    return "-" if points > 30 else "o-"


def save_figure(fig, out_png: str | Path) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return str(atomic_write_bytes(out_png, buf.getvalue()))
