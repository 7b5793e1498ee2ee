"""Convergence: compare a stage's run with its reruns at twice the resolution (and, for
resonances, twice the PML thickness), and judge whether the result moved.

The generated script multiplies its resolution by `REPROLAB_RESOLUTION_SCALE` and its
PML thickness by `REPROLAB_PML_SCALE` (the lint asks for both; reprolab.steps.convergence
decides when a stage is rerun). Compared between the run and a rerun:

- every reproduced curve pointwise on the figure's x grid (the paper's digitized x
  inside both runs' range; the run's own grid without paper data), relative to the
  curve's max |y|, once the run's curve is moved by the shift a converged position may
  have (`aligned_pointwise`; the unshifted change is reported beside it);
- its peak/dip positions and heights, and the paper's key values read off it;
- the Harminv modes of the run-time record: frequency and Q of each mode.

A change larger than `thresholds.CONVERGENCE_FRACTION` of the SUCCESS level of the band
that classifies the quantity fails (`thresholds.CONVERGENCE_*`). The Richardson estimate
|q(2N) − q(N)| / 3 of a second-order scheme is reported beside each resolution change.
`convergence_checks` turns a convergence.json into the `Check`s the verdict judges, and
`excuse_resolution` lets a converged rerun stand for an under-resolved run.
"""

from __future__ import annotations

import math
from dataclasses import asdict

from reprolab.errors import InputFileError
from reprolab.physics import compare, harminv, positions
from reprolab.physics import thresholds as th
from reprolab.physics.check import Check
from reprolab.physics.checks import read_output_csv
from reprolab.physics.record_checks import load_record, run_label

RESOLUTION = "resolution_2x"
PML = "pml_2x"
# The resolution evidence a converged result may excuse an under-resolved run with: the
# 2x rerun, or the coarser runs' Richardson estimate (reprolab.physics.grid_convergence).
RESOLUTION_VARIANTS = (RESOLUTION, "resolution_coarse")


def richardson(q_n: float, q_2n: float) -> tuple[float, float]:
    """(absolute, relative) Richardson estimate |q(2N) − q(N)| / 3 (second order)."""
    err = abs(q_2n - q_n) / th.CONVERGENCE_RICHARDSON_DIVISOR
    return err, err / abs(q_2n) if q_2n else math.inf


def status_of(change: float, lim: th.CheckLimit) -> str:
    """fail above lim.fail (NaN fails: nothing to show it converged), warn above lim.warn."""
    return "fail" if not change <= lim.fail else "warn" if change > lim.warn else "pass"


def quantity(variant, name, value_n, value_v, change, lim, estimate=None) -> dict:
    return {
        "variant": variant,
        "name": name,
        "value_n": value_n,
        "value_2n": value_v,
        "change": change,
        "relative": change,
        "error_estimate": change if estimate is None else estimate,
        "limit": f"fail > {lim.fail:g}, warn > {lim.warn:g}",
        "status": status_of(change, lim),
    }


def _estimate(variant: str, a: float, b: float) -> float | None:
    return richardson(a, b)[0] if variant == RESOLUTION else None


def _common_grid(xa, xb, x_grid):
    import numpy as np

    lo, hi = max(xa[0], xb[0]), min(xa[-1], xb[-1])
    grid = np.asarray(x_grid if x_grid is not None else xa, float)
    grid = grid[(grid >= lo) & (grid <= hi)]
    if grid.size < 2:
        grid = xa[(xa >= lo) & (xa <= hi)]
    return grid


def pointwise(label: str, xa, ya, xb, yb, x_grid=None, variant: str = RESOLUTION) -> dict:
    """Largest change of the curve between the run and the rerun on the figure's x grid
    (the run's grid without one), relative to the curve's max |y|: the curve's pointwise
    discretisation error, reported (its estimate is what the report holds against the
    comparison's max_abs_rel). It does not judge the stage: a sharp resonance that moved
    0.3 % differs pointwise by much of its height, which is its position's change, judged
    on its own band; `aligned_pointwise` judges the rest."""
    import numpy as np

    grid = _common_grid(xa, xb, x_grid)
    diff = compare.resample(xb, yb, grid) - compare.resample(xa, ya, grid)
    scale = float(np.max(np.abs(yb))) or 1.0
    change = float(np.nanmax(np.abs(diff))) / scale if np.isfinite(diff).any() else math.nan
    out = quantity(
        variant, f"{label} pointwise max change", None, None, change, th.CONVERGENCE_POINTWISE
    )
    out["points"] = int(grid.size)
    out["reported"] = True
    out["note"] = "reported: judged after the shift a converged position may have"
    return out


