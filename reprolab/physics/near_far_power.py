"""The power balance of a near-to-far transformation, from the run-time record alone.

The power through the near surface (`near_surface_flux`: the record's own flux monitor
on the near2far regions, `reprolab.physics.as_measured`) and the power of the far field
the script read (`farfield`: the Poynting vector Re(E* x H) Meep returned at each point)
integrated over the sampled circle (2D) or sphere (3D) must agree: the far field
carries all the power that left the surface. The far-field points are the record's, so
their radius and angles are what the script used, not what it says it used.

A circle is integrated with the closed trapezoid rule over its sorted angles; a sphere
on its θ, φ grid about z (a closed trapezoid over φ on every θ ring, then the trapezoid
over θ with sin θ, the poles adding nothing). A far field sampled over less than the
whole circle or sphere (a gap wider than `GAP_STEPS` sampling steps) cannot be judged:
the check says so (`skip`), it never passes.
"""

from __future__ import annotations

import math

from reprolab.physics import thresholds as th
from reprolab.physics.check import Check

NAME = "built:near_far_power_balance"
# A gap between sampled angles wider than this many median steps is a part of the
# circle or sphere the far field was not taken on.
GAP_STEPS = 2.5
# Points whose distances from the centre differ by more than this (relative) are not one
# circle or sphere.
RADIUS_RTOL = 1e-3
# Frequencies whose near-surface power is under this fraction of the largest carry too
# little power to judge.
MIN_POWER_FRACTION = 0.01


def _surface_box(monitor: dict) -> list[tuple[float, float]]:
    regions = [r for r in monitor["regions"] if None not in r["center"] + r["size"]]
    return [
        (
            min(r["center"][i] - r["size"][i] / 2 for r in regions),
            max(r["center"][i] + r["size"][i] / 2 for r in regions),
        )
        for i in range(3)
    ]


def _centred(points, centres):
    """(centre, radius) of the first candidate centre all points are equally far from."""
    import numpy as np

    for c in centres:
        r = np.linalg.norm(points - c, axis=1)
        if r.min() > 0 and (r.max() - r.min()) <= RADIUS_RTOL * r.max():
            return c, float(r.mean())
    return None, None


def _closed_trapezoid(angles, values, steps_of: str):
    """∮ f dφ over sorted angles on a full turn, and why not where they leave a gap."""
    import numpy as np

    order = np.argsort(angles)
    a, v = angles[order], values[order]
    keep = np.append(np.diff(a) > 1e-9, True)
    a, v = a[keep], v[keep]
    if a.size < 3:
        return None, f"{a.size} far-field angle(s) {steps_of}"
    gaps = np.diff(np.append(a, a[0] + 2 * math.pi))
    step = float(np.median(gaps))
    if gaps.max() > GAP_STEPS * step:
        return None, (
            f"the far field covers {math.degrees(2 * math.pi - gaps.max()):.4g}° of the turn "
            f"{steps_of} (a {math.degrees(gaps.max()):.4g}° gap, steps {math.degrees(step):.3g}°)"
        )
    v_next = np.roll(v, -1, axis=0)
    return ((v + v_next) / 2 * gaps[:, None]).sum(axis=0), None


def _far_power_2d(d, s, radius):
    import numpy as np

    phi = np.arctan2(d[:, 1], d[:, 0])
    s_r = np.einsum("pfk,pk->pf", s[:, :, :2], d[:, :2] / radius)
    ring, why = _closed_trapezoid(phi, s_r, "in the plane")
    return (None, why) if ring is None else (ring * radius, None)


def _far_power_3d(d, s, radius):
    import numpy as np

    theta = np.arccos(np.clip(d[:, 2] / radius, -1, 1))
    phi = np.arctan2(d[:, 1], d[:, 0])
    s_r = np.einsum("pfk,pk->pf", s, d / radius)
    rows, values = [], []
    for t in np.unique(np.round(theta, 6)):
        if math.sin(t) < 1e-6:
            continue  # a pole: no area
        on = np.abs(theta - t) < 1e-6
        ring, why = _closed_trapezoid(phi[on], s_r[on], f"at θ = {math.degrees(t):.4g}°")
        if ring is None:
            return None, why + " (the far field is not a full θ, φ grid about z)"
        rows.append(t)
        values.append(ring * math.sin(t))
    if len(rows) < 2:
        return None, f"{len(rows)} θ ring(s) off the poles: no sphere to integrate"
    t = np.array([0.0, *rows, math.pi])
    gaps = np.diff(t)
    if gaps.max() > GAP_STEPS * float(np.median(gaps)):
        return None, (
            f"the far field spans θ = {math.degrees(rows[0]):.4g}° to "
            f"{math.degrees(rows[-1]):.4g}° (a {math.degrees(gaps.max()):.4g}° gap): "
            "not the whole sphere"
        )
    f = np.array([np.zeros_like(values[0]), *values, np.zeros_like(values[0])])
    return ((f[1:] + f[:-1]) / 2 * gaps[:, None]).sum(axis=0) * radius**2, None


