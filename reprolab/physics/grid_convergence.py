"""Grid convergence from coarser runs: the run at its chosen resolution N and two reruns
below it (by default about 0.75 N and 0.55 N), Richardson extrapolation with the observed
order, and Roache's grid convergence index (GCI) at N for every compared quantity.

A 2x rerun costs 2^(d+1) times the run (pixels and time steps); the two coarser runs
cost 0.75^(d+1) + 0.55^(d+1) of it: 0.87x in 1D, 0.59x in 2D, 0.41x in 3D. A resonance's
PML is doubled in one more run at the coarsest scale, compared with that scale's run
(its Q error from a thin PML hardly depends on the resolution; `pml_quantities`).

Each coarser scale is moved to the nearest one at which every cell side is a whole number
of pixels (`grid_scales`): Meep rounds the cell to whole pixels, so 0.8 x 32 pixels per a
would simulate a lattice period of 26/25.6 = 1.016 a and shift every band by 1.6 %.

For a quantity q(h) = q* + C h^p (h the grid spacing, h = 1 at N), the changes of the
coarser runs from the run, d_k = q(h_k) - q(1), satisfy d_3 / d_2 = (h_3^p - 1) /
(h_2^p - 1): the observed order p solves it, and the error of the run at N is
|q(1) - q*| = |d_2| / (h_2^p - 1). Changes are taken relative like the 2x rerun's
(reprolab.physics.convergence: pointwise as max |y' - y| / max |y|, positions relative
to the run's position, ...). The estimate is the error itself; what is judged is its
bound, Roache's grid convergence index GCI = Fs x the estimate, against the same limits
as the 2x rerun's change (`thresholds.CONVERGENCE_FRACTION` of the SUCCESS level of the
band that classifies the quantity): above them it fails, above half of them it warns.
The safety factor Fs is Xing & Stern's (2010) for the observed order p (1.6 at p = 2,
2.45 as p falls to 0, rising above 2), at most 3, Roache's for an assumed order, which
is also the factor where none is observed: Roache's three-grid 1.25 presumes grids in
the asymptotic range, and Meep's coarser grids often are not (a rod a few pixels across:
the observed order can be 2 while the estimate is 0.6x the error; XS_ABOVE says what was
measured). An order that cannot be solved (the coarser runs do
not move monotonically, or the coarsest moves less than the order 0.5 allows) falls back
to first order (a conservative estimate); changes that oscillate (the sequence of the
three values is not monotone) are bounded by half their range (Stern et al. 2001, Celik
et al. 2008). An observed order outside
ORDER_EXPECTED is reported and not used as it is: the estimate takes the smaller of it
and the scheme's second order.
"""

from __future__ import annotations

import math
import re

from reprolab.physics import convergence as conv

COARSE = "resolution_coarse"
# Resolution factors of the two coarser runs (the scale variable each reads, before
# `grid_scales` moves them to whole pixels): 0.41x the run in 3D, 0.59x in 2D.
DEFAULT_SCALES = (0.75, 0.55)
# How far `grid_scales` may move a scale to make every cell side whole pixels.
SNAP_WINDOW = 0.05
# The observed order is solved within these bounds; outside, the estimate assumes
# FALLBACK_ORDER (too slow: conservative) or the method's order (too fast: the coarsest
# run is pre-asymptotic while the mid one moved little).
ORDER_BOUNDS = (0.5, 6.0)
FALLBACK_ORDER = 1.0
METHOD_ORDER = 2.0
# Meep's Yee scheme is second order; smooth quantities converge at 1-3 (an interface
# staircase can give first order), anything outside is reported beside the estimate.
ORDER_EXPECTED = (1.0, 3.0)
# The safety factor of an order assumed rather than observed (oscillating or unsolved
# changes), Roache's for two grids; no factor is larger.
GCI_SAFETY = 3.0
# With an observed order p, Xing & Stern's factor of safety (J. Fluids Eng. 132, 061403,
# 2010) from P = p / 2: 2.45 - 0.85 P up to P = 1 (1.6 at p = 2), 16.4 P - 14.8 above,
# at most GCI_SAFETY (an order above 2 is not used: the estimate assumes 2). Roache's
# three-grid 1.25 presumes the asymptotic range, which three grids cannot show. Measured
# against truths from finer runs or the Mie series, each bounded (with 1.25 none): the
# silicon-rod Bloch cell at 22 px/a, its band at 0.597 c/a of order 2.03 from 17 and 12
# px/a, estimate 0.59x its error (bound 1.1x); at 32 px/a orders 3.1 and 3.9, estimates
# 0.54x and 0.38x (bounds 1.6x and 1.15x); the half-resolution Mie sphere, order 2.6,
# 0.75x; the gallery's Mie sphere, order 1.65, 1.25x (bound 2.2x, where 3 would fail it).
XS_BELOW = (2.45, 0.85)
XS_ABOVE = (16.4, 14.8)
_LIMIT = re.compile(r"fail > ([0-9.eE+-]+), warn > ([0-9.eE+-]+)")


