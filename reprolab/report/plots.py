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
    fig_meta = paper.figure(fig_result["figure_id"])
    labels = {c.curve_id: c.label for c in fig_meta.curves}
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for i, curve in enumerate(fig_result["curves"]):
        color = f"C{i}"
        xp, yp = paper.curve_data(fig_meta.figure_id, curve["curve_id"])
        ax.plot(
            xp, yp, "o", ms=3, color=color, alpha=0.6, label=f"paper: {labels[curve['curve_id']]}"
        )
        if "sim" in curve:
            ax.plot(
                curve["sim"]["x"],
                curve["sim"]["y"],
                "-",
                color=color,
                lw=1.5,
                label=f"reproduced: {curve['curve_id']}",
            )
    ax.set_xlabel(fig_meta.x_label)
    ax.set_ylabel(fig_meta.y_label)
    ax.set_title(f"{fig_meta.figure_id}: {fig_result['classification']}")
    xs = [
        x
        for c in fig_result["curves"]
        for x in paper.curve_data(fig_meta.figure_id, c["curve_id"])[0]
    ]
    ax.set_xlim(min(xs), max(xs))
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out_png)


def reproduction(paper: Paper, figure_id: str, curves: dict, out_png: str | Path) -> str:
    """The reproduced curves alone ({curve_id: (x, y)}) on the paper figure's axes: the
    report's "reproduction" column where the simulation wrote no plot of its own."""
    fig_meta = paper.figure(figure_id)
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for i, (curve_id, (x, y)) in enumerate(curves.items()):
        order = sorted(range(len(x)), key=x.__getitem__)
        xs, ys = [x[j] for j in order], [y[j] for j in order]
        ax.plot(xs, ys, "-" if len(xs) > 30 else "o-", color=f"C{i}", ms=4, label=curve_id)
    ax.set_xlabel(fig_meta.x_label)
    ax.set_ylabel(fig_meta.y_label)
    ax.set_title(f"{figure_id} reproduced (simulation output)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out_png)


def save_figure(fig, out_png: str | Path) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return str(atomic_write_bytes(out_png, buf.getvalue()))