def aligned_pointwise(label: str, xa, ya, xb, yb, x_grid=None, variant=RESOLUTION) -> dict:
    """The pointwise change once the run's curve is moved along x by the shift that fits
    the rerun best within what a converged feature may move (`aligned_change`): what a
    shift cannot explain, a height or a shape, judged on the pointwise limit."""
    import numpy as np

    grid = _common_grid(xa, xb, x_grid)
    scale = float(np.max(np.abs(yb))) or 1.0
    fit = aligned_change(xa, ya, xb, yb, grid, th.CONVERGENCE_POSITION.fail)
    name = f"{label} pointwise max change after the shift"
    out = quantity(variant, name, None, None, fit["change"] / scale, th.CONVERGENCE_POINTWISE)
    out["points"] = int(grid.size)
    out["unaligned_change"] = fit["unaligned"] / scale
    out["aligned_shift"] = fit["shift"]
    out["note"] = (
        f"the run's curve moved by {fit['shift']:+.3g} "
        + ("of the x span" if fit["span"] else "(relative: x -> x(1 + s))")
        + f", at most the position limit {th.CONVERGENCE_POSITION.fail:g}"
    )
    return out


def shifted(x, s: float, span: float | None):
    """x moved by a relative shift s: x(1 + s), or x + s * span on an axis whose origin
    lies in the data (angles, wavevectors through Γ: positions.position_scale)."""
    return x + s * span if span else x * (1.0 + s)