def _ratio(p: float, h2: float, h3: float) -> float:
    return (h3**p - 1.0) / (h2**p - 1.0)


def observed_order(s2: float, s3: float, h2: float, h3: float) -> float | None:
    """The order p with s3 / s2 = (h3^p - 1) / (h2^p - 1) inside ORDER_BOUNDS (h3 > h2 > 1
    the coarser runs' spacings relative to the run's); None when the changes are not
    monotone (opposite signs, or the coarsest moved less) or p falls outside."""
    if not (s2 and s3) or (s2 > 0) != (s3 > 0) or not all(map(math.isfinite, (s2, s3))):
        return None
    target = s3 / s2
    lo, hi = ORDER_BOUNDS
    if not _ratio(lo, h2, h3) <= target <= _ratio(hi, h2, h3):
        return None
    for _ in range(80):  # the ratio grows with p: bisection
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _ratio(mid, h2, h3) < target else (lo, mid)
    return (lo + hi) / 2


def oscillates(s2: float, s3: float) -> bool:
    """The values at h = 1, h2, h3 are not monotone in h: the mid run's change has the
    opposite sign of the coarsest's, or lies beyond it (Celik's ratio (q2-q1)/(q3-q2) < 0)."""
    return (s2 > 0) != (s3 > 0) or abs(s3) < abs(s2)


def estimate(s2: float, s3: float, scales=DEFAULT_SCALES) -> dict:
    """Richardson estimate at the run's resolution from the coarser runs' signed relative
    changes s2 (at scales[0]) and s3 (at scales[1]): error (relative, like the changes),
    observed order, the order the error used, the safety factor, the GCI (the bound) and
    a note when the order is unsolved, the changes oscillate or it is far from second."""
    h2, h3 = 1.0 / scales[0], 1.0 / scales[1]
    if not (math.isfinite(s2) and math.isfinite(s3)):
        out = {"error": math.nan, "order": None, "gci": math.nan, "note": "not compared"}
        return {**out, "safety_factor": GCI_SAFETY}
    if s2 == 0 and s3 == 0:
        out = {"error": 0.0, "order": None, "gci": 0.0, "note": "unchanged in both runs"}
        return {**out, "safety_factor": GCI_SAFETY}
    if s2 and s3 and oscillates(s2, s3):
        # the range of the three values bounds the run's error (Stern et al. 2001)
        err = (max(0.0, s2, s3) - min(0.0, s2, s3)) / 2
        note = (
            f"changes oscillate ({s2:.3g} at {scales[0]:g}x, {s3:.3g} at {scales[1]:g}x): "
            "no order; error bounded by half their range"
        )
        out = {"error": err, "order": None, "note": note}
        return {**out, "gci": GCI_SAFETY * err, "safety_factor": GCI_SAFETY}
    p = observed_order(s2, s3, h2, h3)
    note = ""
    if p is None:
        slow = (s2 > 0) != (s3 > 0) or abs(s3) < _ratio(ORDER_BOUNDS[1], h2, h3) * abs(s2)
        used = FALLBACK_ORDER if slow else METHOD_ORDER
        note = (
            f"order not determined (changes {s2:.3g} at {scales[0]:g}x, {s3:.3g} at "
            f"{scales[1]:g}x); estimated with order {used:g}"
        )
        p_used = used
    else:
        # an order above the scheme's is not relied on (it would shrink the error): the
        # estimate assumes the scheme's, and its bound the factor of an assumed order
        p_used = min(p, METHOD_ORDER)
        if not ORDER_EXPECTED[0] <= round(p, 2) <= ORDER_EXPECTED[1]:
            note = (
                f"observed order {p:.2f}, far from the scheme's second order; "
                f"estimated with order {p_used:.2f}"
            )
        elif round(p, 2) > p_used:
            note = f"observed order {p:.2f}; estimated with order {p_used:.2f}"
    # the coarsest run also bounds the error from below when the order is unsolved
    err = abs(s2) / (h2**p_used - 1.0)
    if p is None and p_used == FALLBACK_ORDER:
        err = max(err, abs(s3) / (h3**p_used - 1.0))
    fs = safety_factor(p)
    out = {"error": err, "order": p, "gci": fs * err, "safety_factor": fs}
    return {**out, "note": note, "order_used": p_used}


