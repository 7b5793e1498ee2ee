"""The estimated discretisation error beside a figure's compared numbers: the stage's
convergence.json (resolution evidence: the coarser runs' Richardson estimate or the 2x
rerun's change) read for the figure's curves, so that a reader sees how far the grid
alone may move each reproduced number."""

from __future__ import annotations

import math
from pathlib import Path

from reprolab.fileio import read_json
from reprolab.report.fmt import cell, table_header

RESOLUTION_VARIANTS = ("resolution_coarse", "resolution_2x")


def _fmt(v, spec=".3g") -> str:
    return "–" if isinstance(v, float) and not math.isfinite(v) else cell(v, spec)


def figure_rows(fig_id: str, conv: dict) -> list[dict]:
    """The resolution evidence's quantities of one figure's curves."""
    return [
        q
        for q in conv.get("quantities", [])
        if q.get("variant") in RESOLUTION_VARIANTS and q["name"].startswith(f"{fig_id}/")
    ]


def error_lines(fig_id: str, stage_dir: Path) -> list[str]:
    """A table of the figure's reproduced numbers and their estimated discretisation error
    (relative, like the convergence limits); nothing when the stage has no evidence."""
    path = Path(stage_dir) / "convergence.json"
    if not path.is_file():
        return []
    conv = read_json(path)
    rows = figure_rows(fig_id, conv)
    if not rows:
        return []
    md = [
        "",
        "Estimated discretisation error of the reproduced numbers (relative; "
        "`resolution_coarse`: Richardson estimate at the run's resolution from two coarser "
        "runs, `resolution_2x`: the change at twice the resolution):",
        "",
        *escalation_lines(conv),
        *table_header("quantity", "reproduced", "est. error", "order", "status"),
    ]
    for q in rows:
        md.append(
            f"| {q['name'][len(fig_id) + 1 :]} | {_fmt(q.get('value_n'), '.5g')} | "
            f"{_fmt(q.get('error_estimate'))} | {order_cell(q)} | {q['status']} |"
        )
    return [*md, ""]


def escalation_lines(conv: dict) -> list[str]:
    """What the coarser runs found when the 2x rerun was run after them and decided
    (`checks.convergence_method: auto` in 2D), or that they sufficed."""
    esc = conv.get("escalation")
    if not esc:
        return []
    if not esc.get("escalated"):
        return [f"The coarser runs showed convergence ({esc['coarse_status']}): no 2x rerun.", ""]
    why = "; ".join(esc["why"][:3]) + ("; ..." if len(esc["why"]) > 3 else "")
    return [
        f"The coarser runs did not show convergence ({esc['coarse_status']}: {why}); the 2x "
        "rerun was run and decided: the errors below are its changes.",
        "",
    ]


def order_cell(q: dict) -> str:
    """The observed order, and what the estimate did when it could not use it as it is
    (far from second order, oscillating changes, no order fitted)."""
    order, note = q.get("order"), q.get("note") or ""
    if order and "far from the scheme's second order" in note:
        return (
            f"{order:.2f} (far from 2: estimated with 2)"
            if order > 2
            else f"{order:.2f} (far from 2)"
        )
    if order:
        return _fmt(order, ".2f")
    if "changes oscillate" in note:
        return "– (oscillates: half the range)"
    if "order not determined" in note:
        return "– (not determined: " + note.split("estimated with ")[-1].split(";")[0] + ")"
    return "–"
