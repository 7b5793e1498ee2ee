"""Where a curve's features sit, and on what scale a curve is compared.

A feature's position error is measured against a scale chosen from the axis:

- `position`: |x| of the paper's feature, where the axis origin lies outside the data
  (a wavelength or frequency spectrum: 1 % of 1.55 µm is 15.5 nm);
- `span`: the paper's x span, where the origin lies in the data (an angle, a
  detuning, a position across a waveguide, k through Γ): a lobe at 0.2° reproduced at
  0.3° is 0.1° of a 180° span, not a 50 % shift;
- `turn`: a full turn (360° or 2π) on an angle axis that wraps (a polar figure, or
  an angle axis whose data covers a full turn);
- `tolerance`: the axis' `position_tolerance` in its own unit, where the paper states
  how precisely positions matter: a shift of one tolerance sits at the success limit.

The y values are compared as the axis plots them: linearly, in log space for a log
axis (differences are ln(y_sim / y_paper), a relative error wherever the curve sits),
or in dB for a polar figure plotted in dB (differences over the paper's dB range).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from reprolab import units
from reprolab.physics import thresholds as th

if TYPE_CHECKING:
    import numpy as np

TURN = {"deg": 360.0, "rad": 2 * math.pi}
BASES = ("position", "span", "turn", "tolerance")
# A log-axis reproduction at or below zero: placed this far below the paper's smallest
# value, so the log-space difference is large and visible rather than undefined.
LOG_FLOOR = 1e-6


def axis_context(
    figure, curve_id: str, x_column: str | None = None, unit_length_m: float | None = None
) -> dict:
    """What the comparison needs of a figure's axes (reprolab.paper_format.Figure):
    the x quantity, unit and scale, the curve's y scale, the polar settings, a stated
    position tolerance and the lines whose Q the curve states. With `x_column` (the
    simulation's column, whose unit the paper's x is converted to), x unit, tolerance
    and line positions are in that column's unit (lines through the paper's length a,
    `unit_length_m`, where normalized and SI units meet)."""
    curve = next(c for c in figure.curves if c.curve_id == curve_id)
    y_axis = figure.y_axes.right if curve.y_axis == "right" else figure.y_axes.left
    polar = getattr(figure, "polar", None)
    x = figure.x_axis
    unit, tolerance = x.unit, getattr(x, "position_tolerance", None)
    column = units.column_quantity(x_column) if x_column else None
    if column and column[0] == x.quantity and column[1] != x.unit:
        unit = column[1]
        if tolerance and x.quantity in ("angle", "length"):  # linear conversions only
            tolerance = abs(units.convert([tolerance], (x.quantity, x.unit), column)[0])
    ctx = {
        "x_quantity": x.quantity,
        "x_unit": unit,
        "x_scale": x.scale,
        "y_scale": y_axis.scale,
        "position_tolerance": tolerance,
        "polar": polar.model_dump() if polar is not None else None,
    }
    stated = getattr(curve, "lines", None) or []
    if stated:
        xs = [line.x for line in stated]
        if column and column != (x.quantity, x.unit):
            xs = units.convert(xs, (x.quantity, x.unit), column, unit_length_m)
        ctx["lines"] = [{"x": v, "q": line.q} for v, line in zip(xs, stated, strict=True)]
    return ctx


def period(ctx: dict | None) -> float | None:
    """The angle axis' full turn where it wraps (a polar figure, or an angle axis whose
    data spans a full turn: `with_wrap`), else None."""
    if not ctx or ctx.get("x_quantity") != "angle" or not (ctx.get("polar") or ctx.get("wrap")):
        return None
    return TURN.get(ctx.get("x_unit", ""))


def with_wrap(ctx: dict | None, x_paper) -> dict | None:
    """`ctx` marked as wrapping when it is an angle axis whose paper data covers a full
    turn but for one sampling step (0°…355° by 5°, −180°…180°)."""
    import numpy as np

    turn = TURN.get((ctx or {}).get("x_unit", ""))
    if not ctx or ctx.get("x_quantity") != "angle" or turn is None or len(x_paper) < 3:
        return ctx
    x = np.sort(np.asarray(x_paper, float))
    step = float(np.max(np.diff(x)))
    return ctx | {"wrap": True} if float(np.ptp(x)) + step >= turn * (1 - 1e-9) else ctx


def y_kind(ctx: dict | None) -> str:
    """How y differences are taken: `linear`, `log` (ln ratio) or `db`."""
    if ctx and (ctx.get("polar") or {}).get("db"):
        return "db"
    if ctx and ctx.get("y_scale") == "log":
        return "log"
    return "linear"


def wrap(x, turn: float, start: float) -> np.ndarray:
    """Angles mapped into [start, start + turn)."""
    import numpy as np

    return start + np.mod(np.asarray(x, float) - start, turn)


def periodic_copy(x, y, turn: float) -> tuple[np.ndarray, np.ndarray]:
    """A wrapped curve sorted, with one copy a turn either side so that interpolation and
    peak finding see across the seam (a main lobe at 0° on a 0–360° axis)."""
    import numpy as np

    order = np.argsort(x)
    x, y = np.asarray(x, float)[order], np.asarray(y, float)[order]
    if len(x) > 1 and math.isclose(x[-1] - x[0], turn, rel_tol=1e-9, abs_tol=1e-12):
        x, y = x[:-1], y[:-1]  # both ends of the turn sampled: one point
    return np.concatenate([x - turn, x, x + turn]), np.concatenate([y, y, y])


def to_compared_y(yp, ys, ctx: dict | None) -> tuple[np.ndarray, np.ndarray, float, str]:
    """Paper and reproduced y as they are compared, the scale differences are divided by
    and a note (empty unless something had to be said).

    A polar figure normalised to its maximum divides both curves by their own maximum;
    in dB the paper's values are dB and the reproduction (a power) is converted to dB.
    A log axis compares ln(y); a paper value at or below zero there is an error in its
    digitized data. With `both_plotted` in `ctx` the second curve is the paper's too
    (already in dB)."""
    import numpy as np

    yp, ys = np.asarray(yp, float), np.asarray(ys, float)
    polar, kind, note = (ctx or {}).get("polar") or {}, y_kind(ctx), ""
    if polar.get("normalise") == "max":
        top = float(np.max(ys)) if ys.size else 0.0
        ys = ys / top if top > 0 else ys
        if kind != "db":
            yp = yp / (float(np.max(yp)) or 1.0)
    if kind == "db" and (ctx or {}).get("both_plotted"):
        return yp, ys, float(np.ptp(yp)) or 1.0, note  # two paper curves: both in dB
    if kind == "db":
        # the plot's radial floor is the paper's lowest level: below it nothing is seen
        floor = float(np.min(yp))
        ys = np.maximum(10 * np.log10(np.maximum(ys, 10 ** (floor / 10) * LOG_FLOOR)), floor)
        return yp, ys, float(np.ptp(yp)) or 1.0, note
    if kind == "log":
        if np.any(yp <= 0):
            raise ValueError(
                f"a log-scale y axis needs positive paper values (smallest {float(np.min(yp)):g});"
                " valid: digitize the curve's positive values, or set the axis scale to linear"
            )
        floor = float(np.min(yp)) * LOG_FLOOR
        if np.any(ys <= 0):
            note = f"{int(np.sum(ys <= 0))} reproduced value(s) <= 0 on a log axis"
        return np.log(yp), np.log(np.maximum(ys, floor)), 1.0, note
    return yp, ys, float(np.max(np.abs(yp))) or 1.0, note


def origin_in_data(x_min: float, x_max: float) -> bool:
    return x_min <= 0.0 <= x_max


def position_scale(x0: float, x_min: float, x_max: float, ctx: dict | None) -> tuple[float, str]:
    """(scale, basis) a feature's position error at paper position x0 is divided by;
    the basis is one of BASES (module docstring). Never zero."""
    span = (x_max - x_min) or 1.0
    tolerance = (ctx or {}).get("position_tolerance")
    if tolerance:
        return tolerance / th.DISCREPANCY_THRESHOLDS[0].acceptable, "tolerance"
    turn = period(ctx)
    if turn is not None:
        return turn, "turn"
    if origin_in_data(x_min, x_max) or x0 == 0.0:
        return span, "span"
    if (ctx or {}).get("x_quantity") == "angle":
        return span, "span"  # an angle's origin is a direction, not a zero of a scale
    return abs(x0), "position"


def distance(a: float, b: float, turn: float | None) -> float:
    """|a - b|, the short way round on a wrapped axis."""
    d = abs(a - b)
    return min(d, turn - d % turn) if turn else d


def on_circle(x, y, turn: float, start: float) -> tuple[np.ndarray, np.ndarray]:
    """A curve on a wrapped axis as one turn from `start`, sorted, each angle once: samples
    the wrap puts on the same angle (0° and 360°, −180° and 180°, or 1e-14 either side
    of the seam) are one, their mean."""
    import numpy as np

    xw = wrap(x, turn, start)
    near_end = xw > start + turn * (1 - 1e-9)
    xw[near_end] -= turn  # 359.99999999999997 on a 0-360 axis is 0
    order = np.argsort(xw, kind="stable")
    xw, yw = xw[order], np.asarray(y, float)[order]
    keep_x, keep_y = [], []
    for xv, yv in zip(xw, yw, strict=True):
        if keep_x and xv - keep_x[-1][0] <= 1e-9 * turn:
            keep_x[-1].append(xv)
            keep_y[-1].append(yv)
        else:
            keep_x.append([xv])
            keep_y.append([yv])
    return (
        np.array([float(np.mean(v)) for v in keep_x]),
        np.array([float(np.mean(v)) for v in keep_y]),
    )


def features_on(x, y, prominence: float, turn: float | None, find, start=None) -> list[dict]:
    """Features of a curve by `find` (compare.find_features); on a wrapped axis the
    curve is seen across its seam (three turns) and each feature reported once, at its
    angle in the turn from `start` (the paper's first angle; else the curve's): the
    copy found nearest the middle turn, where no end of the three turns bends it."""
    import numpy as np

    if turn is None:
        return find(x, y, prominence)
    xw, yw = periodic_copy(x, y, turn)
    lo = float(np.min(x)) if start is None else float(start)
    middle = lo + turn / 2
    out: dict = {}
    for f in sorted(find(xw, yw, prominence), key=lambda f: abs(f["x"] - middle)):
        at = float(wrap([f["x"]], turn, lo)[0])
        if at > lo + turn * (1 - 1e-9):
            at -= turn
        key = (f["kind"], round((at - lo) / turn, 6) % 1.0)
        out.setdefault(key, f | {"x": at})
    return sorted(out.values(), key=lambda f: f["x"])
