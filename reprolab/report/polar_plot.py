"""A polar figure's overlay: the paper's pattern and the reproduction on polar axes,
normalised or in dB as the paper plots it (reprolab.physics.positions)."""

from __future__ import annotations

import math
from pathlib import Path

from reprolab.paper import Paper
from reprolab.report import plots


def polar_axes(fig_meta):
    """A figure and polar axes drawn as radiation patterns are: 0° up, θ growing towards
    +x (to the right); and the factor from the figure's angle unit to radians."""
    to_rad = math.pi / 180 if fig_meta.x_axis.unit == "deg" else 1.0
    fig, ax = plots.plt.subplots(figsize=(5, 5.6), dpi=100, subplot_kw={"projection": "polar"})
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    return fig, ax, to_rad


def below_the_circle(ax) -> None:
    """The legend under the plot: in a corner it covered the 180° label and a lobe."""
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=3)


def polar_reproduction(paper: Paper, figure_id: str, curves: dict, out_png: str | Path) -> str:
    """The reproduced curves alone ({curve_id: (angle, power)}) as the paper plots its
    polar figure (normalised, in dB, the paper's floor): the report's reproduction
    column, which on Cartesian axes showed a raw power under a dB label."""
    fig_meta = paper.figure(figure_id)
    fig, ax, to_rad = polar_axes(fig_meta)
    lowest = []
    for i, (cid, (x, y)) in enumerate(curves.items()):
        order = sorted(range(len(x)), key=x.__getitem__)
        drawn = plots.as_plotted(paper, fig_meta, cid, [y[j] for j in order])
        ax.plot([x[j] * to_rad for j in order], list(drawn), "-", color=f"C{i}", label=cid)
        lowest.append(min(drawn))
    if fig_meta.polar.db and lowest:
        ax.set_rmin(min(lowest))
    ax.set_title(f"{figure_id} reproduced (simulation output)", fontsize=9)
    below_the_circle(ax)
    fig.tight_layout()
    return plots.save_figure(fig, out_png)


def polar_overlay(paper: Paper, fig_result: dict, out_png: str | Path) -> str:
    fig_meta = paper.figure(fig_result["figure_id"])
    fig, ax, to_rad = polar_axes(fig_meta)
    lowest = []
    for i, curve in enumerate(fig_result["curves"]):
        color, cid = f"C{i}", curve["curve_id"]
        if paper.has_data(fig_meta.figure_id, cid):
            xp, yp = paper.curve_data(fig_meta.figure_id, cid)
            ax.plot([x * to_rad for x in xp], yp, "o", ms=3, color=color, alpha=0.6, label="paper")
            lowest.append(min(yp))
        if "sim" in curve:
            sim_x = paper.x_in_figure_units(
                fig_meta.figure_id, curve.get("x_column"), curve["sim"]["x"]
            )
            sim_y = plots.as_plotted(paper, fig_meta, cid, curve["sim"]["y"])
            ax.plot([x * to_rad for x in sim_x], list(sim_y), "-", color=color, label="reproduced")
    for ref in (c for c in fig_meta.curves if getattr(c, "reference", False)):
        xr, yr = paper.curve_data(fig_meta.figure_id, ref.curve_id)
        ax.plot(
            [x * to_rad for x in xr], yr, "--", color="k", label=f"paper reference: {ref.label}"
        )
    if fig_meta.polar.db and lowest:
        ax.set_rmin(min(lowest))  # the plot's floor: r below it is not drawn
    ax.set_title(f"{fig_meta.figure_id}: paper against run", fontsize=9)
    below_the_circle(ax)
    fig.tight_layout()
    return plots.save_figure(fig, out_png)