def aligned_change(xa, ya, xb, yb, grid, max_shift: float) -> dict:
    """The largest |y_rerun - y_run| on `grid` once the run's curve is moved by the shift
    s (|s| <= max_shift, relative as in `shifted`) that makes it smallest: {change,
    unaligned, shift, span}. A resolution change moves features by a fraction of their
    position (grid dispersion); that part is what the feature positions judge against
    their band, so only a shift a converged position may have is taken out here: a
    feature that moved further leaves its whole difference in the change."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    lo, hi = float(np.min(xb)), float(np.max(xb))
    span = ((hi - lo) or 1.0) if positions.origin_in_data(lo, hi) else None
    yb_g = compare.resample(xb, yb, grid)

    def worst(s: float) -> float:
        diff = yb_g - compare.resample(shifted(xa, s, span), ya, grid)
        return float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else math.inf

    unaligned = worst(0.0)
    if not math.isfinite(unaligned):
        return {"change": math.nan, "unaligned": math.nan, "shift": 0.0, "span": span}
    trials = np.linspace(-max_shift, max_shift, 81)
    values = [worst(s) for s in trials]
    i = int(np.argmin(values))
    step = trials[1] - trials[0]
    fine = minimize_scalar(
        worst,
        bounds=(max(-max_shift, trials[i] - step), min(max_shift, trials[i] + step)),
        method="bounded",
        options={"xatol": 1e-3 * step},
    )
    best, s = (fine.fun, float(fine.x)) if fine.fun < values[i] else (values[i], trials[i])
    if best >= unaligned:
        best, s = unaligned, 0.0
    return {"change": best, "unaligned": unaligned, "shift": s, "span": span}


def pointwise_local(label: str, xa, ya, xb, yb, x_grid=None, variant: str = RESOLUTION) -> dict:
    """Largest change relative to the curve's local |y| (floored at
    `thresholds.CONVERGENCE_LOCAL_FLOOR` of its max): what bounds the error where the
    curve is small. Judged only when the rerun is to excuse a failed check
    (`excuse_resolution`); it never fails a stage by itself."""
    import numpy as np

    grid = _common_grid(xa, xb, x_grid)
    yb_g = compare.resample(xb, yb, grid)
    diff = yb_g - compare.resample(xa, ya, grid)
    floor = th.CONVERGENCE_LOCAL_FLOOR * (float(np.max(np.abs(yb))) or 1.0)
    rel = np.abs(diff) / np.maximum(np.abs(yb_g), floor)
    change = float(np.nanmax(rel)) if np.isfinite(rel).any() else math.nan
    name = f"{label} pointwise max change relative to the local value (excuse test)"
    out = quantity(variant, name, None, None, change, th.CONVERGENCE_POINTWISE)
    return {**out, "points": int(grid.size), "excuse_only": True}


def feature_quantities(label: str, xa, ya, xb, yb, variant: str = RESOLUTION) -> list[dict]:
    """Position and height of every peak/dip of the rerun against the nearest of the run."""
    import numpy as np

    scale = float(np.max(np.abs(yb))) or 1.0
    prom = compare.FEATURE_PROMINENCE * (float(np.ptp(yb)) or 1.0)
    fa, fb = compare.find_features(xa, ya, prom), compare.find_features(xb, yb, prom)
    out = []
    for i, f2 in enumerate(fb):
        same = [f for f in fa if f["kind"] == f2["kind"]]
        if not same:
            continue
        f1 = min(same, key=lambda f: abs(f["x"] - f2["x"]))
        name = f"{label} {f2['kind']} {i}"
        # relative to the position, or to the axis' span where the origin lies in the
        # data (a lobe at 0°, a band edge at Γ): positions.position_scale
        lo, hi = float(np.min(xb)), float(np.max(xb))
        shift = abs(f2["x"] - f1["x"]) / positions.position_scale(f2["x"], lo, hi, None)[0]
        est = _estimate(variant, f1["x"], f2["x"])
        out.append(
            quantity(
                variant, f"{name} position", f1["x"], f2["x"], shift, th.CONVERGENCE_POSITION, est
            )
        )
        height = abs(f2["y"] - f1["y"]) / scale
        est = _estimate(variant, f1["y"], f2["y"])
        out.append(
            quantity(
                variant, f"{name} height", f1["y"], f2["y"], height, th.CONVERGENCE_HEIGHT, est
            )
        )
    return out


def key_value_quantities(label: str, xa, ya, xb, yb, key_values, variant=RESOLUTION) -> list:
    """The paper's headline numbers (metadata key_values) read off both runs' curves."""
    out = []
    for kv in key_values:
        a, b = compare.key_value(kv, xa, ya)["sim"], compare.key_value(kv, xb, yb)["sim"]
        if a is None or b is None:
            continue
        change = abs(b - a) / abs(b) if b else abs(b - a)
        est = _estimate(variant, a, b)
        out.append(
            quantity(
                variant,
                f"{label} key value {kv.get('quantity', kv['kind'])}",
                a,
                b,
                change,
                th.CONVERGENCE_KEY_VALUE,
                est,
            )
        )
    return out


def curve_quantities(label, a: tuple, b: tuple, x_grid=None, key_values=(), variant=RESOLUTION):
    """Pointwise, features and key values of one curve: `a` the run's (x, y), `b` the
    rerun's."""
    import numpy as np

    xa, ya = (np.asarray(v, float) for v in a)
    xb, yb = (np.asarray(v, float) for v in b)
    oa, ob = np.argsort(xa), np.argsort(xb)
    xa, ya, xb, yb = xa[oa], ya[oa], xb[ob], yb[ob]
    return [
        pointwise(label, xa, ya, xb, yb, x_grid, variant),
        aligned_pointwise(label, xa, ya, xb, yb, x_grid, variant),
        pointwise_local(label, xa, ya, xb, yb, x_grid, variant),
        *feature_quantities(label, xa, ya, xb, yb, variant),
        *key_value_quantities(label, xa, ya, xb, yb, key_values, variant),
    ]


def compare_folders(
    figure_outputs: list[dict],
    run_n,
    run_v,
    variant: str = RESOLUTION,
    *,
    x_grid=None,
    key_values=(),
) -> list[dict]:
    """Every reproduced curve (pointwise, features, key values) and every Harminv mode
    (frequency, Q) of the run folder `run_n` against the rerun's `run_v`.
    `x_grid(figure_output)` gives the paper's x points (None: the run's own grid);
    `key_values` are the paper's (metadata key_values as dicts)."""
    out = folder_curve_quantities(
        figure_outputs, run_n, run_v, variant, x_grid=x_grid, key_values=key_values
    )
    modes_n = record_modes(load_record(run_n))
    if modes_n:
        out += mode_quantities(modes_n, record_modes(load_record(run_v)), variant)
    return out


