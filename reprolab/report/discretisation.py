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
        "`resolution_coarse`: the bound on the run's error from two coarser runs, their "
        "Richardson estimate times a safety factor Fs, `resolution_2x`: the change at "
        "twice the resolution):",
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
    # one reason a line: run together in a sentence they read as one long parenthesis
    why = [f"- {w}" for w in esc["why"][:3]]
    more = len(esc["why"]) - len(why)
    return [
        "The coarser runs did not show convergence, so the 2x rerun was run and decided: "
        f"the errors below are its changes. The coarser runs (`{esc['coarse_status']}`) "
        "fell short on:",
        "",
        *why,
        *([f"- and {more} more"] if more > 0 else []),
        "",
    ]


def order_cell(q: dict) -> str:
    """The observed order, what the estimate did when it could not use it as it is (far
    from second order, oscillating changes, no order fitted), and the safety factor."""
    text = _order_text(q)
    return text + (f"; Fs {q['safety_factor']:g}" if q.get("safety_factor") else "")


def _order_text(q: dict) -> str:
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


# The figure's agreement (its comparison) beside the grid's own error (convergence.json):
# (words, the figure's largest difference, which convergence rows estimate the grid's).
def _curve_metric(fig: dict, metric: str) -> float | None:
    values = [
        (c.get("metrics") or {}).get(metric)
        for c in fig.get("curves", [])
        if "error" not in c and not c.get("qualitative")
    ]
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return max(values) if values else None


def _key_value_error(fig: dict) -> float | None:
    errs = [
        kv.get("rel_error")
        for c in fig.get("curves", [])
        for kv in c.get("key_values", [])
        if isinstance(kv.get("rel_error"), (int, float)) and math.isfinite(kv["rel_error"])
    ]
    return max(errs) if errs else None


def _table_error(fig: dict, measure: str) -> float | None:
    """A table's largest relative error of one measure (a log10 factor made relative)."""
    errs = []
    for row in fig.get("rows", []):
        for v in row.get("values", []):
            e = v.get("error")
            if v.get("measure") != measure or not isinstance(e, (int, float)):
                continue
            errs.append(10 ** abs(e) - 1 if v.get("error_kind") == "log10_factor" else abs(e))
    errs = [e for e in errs if math.isfinite(e)]
    return max(errs) if errs else None


def _grid_error(rows: list[dict], match) -> float | None:
    """The largest bound on the run's error among the matching rows: the coarser runs'
    (their `change` is it), a 2x rerun's `error_bound` (its change understates it)."""
    changes = [
        q.get("error_bound", q.get("change"))
        for q in rows
        if match(q["name"]) and isinstance(q.get("error_bound", q.get("change")), (int, float))
    ]
    changes = [c for c in changes if math.isfinite(c)]
    return max(changes) if changes else None


def comparisons_with_grid(fig: dict, conv: dict) -> list[tuple[str, float | None, float | None]]:
    """(what, the figure's largest difference from the paper, the grid's estimated error of
    the same quantity), each relative on the comparison's own scale."""
    fig_id = fig["figure_id"]
    rows = [q for q in conv.get("quantities", []) if q.get("variant") in RESOLUTION_VARIANTS]
    mine = [q for q in rows if q["name"].startswith(f"{fig_id}/")]
    if fig.get("kind") == "table":
        modes = [q for q in rows if q["name"].startswith("mode ")]
        return [
            (
                "mode frequencies",
                _table_error(fig, "mode_frequency"),
                _grid_error(modes, lambda n: n.endswith(" frequency")),
            ),
            (
                "quality factors Q",
                _table_error(fig, "quality_factor"),
                _grid_error(modes, lambda n: n.endswith(" Q")),
            ),
        ]
    return [
        (
            "peak/dip positions",
            _curve_metric(fig, "feature_shift_rel"),
            _grid_error(mine, lambda n: n.endswith(" position")),
        ),
        (
            "peak/dip heights",
            _curve_metric(fig, "feature_height_rel"),
            _grid_error(mine, lambda n: n.endswith(" height")),
        ),
        (
            "the curves, pointwise (max difference / max)",
            _curve_metric(fig, "max_abs_rel"),
            _grid_error(mine, lambda n: n.endswith("pointwise max change")),
        ),
        (
            "the paper's key values",
            _key_value_error(fig),
            _grid_error(mine, lambda n: " key value " in n),
        ),
    ]


def _pct(v: float) -> str:
    return f"{v * 100:.2g} %"


def _not_estimated(conv: dict, stage_dir: Path | None) -> str:
    """Why a stage has no estimate of its grid's error, in words."""
    design = Path(stage_dir) / "design.json" if stage_dir else None
    if not conv and design is not None and design.is_file():
        data = read_json(design)
        if (data.get("output", data) or {}).get("runs_simulation") is False:
            return "none, the stage evaluates material models on no grid"
    why = conv.get("note") or conv.get("reason") or "no resolution rerun"
    return (
        f"not estimated for this stage ({why}), so whether its differences from the paper "
        "lie within it is not known"
    )


def agreement_lines(fig: dict, stage_dir: Path | None) -> list[str]:
    """The code's statement, per compared quantity, of whether the figure's difference
    from the paper lies within the estimated discretisation error: within it, the run
    cannot tell its result from the paper's more finely; beyond it, the grid alone does
    not explain the difference. Said as not known when no resolution rerun estimated it."""
    if fig.get("qualitative") or fig.get("field_map") or fig.get("kind") == "band_diagram":
        return []
    path = Path(stage_dir) / "convergence.json" if stage_dir else None
    conv = read_json(path) if path and path.is_file() else {}
    pairs = [(w, d, g) for w, d, g in comparisons_with_grid(fig, conv) if d is not None]
    if not pairs:
        return []
    if not any(g is not None for _, _, g in pairs):
        return [f"Discretisation error: {_not_estimated(conv, stage_dir)}.", ""]
    out = ["Against the estimated discretisation error (code):", ""]
    for what, diff, grid in pairs:
        if grid is None:
            out.append(f"- {what}: differ by up to {_pct(diff)}; no estimate of the grid's error")
        elif diff <= grid:
            out.append(
                f"- {what}: differ from the paper by up to {_pct(diff)}, within the estimated "
                f"discretisation error ({_pct(grid)}): at this resolution the run cannot tell "
                "its result from the paper's more finely"
            )
        else:
            out.append(
                f"- {what}: differ from the paper by up to {_pct(diff)}, beyond the estimated "
                f"discretisation error ({_pct(grid)}): the grid alone does not explain it"
            )
    return [*out, ""]