def safety_factor(p: float | None) -> float:
    """The factor from the estimate to the bound: Xing & Stern's for an observed order
    `p` (P = p / 2), at most GCI_SAFETY, the factor of an order assumed (none observed;
    above 2 the estimate assumes 2)."""
    if p is None:
        return GCI_SAFETY
    ratio = p / METHOD_ORDER
    if ratio <= 1:
        return XS_BELOW[0] - XS_BELOW[1] * ratio
    return min(GCI_SAFETY, XS_ABOVE[0] * ratio - XS_ABOVE[1])


REFINE_RATIO = 2.0  # the 2x rerun's resolution against the run's


def refine_bound(change: float, order: float | None = None) -> dict:
    """The bound on the run's own error from its 2x rerun's change (relative): the
    change is q(N) - q(2N), which is only 1 - 2^-p of the run's error q(N) - q* (0.75
    of it at second order), so it understates it. Richardson at N with the order `p`
    the coarser runs observed for the same quantity (at most the scheme's second; the
    second where none was observed, as two grids cannot show one), times the safety
    factor of that order (`safety_factor`: 3 for an order assumed, Roache's for two
    grids): GCI = Fs x |change| x r^p / (r^p - 1), r = 2. Judging stays on the change
    against the 2x rerun's limits; this is what the run's error is bounded by."""
    p = METHOD_ORDER if order is None else min(order, METHOD_ORDER)
    grow = REFINE_RATIO**p / (REFINE_RATIO**p - 1.0)
    fs = safety_factor(order)
    error = abs(change) * grow if math.isfinite(change) else math.nan
    how = {"richardson_error": error, "safety_factor": fs, "order": order}
    return {"error_bound": fs * error, "error_bound_from": how}


def with_refine_bounds(rows_2x: list[dict], rows_coarse: list[dict] = ()) -> list[dict]:
    """The 2x rerun's resolution rows, each with its `refine_bound` (`error_bound`, and
    `error_bound_from`: the Richardson error, safety factor and order it used) from the
    order the coarser runs observed for the row of the same name, where they ran (an
    escalated stage); the rows' own fields (change, status) stay as judged."""
    orders = {q["name"]: q.get("order") for q in rows_coarse}
    out = []
    for q in rows_2x:
        change = q.get("change")
        if not isinstance(change, int | float):
            out.append(q)
            continue
        bound = refine_bound(float(change), orders.get(q["name"]))
        out.append({**q, **bound})
    return out