def folder_curve_quantities(
    figure_outputs: list[dict], run_a, run_b, variant: str, *, x_grid=None, key_values=()
) -> list[dict]:
    """The curves' quantities of folder `run_a` (the reference) against `run_b`."""
    out = []
    for fo in figure_outputs:
        label = f"{fo['figure_id']}/{fo['curve_id']}"
        try:
            a, b = read_output_csv(run_a, fo["file"]), read_output_csv(run_b, fo["file"])
            xy_a = (a[fo["x_column"]], a[fo["y_column"]])
            xy_b = (b[fo["x_column"]], b[fo["y_column"]])
        except (OSError, ValueError, KeyError, IndexError, InputFileError) as exc:
            nan = quantity(variant, label, None, None, math.nan, th.CONVERGENCE_POINTWISE)
            out.append({**nan, "error": str(exc)})
            continue
        kvs = [
            kv
            for kv in key_values
            if (kv.get("figure"), kv.get("curve")) == (fo["figure_id"], fo["curve_id"])
            and kv["kind"] != "other"
        ]
        grid = x_grid(fo) if x_grid else None
        out += curve_quantities(label, xy_a, xy_b, grid, kvs, variant)
    return out


def quantities(figure_outputs: list[dict], run_n, run_2n) -> list[dict]:
    """The resolution rerun's quantities on the run's own x grid, no key values."""
    return compare_folders(figure_outputs, run_n, run_2n)


def record_modes(sims: list[dict]) -> list[dict]:
    """Trusted Harminv modes of a run-time record (as_built.json's simulations), each
    with the `label` of its run (k point and m: modes are matched within a label) and
    its `window` (the run's time, the upper bound of what Harminv saw)."""
    out = []
    for s in sims:
        for r in s.get("runs", []):
            label = run_label(s, r)
            for h in r.get("harminv", []):
                strongest = max((m.get("amp") or 0.0 for m in h.get("modes", [])), default=0.0)
                for m in h.get("modes", []):
                    if m.get("freq") and harminv.mode_trusted(m, strongest)[0]:
                        out.append({**m, "label": label, "window": r.get("sim_time")})
    return out


def _q_measurable(mode: dict) -> bool:
    """Q is compared only where the run could measure it (a mode without its window:
    any finite positive Q)."""
    if mode.get("window"):
        return harminv.q_measurable(mode, mode["window"])
    q = mode.get("Q")
    return q is not None and math.isfinite(q) and q > 0


def mode_quantities(modes_n: list[dict], modes_v: list[dict], variant: str) -> list[dict]:
    """Frequency of each mode of the run against the rerun's nearest mode of the same
    run label (k point, m); Q where both runs can measure it."""
    out = []
    order = sorted(modes_n, key=lambda m: (m.get("label", ""), m["freq"]))
    for i, m in enumerate(order):
        label = m.get("label", "")
        name = f"mode {i}" + (f" [{label}]" if label else "") + f" (f = {m['freq']:.5g})"
        same = [v for v in modes_v if v.get("label", "") == label]
        near = min(same, key=lambda v: abs(v["freq"] - m["freq"]), default=None)
        shift = abs(near["freq"] - m["freq"]) / abs(m["freq"]) if near else math.inf
        if shift > th.CONVERGENCE_MODE_MATCH:
            row = quantity(
                variant, f"{name} frequency", m["freq"], None, shift, th.CONVERGENCE_FREQUENCY
            )
            where = f" at {label}" if label else ""
            row.update(status="warn", note=f"no mode of the rerun near it{where} (Harminv)")
            out.append(row)
            continue
        est = _estimate(variant, m["freq"], near["freq"])
        row = quantity(
            variant,
            f"{name} frequency",
            m["freq"],
            near["freq"],
            shift,
            th.CONVERGENCE_FREQUENCY,
            est,
        )
        out.append(row)
        if not (_q_measurable(m) and _q_measurable(near)):
            row["note"] = (
                "Q not compared: above what "
                + ("both runs" if not (_q_measurable(m) or _q_measurable(near)) else "one run")
                + " can measure (a lossless mode's Q is Harminv noise)"
            )
            continue
        dq = abs(near["Q"] - m["Q"]) / m["Q"]
        row = quantity(
            variant,
            f"{name} Q",
            m["Q"],
            near["Q"],
            dq,
            th.CONVERGENCE_Q,
            _estimate(variant, m["Q"], near["Q"]),
        )
        if variant == PML:
            row = {**row, **pml_q_bound(dq)}
        out.append(row)
    return out


def pml_q_bound(dq: float) -> dict:
    """A PML's error in Q at thickness d is at most twice its change when d doubles
    (first-order convergence in d, the slowest a graded PML gives): one doubling that
    moves Q by 5 % leaves the run's Q up to 10 % off, so it is judged on that bound."""
    bound = 2 * dq
    return {
        "error_estimate": bound,
        "status": status_of(bound, th.CONVERGENCE_Q),
        "note": f"judged on twice the change ({bound:.3g}): the run's own PML error",
    }