def _balance(sim: dict, index: int, monitor: dict) -> tuple[float | None, str]:
    """(worst |P_far / P_near - 1| over the frequencies, what was found) of one near2far
    monitor, at the last time the script read its far field; None: not judged."""
    import numpy as np

    label = f"simulation {sim['index']} near2far {index}"
    measured = [m for m in sim.get("measured", []) if m.get("monitor") == index]
    far = [m for m in measured if m["kind"] == "farfield" and m.get("poynting")]
    if not far:
        return None, f"{label}: no far field read point by point (get_farfield) in the record"
    t = max((m["sim_time"] or 0.0) for m in far)
    far = [m for m in far if (m["sim_time"] or 0.0) == t]
    near = [m for m in measured if m["kind"] == "near_surface_flux" and m["sim_time"] == t]
    if not near:
        return None, (
            f"{label}: no flux of its near surface in the record (near-field data loaded "
            "into it, or a periodic surface)"
        )
    points = np.array([m["point"] for m in far], float)
    s = np.array([m["poynting"] for m in far], float)
    box = _surface_box(monitor)
    dims = 3 if sim.get("dimensions") == 3 else 2
    if dims == 2:
        points[:, 2] = 0.0
    centre, radius = _centred(points, [np.array([(lo + hi) / 2 for lo, hi in box]), np.zeros(3)])
    if centre is None:
        return None, f"{label}: the far-field points are not on one circle or sphere"
    d = points - centre
    power, why = (_far_power_3d if dims == 3 else _far_power_2d)(d, s, radius)
    if power is None:
        return None, f"{label}: {why}"
    p_near = np.array(near[-1]["values"], float)
    freqs = near[-1]["freqs"]
    floor = MIN_POWER_FRACTION * max(p_near.max(), power.max())
    judged = [i for i in range(p_near.size) if p_near[i] > floor]
    if not judged:
        return math.inf, (
            f"{label}: no net power leaves the near surface (flux {p_near.max():.4g}, far field "
            f"{power.max():.4g}): its faces' weights do not all point outward"
        )
    rel = [abs(power[i] / p_near[i] - 1) for i in judged]
    i = judged[int(np.argmax(rel))]
    where = "circle" if dims == 2 else "sphere"
    return max(rel), (
        f"{label} at f = {freqs[i]:.4g}: far field {power[i]:.6g} over a {where} of "
        f"{radius:.4g} a ({len(far)} points), near surface {p_near[i]:.6g}"
    )


def power_balance_check(sims: list[dict]) -> Check | None:
    """The far field's power over the sampled circle or sphere against the power through
    the near surface, for every near2far monitor whose far field the script read."""
    found = [
        (s, i, m)
        for s in sims
        for i, m in enumerate(s.get("monitors", []))
        if m["kind"] == "near2far"
    ]
    if not found:
        return None
    lim = th.NEAR_FAR_POWER_BALANCE
    limit = f"fail > {lim.fail:g}, warn > {lim.warn:g} (relative)"
    judged, skipped = [], []
    for s, i, m in found:
        if s.get("cylindrical"):
            skipped.append(f"simulation {s['index']} near2far {i}: cylindrical coordinates")
            continue
        rel, detail = _balance(s, i, m)
        if rel is None:
            skipped.append(detail)
        else:
            judged.append((rel, detail))
    if not judged:
        return Check(NAME, "skip", "cannot judge: " + "; ".join(skipped), None, limit)
    worst, detail = max(judged, key=lambda x: x[0])
    status = "fail" if worst > lim.fail else "warn" if worst > lim.warn else "pass"
    shown = f"{worst:.3g}" if math.isfinite(worst) else "∞"
    others = f"; not judged: {'; '.join(skipped)}" if skipped else ""
    return Check(
        NAME,
        status,
        f"|far / near - 1| = {shown}: {detail}{others}",
        round(worst, 5) if math.isfinite(worst) else None,
        limit,
    )