def grid_scales(targets, sims: list[dict], window: float = SNAP_WINDOW) -> tuple[list, float]:
    """(the scales nearest `targets`, within `window`, at which every cell side of every
    simulation of the run-time record is a whole number of pixels, the largest relative
    change of a cell side left over): a scale with no such neighbour keeps the one that
    leaves the least. Without cells in the record the targets stand."""
    sides = [
        (float(s["resolution"]), float(c))
        for s in sims
        if s.get("resolution")
        for c in s.get("cell") or []
        if c and c > 0
    ]
    if not sides:
        return list(targets), 0.0

    def misfit(scale: float) -> float:
        return max(abs(round(scale * r * c) - scale * r * c) / (scale * r * c) for r, c in sides)

    out = []
    for t in targets:
        cands = {t}
        for r, c in sides:  # every scale that makes one side whole pixels, near t
            n = r * c
            cands.update(k / n for k in range(int((t - window) * n), int((t + window) * n) + 2))
        near = [x for x in cands if abs(x - t) <= window + 1e-12 and 0 < x < 1]
        out.append(min(near, key=lambda x: (round(misfit(x), 9), abs(x - t))))
    if not all(a > b for a, b in zip(out, out[1:], strict=False)):
        out = list(targets)  # snapping merged the scales: keep the configured ones
    return out, max(misfit(x) for x in out)


def parse_limit(text: str):
    """The (fail, warn) of a quantity's limit text (reprolab.physics.convergence)."""
    m = _LIMIT.fullmatch(text or "")
    if not m:
        raise ValueError(f"convergence limit {text!r} is not 'fail > X, warn > Y'")
    return float(m.group(1)), float(m.group(2))


def _signed(row: dict) -> float:
    """The row's relative change with the sign of (rerun - run) when both values exist
    (pointwise changes are norms: positive)."""
    change = row.get("change")
    if change is None or not math.isfinite(change):
        return math.nan
    a, b = row.get("value_n"), row.get("value_2n")
    if a is not None and b is not None and b < a:
        return -change
    return change


def _missing(row: dict | None, scale: float) -> str:
    """Why a coarser run's row has nothing to extrapolate from ('' when it has)."""
    if row is None:
        return f"not found in the {scale:g}x run"
    if "error" in row:
        return f"not read in the {scale:g}x run"
    if row.get("value_2n") is None and row.get("value_n") is not None:
        return f"no mode of the {scale:g}x run near it"
    return ""


def _swap(row: dict) -> dict:
    return {**row, "value_n": row["value_2n"], "value_2n": row["value_n"]}


def pair_quantities(figure_outputs, run_n, run_v, *, x_grid=None, key_values=()) -> list[dict]:
    """The quantities of run `run_n` against one coarser run `run_v`, named after the
    run's own features and modes (so that both coarser runs' rows line up): value_n is
    the run's, value_2n the coarser run's."""
    from reprolab.physics.record_checks import load_record

    # the run as the reference: features named by the run's, scales the run's (rows
    # swapped back so that value_n is the run's)
    rows = conv.folder_curve_quantities(
        figure_outputs, run_v, run_n, COARSE, x_grid=x_grid, key_values=key_values
    )
    out = [r if "error" in r else _swap(r) for r in rows]
    modes_n = conv.record_modes(load_record(run_n))
    if modes_n:
        out += conv.mode_quantities(modes_n, conv.record_modes(load_record(run_v)), COARSE)
    return out