def judged(quantities: list[dict]) -> list[dict]:
    """The quantities that judge a stage (not the excuse tests, not the reported
    unaligned pointwise change)."""
    return [q for q in quantities if not (q.get("excuse_only") or q.get("reported"))]


NO_EVIDENCE = "no_evidence"
"""A rerun the policy asked for was stopped by a limit: nothing shown either way."""


def verdict(quantities: list[dict]) -> str:
    """converged (nothing failed), not_converged, or not_run (nothing compared)."""
    if not quantities:
        return "not_run"
    failed = any(q["status"] == "fail" for q in judged(quantities))
    return "not_converged" if failed else "converged"


def q_budget(conv: dict) -> Check | None:
    """A resonance's Q judged against its PML as well as its resolution: per mode, its Q
    change at 2x resolution and its PML bound combined (None without both reruns). The
    two are independent sources of error (the grid's dispersion, the PML's reflection),
    so they add in quadrature, as independent uncertainties do; either alone over the
    limit fails. The coarser runs stand for the 2x rerun with the change their estimate
    predicts at 2x."""
    rows = {}
    for var in conv.get("variants", []):
        res = var["id"] in RESOLUTION_VARIANTS
        for q in var.get("quantities", []) if var.get("ran") else []:
            if q["name"].endswith(" Q") and q["change"] == q["change"]:
                err = q["error_estimate"] if var["id"] == PML else q.get("change_2x", q["change"])
                rows.setdefault(q["name"], {})[RESOLUTION if res else var["id"]] = err
    both = {k: v for k, v in rows.items() if RESOLUTION in v and PML in v}
    if not both:
        return None

    def combined(parts: dict) -> float:
        return math.sqrt(sum(v * v for v in parts.values()))

    name, parts = max(both.items(), key=lambda kv: combined(kv[1]))
    total = combined(parts)
    lim = th.CONVERGENCE_Q
    return Check(
        "convergence:q_budget",
        status_of(total, lim),
        f"{len(both)} modes' Q judged at 2x resolution and 2x PML together; largest: "
        f"{name} moved {parts[RESOLUTION]:.3g} (resolution, at 2x or as the coarser runs "
        f"predict it) and {parts[PML]:.3g} (PML bound), in quadrature {total:.3g}",
        round(total, 6),
        f"fail > {lim.fail:g}, warn > {lim.warn:g} (both in quadrature)",
    )


def convergence_checks(conv: dict) -> list[Check]:
    """What a convergence.json adds to the stage's checks: one `convergence:<variant>`
    check per rerun (its worst quantity), failing when any quantity failed."""
    out = []
    for var in conv.get("variants", []):
        qs = judged(var.get("quantities", []))
        if not var.get("ran"):
            out.append(Check(f"convergence:{var['id']}", "warn", var.get("note") or "not run"))
            continue
        if not qs:
            out.append(Check(f"convergence:{var['id']}", "warn", "ran; nothing to compare"))
            continue
        order = {"pass": 0, "warn": 1, "fail": 2}
        worst = max(
            qs,
            key=lambda q: (
                order[q["status"]],
                q["change"] if q["change"] == q["change"] else math.inf,
            ),
        )
        failed = [q["name"] for q in qs if q["status"] == "fail"]
        out.append(
            Check(
                f"convergence:{var['id']}",
                worst["status"],
                f"{len(qs)} quantities compared; largest change {worst['name']}: "
                f"{worst['change']:.3g}" + (f"; failed: {', '.join(failed[:6])}" if failed else ""),
                round(worst["change"], 6) if worst["change"] == worst["change"] else None,
                worst["limit"],
            )
        )
    budget = q_budget(conv)
    return out + ([budget] if budget else [])


