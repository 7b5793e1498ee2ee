"""A polar figure's overlay: the paper's pattern and the reproduction on polar axes,
normalised or in dB as the paper plots it (reprolab.physics.positions)."""

from __future__ import annotations

import math
from pathlib import Path

from reprolab.paper import Paper
from reprolab.report import plots


def polar_overlay(paper: Paper, fig_result: dict, out_png: str | Path) -> str:
    fig_meta = paper.figure(fig_result["figure_id"])
    to_rad = math.pi / 180 if fig_meta.x_axis.unit == "deg" else 1.0
    fig, ax = plots.plt.subplots(figsize=(5, 5), dpi=100, subplot_kw={"projection": "polar"})
    ax.set_theta_zero_location("N")  # 0° up, as radiation patterns are drawn
    ax.set_theta_direction(-1)  # θ grows towards +x, to the right
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
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(-0.1, -0.1))
    fig.tight_layout()
    return plots.save_figure(fig, out_png)