def combine(rows_mid: list[dict], rows_coarse: list[dict], scales=DEFAULT_SCALES) -> list[dict]:
    """One row per quantity of the run: its values at N and in both coarser runs, the
    Richardson error at N (relative), observed order, safety factor, and the GCI (the
    bound on the run's error: `error_estimate`, `change`) judged against the quantity's
    limit, the same as the 2x rerun's. A quantity missing from either coarser run,
    or without a value there, keeps that run's row and its status (a warn at least)."""
    coarse = {r["name"]: r for r in rows_coarse}
    out = []
    for mid in rows_mid:
        low = coarse.get(mid["name"])
        fail, warn = parse_limit(mid["limit"])
        gap = _missing(mid, scales[0]) or _missing(low, scales[1])
        if gap:
            # a mode a coarser run did not find, a curve it did not write: that run's row,
            # a warn at least (an unreadable curve keeps its fail); nothing to extrapolate
            shown = low if low is not None and not _missing(mid, scales[0]) else mid
            row = {**shown, "status": "warn" if shown["status"] == "pass" else shown["status"]}
            row["note"] = "; ".join(n for n in (shown.get("note"), gap) if n)
            out.append({**row, "no_estimate": gap})
            continue
        est = estimate(_signed(mid), _signed(low), scales)
        bound = est["gci"]
        # what a 2x rerun would move it by at that order (the q_budget adds it to the PML's)
        p_used = est.get("order_used") or METHOD_ORDER
        row = {
            **mid,
            "value_2n": None,
            "values_coarse": [mid["value_2n"], low["value_2n"]],
            "scales": list(scales),
            "change": bound,
            "changes_coarse": [mid["change"], low["change"]],
            "richardson_error": est["error"],
            "safety_factor": est["safety_factor"],
            "error_estimate": bound,
            "order": est["order"],
            "gci": bound,
            "change_2x": bound * (1 - 2.0**-p_used),
            # the bound on the run's error against the 2x rerun's own limits
            "status": conv.status_of(bound, conv.th.CheckLimit(fail=fail, warn=warn)),
        }
        notes = [n for n in (mid.get("note"), est["note"]) if n]
        if notes:
            row["note"] = "; ".join(notes)
        out.append(row)
    return out


def compare_coarse(figure_outputs, run_n, run_mid, run_low, scales=DEFAULT_SCALES, **kw):
    """Every compared quantity of the run with its Richardson estimate from the coarser
    runs `run_mid` (scales[0]) and `run_low` (scales[1])."""
    return combine(
        pair_quantities(figure_outputs, run_n, run_mid, **kw),
        pair_quantities(figure_outputs, run_n, run_low, **kw),
        scales,
    )


def pml_quantities(run_n, run_low, run_low_pml, scale: float) -> list[dict]:
    """The PML doubled at the coarsest scale: every mode of the run matched to the
    coarsest run's, its frequency and Q there against the same run with twice the PML,
    named after the run's modes (the q_budget adds the PML bound to the resolution
    estimate of the same mode) and judged as the 2x-PML rerun is (Q on twice its change)."""
    from reprolab.physics.record_checks import load_record

    modes_n = conv.record_modes(load_record(run_n))
    low, pml = (conv.record_modes(load_record(r)) for r in (run_low, run_low_pml))
    out = []
    for i, m in enumerate(sorted(modes_n, key=lambda m: (m.get("label", ""), m["freq"]))):
        label = m.get("label", "")
        name = f"mode {i}" + (f" [{label}]" if label else "") + f" (f = {m['freq']:.5g})"
        same = [v for v in low if v.get("label", "") == label]
        near = min(same, key=lambda v: abs(v["freq"] - m["freq"]), default=None)
        shift = abs(near["freq"] - m["freq"]) / abs(m["freq"]) if near else math.inf
        if shift > conv.th.CONVERGENCE_MODE_MATCH:
            row = conv.quantity(
                conv.PML, f"{name} frequency", m["freq"], None, shift, conv.th.CONVERGENCE_FREQUENCY
            )
            gap = f"no mode of the {scale:g}x run near it"
            out.append({**row, "status": "warn", "note": gap, "no_estimate": gap})
            continue
        for row in conv.mode_quantities([near], pml, conv.PML):
            what = row["name"].rsplit(" ", 1)[1]  # frequency or Q
            note = "; ".join(n for n in (row.get("note"), f"at {scale:g}x resolution") if n)
            out.append({**row, "name": f"{name} {what}", "resolution_scale": scale, "note": note})
    return out


def cost_ratio(scales, dims: int) -> float:
    """The coarser runs' Meep cost as a fraction of the run's: pixels times steps."""
    return sum(s ** (dims + 1) for s in scales)
