"""Convergence option: rerun a stage at twice the resolution and estimate the error.

The generated script multiplies its resolution by `REPROLAB_RESOLUTION_SCALE` (the
lint asks for it when `checks.convergence` is on). The rerun goes through the same
simulation machinery into `<stage>/convergence_2x/`; the estimate compares feature
positions and values, not pointwise spectra (PHYSICS_CHECKS.md row 15): for a
second-order scheme the N run's error is about |q(2N) − q(N)| / 3.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from reprolab.physics import compare
from reprolab.physics import thresholds as th
from reprolab.physics.checks import read_numeric_csv


def richardson(q_n: float, q_2n: float) -> tuple[float, float]:
    """(absolute, relative) estimated discretisation error of the N result."""
    err = abs(q_2n - q_n) / th.CONVERGENCE_RICHARDSON_DIVISOR
    return err, err / abs(q_2n) if q_2n else math.inf


def pointwise(label: str, xa, ya, xb, yb) -> dict:
    """Largest change of the curve between N and 2N on the N run's x grid, relative to
    the curve's max |y|: it fails above a fraction of the classification's own
    max_abs_rel acceptance (a result that moves that much is not converged)."""
    diff = compare.resample(xb, yb, xa) - ya
    scale = float(np.max(np.abs(yb))) or 1.0
    change = float(np.nanmax(np.abs(diff))) / scale if np.isfinite(diff).any() else math.nan
    lim = th.CONVERGENCE_POINTWISE
    status = "fail" if not change <= lim.fail else "warn" if change > lim.warn else "pass"
    return {
        "name": f"{label} pointwise max change",
        "value_n": None,
        "value_2n": None,
        "error_estimate": change,
        "relative": change,
        "status": status,
    }


def quantities(figure_outputs: list[dict], run_n: Path, run_2n: Path) -> list[dict]:
    """Feature positions and values of every reproduced curve at N and 2N."""
    out = []
    for fo in figure_outputs:
        try:
            a, b = read_numeric_csv(run_n / fo["file"]), read_numeric_csv(run_2n / fo["file"])
            xa, ya = np.asarray(a[fo["x_column"]]), np.asarray(a[fo["y_column"]])
            xb, yb = np.asarray(b[fo["x_column"]]), np.asarray(b[fo["y_column"]])
        except (OSError, KeyError, IndexError) as exc:
            out.append({"name": f"{fo['file']}", "error": str(exc)})
            continue
        order_a, order_b = np.argsort(xa), np.argsort(xb)
        xa, ya, xb, yb = xa[order_a], ya[order_a], xb[order_b], yb[order_b]
        out.append(pointwise(f"{fo['figure_id']}/{fo['curve_id']}", xa, ya, xb, yb))
        prom = compare.FEATURE_PROMINENCE * (float(np.ptp(yb)) or 1.0)
        fa, fb = compare.find_features(xa, ya, prom), compare.find_features(xb, yb, prom)
        label = f"{fo['figure_id']}/{fo['curve_id']}"
        for i, f2 in enumerate(fb):
            same = [f for f in fa if f["kind"] == f2["kind"]]
            if not same:
                continue
            f1 = min(same, key=lambda f: abs(f["x"] - f2["x"]))
            for what, word in (("x", "position"), ("y", "value")):
                err, rel = richardson(f1[what], f2[what])
                out.append(
                    {
                        "name": f"{label} {f2['kind']} {i} {word}",
                        "value_n": f1[what],
                        "value_2n": f2[what],
                        "error_estimate": err,
                        "relative": rel,
                        "status": "warn" if rel > th.CONVERGENCE_TOLERANCE else "pass",
                    }
                )
    return out