def excuse_resolution(checks: list[dict], conv: dict) -> tuple[list[dict], str]:
    """A failed `built:resolution_ppw` stands unless the resolution rerun ran and
    converged; then it becomes a warn saying so, with the numbers. Returns the checks
    and a note for the verdict's reason ('' when nothing was excused)."""
    res = next((v for v in conv.get("variants", []) if v["id"] in RESOLUTION_VARIANTS), None)
    qs = res.get("quantities", []) if res else []
    converged = bool(res and res.get("ran") and verdict(qs) == "converged")
    # the excuse must bound the error where the curve is small too
    unbounded = [q for q in qs if q.get("excuse_only") and q["status"] == "fail"]
    out, note = [], ""
    for c in checks:
        if c["name"] == "built:resolution_ppw" and c["status"] == "fail" and unbounded:
            q = unbounded[0]
            note = (
                f"under-resolved ({c['value']} pixels per wavelength) and not excused by "
                f"convergence: at 2x resolution {q['name']} moved {q['change']:.3g} "
                f"(limit {q['limit']})"
            )
            c = {**c, "detail": f"{c['detail']} [{note}]"}
        elif c["name"] == "built:resolution_ppw" and c["status"] == "fail" and converged:
            worst = max(judged(qs), key=lambda q: q["change"])
            note = (
                f"under-resolved ({c['value']} pixels per wavelength, fail < "
                f"{th.PPW_AS_BUILT.fail:g}) but excused by convergence: "
                + (
                    f"at 2x resolution {len(res['quantities'])} quantities moved"
                    if res["id"] == RESOLUTION
                    else f"the estimated error of {len(res['quantities'])} quantities is"
                )
                + f" at most {worst['change']:.3g} "
                f"({worst['name']}, limit {worst['limit']})"
            )
            c = {
                **c,
                "status": "warn",
                "detail": f"{c['detail']} [{note}]",
                "excused_by": "convergence",
            }
        out.append(c)
    return out, note


def excuse_pml(checks: list[dict], conv: dict) -> tuple[list[dict], str]:
    """A failed `built:pml_thickness` of a resonance stands unless the PML-doubled rerun
    ran, compared its modes' Q and converged (each judged on twice its change: the
    thinner PML's own error); then it becomes a warn saying so, with the numbers. A
    thickness rule in wavelengths is a prior: whether a PML's reflection biases Q
    depends on how much of the mode reaches it, which the rerun measures. Returns the
    checks and a note ('' when nothing was excused)."""
    pml = next((v for v in conv.get("variants", []) if v["id"] == PML), None)
    qs = [q for q in (pml or {}).get("quantities", []) if q["name"].endswith(" Q")]
    if not (pml and pml.get("ran") and qs and verdict(pml["quantities"]) == "converged"):
        return checks, ""
    worst = max(qs, key=lambda q: q.get("error_estimate", q["change"]))
    bound = worst.get("error_estimate", worst["change"])
    note = (
        f"thin PML ({checks_value(checks, 'built:pml_thickness')} wavelengths) but excused "
        f"by convergence: at 2x PML {len(qs)} modes' Q moved at most {worst['change']:.3g} "
        f"({worst['name']}; bound {bound:.3g}, limit {worst['limit']})"
    )
    out = []
    for c in checks:
        if c["name"] == "built:pml_thickness" and c["status"] == "fail":
            c = {
                **c,
                "status": "warn",
                "detail": f"{c['detail']} [{note}]",
                "excused_by": "convergence",
            }
        out.append(c)
    return out, note if out != checks else ""


def checks_value(checks: list[dict], name: str):
    return next((c.get("value") for c in checks if c["name"] == name), None)


def with_convergence(checks: dict, conv: dict) -> tuple[dict, str]:
    """A checks.json with the convergence result judged in: its checks added, a failed
    resolution excused when the resolution rerun converged, the verdict recomputed.
    Returns it and the note for the stage's reason ('' when there is nothing to say)."""
    items, note = excuse_resolution(checks.get("checks", []), conv)
    items, pml_note = excuse_pml(items, conv)
    note = "; ".join(n for n in (note, pml_note) if n)
    items = items + [asdict(c) for c in convergence_checks(conv)]
    unexcused = any(c["name"] == "built:resolution_ppw" and c["status"] == "fail" for c in items)
    if unexcused and not note:
        note = (
            f"under-resolved and not excused by convergence ({conv.get('status')}: "
            + (conv.get("note") or "a rerun quantity moved beyond its limit")
            + ")"
        )
    if conv.get("status") == NO_EVIDENCE and not note:
        stopped = [v["note"] for v in conv.get("variants", []) if v.get("no_evidence")]
        note = f"convergence: {stopped[0] if stopped else 'no evidence'}"
    statuses = [c["status"] for c in items]
    verdict = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
    return {**checks, "checks": items, "verdict": verdict, "convergence": conv.get("status")}, note
