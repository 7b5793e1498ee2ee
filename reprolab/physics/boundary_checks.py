"""The design's coordinates, boundaries, k points and azimuthal orders against what
Meep built (the run-time record, `as_built`).

A design declares `coordinates`, `boundaries` (per axis: pml, bloch, metallic or none),
`k_points` and `m`; a design without `boundaries` has a PML of `pml_thickness` (a
legacy design: at least one PML must be built, its axes are not judged). Each check
is named `built:<what>` and names the simulation and axis it found:

- `built:coordinates_as_designed`: cylindrical (axes r, z) where the design is, Cartesian
  where it is not;
- `built:pml_as_declared`: every axis the design gives a PML has one;
- `built:pml_only_where_declared`: no PML on an axis the design makes Bloch, metallic
  or none (a PML in a Bloch cell damps the very modes it computes);
- `built:bloch_as_declared`: a Bloch axis ran with a k_point (without one Meep builds
  metallic walls); a metallic axis without one (a k_point makes it periodic);
- `built:k_points_run`: every declared k point ran (per run: `run_k_points` reuses one
  simulation);
- `built:m_run`: every declared m ran.
"""

from __future__ import annotations

from reprolab.physics.check import Check

# Two k points (2π/a) or orders closer than this are the same.
K_TOLERANCE = 1e-6
ABSORBING = ("pml", "absorber")


def design_boundaries(design: dict) -> dict[str, dict] | None:
    """axis -> {kind, thickness} of a design; None for a design without `boundaries`."""
    found = design.get("boundaries") or []
    if not found:
        return None
    out = {}
    for b in found:
        thickness = b.get("thickness") if b["kind"] == "pml" else None
        if b["kind"] == "pml" and thickness is None:
            thickness = design.get("pml_thickness")
        out[b["axis"]] = {"kind": b["kind"], "thickness": thickness}
    return out


def pml_thicknesses(design: dict) -> list[float]:
    """The PML thicknesses (units of a) a design asks for; [] for none (a Bloch cell)."""
    declared = design_boundaries(design)
    if declared is None:
        return [design["pml_thickness"]] if design.get("pml_thickness") else []
    return sorted({b["thickness"] for b in declared.values() if b["kind"] == "pml"})


def built_kinds(sim: dict) -> dict[str, dict[str, str]]:
    """axis -> {side: kind} as built; a record without `boundaries` (older runs) is
    read from its layers and k_point (Cartesian)."""
    if "boundaries" in sim:
        return sim["boundaries"]
    dims = sim.get("dimensions")
    axes = "z" if dims == 1 else "xy" if dims == 2 else "xyz"
    out = {}
    for ax in axes:
        sides = {}
        for side in ("low", "high"):
            kinds = {
                x["kind"]
                for x in sim.get("boundary_layers", [])
                if (x["axis"], x["side"]) == (ax, side)
            }
            sides[side] = (
                ("pml" if "PML" in kinds else "absorber")
                if kinds
                else "bloch"
                if sim.get("k_point") is not None
                else "metallic"
            )
        out[ax] = sides
    return out


def _cylindrical(sim: dict) -> bool:
    return bool(sim.get("cylindrical")) or sim.get("coordinates") == "cylindrical"


def _label(sim: dict) -> str:
    return f"simulation {sim.get('index', '?')}"


def coordinates_check(sims: list[dict], design: dict) -> Check:
    want = design.get("coordinates") or "cartesian"
    wrong = [s for s in sims if _cylindrical(s) != (want == "cylindrical")]
    detail = (
        "; ".join(
            f"{_label(s)} ran {'cylindrical (r, z)' if _cylindrical(s) else 'Cartesian'}"
            for s in wrong[:4]
        )
        + f"; the design declares {want}"
        if wrong
        else f"all {len(sims)} simulation(s) {want}, as designed"
    )
    return Check(
        "built:coordinates_as_designed",
        "fail" if wrong else "pass",
        detail,
        len(wrong),
        "fail: a simulation in other coordinates than the design's",
    )


def _absorbing_sides(kinds: dict[str, str]) -> list[str]:
    return [side for side, kind in kinds.items() if kind in ABSORBING]


def pml_declared_check(sims: list[dict], design: dict) -> Check | None:
    """Every axis the design gives a PML has one as built (a legacy design: some PML)."""
    declared = design_boundaries(design)
    if declared is None:
        if not design.get("pml_thickness"):
            return None
        built = [s for s in sims if any(_absorbing_sides(k) for k in built_kinds(s).values())]
        return Check(
            "built:pml_as_declared",
            "pass" if built else "fail",
            f"the design gives pml_thickness {design['pml_thickness']:g} a; "
            + (
                f"{len(built)} of {len(sims)} simulation(s) built a PML"
                if built
                else "no simulation built any PML (the cell is closed by metallic walls)"
            ),
            len(built),
            "fail: a declared PML built nowhere",
        )
    missing = []
    for s in sims:
        kinds = built_kinds(s)
        for axis, b in declared.items():
            if b["kind"] != "pml":
                continue
            sides = kinds.get(axis)
            outer = [k for k in (sides or {}).values() if k != "axis"]
            if sides is None or not all(k in ABSORBING for k in outer):
                found = "no such axis" if sides is None else f"built {sides}"
                missing.append(f"{_label(s)}: {axis} ({found})")
    n = sum(b["kind"] == "pml" for b in declared.values())
    if not n:
        return None
    return Check(
        "built:pml_as_declared",
        "fail" if missing else "pass",
        ("declared PML not built on " + "; ".join(missing[:6]))
        if missing
        else f"PML on the {n} declared axis/axes in every simulation",
        len(missing),
        "fail: a declared PML axis without a PML on each of its sides",
    )


def pml_undeclared_check(sims: list[dict], design: dict) -> Check | None:
    """No PML on an axis the design declares Bloch, metallic or none."""
    declared = design_boundaries(design)
    if declared is None:
        return None
    extra = []
    for s in sims:
        for axis, sides in built_kinds(s).items():
            want = declared.get(axis, {"kind": "undeclared"})["kind"]
            if want != "pml" and _absorbing_sides(sides):
                extra.append(
                    f"{_label(s)}: {axis} ({', '.join(_absorbing_sides(sides))}) "
                    f"where the design has {want}"
                )
    return Check(
        "built:pml_only_where_declared",
        "fail" if extra else "pass",
        ("PML built " + "; ".join(extra[:6]))
        if extra
        else "no PML on an axis the design makes Bloch, metallic or none",
        len(extra),
        "fail: a PML on an axis the design does not give one",
    )


def bloch_check(sims: list[dict], design: dict) -> Check | None:
    """A declared Bloch axis is periodic as built; a declared metallic one is not."""
    declared = design_boundaries(design)
    if declared is None or not any(b["kind"] in ("bloch", "metallic") for b in declared.values()):
        return None
    wrong = []
    for s in sims:
        kinds = built_kinds(s)
        for axis, b in declared.items():
            sides = kinds.get(axis)
            if b["kind"] not in ("bloch", "metallic") or sides is None:
                continue
            bad = [k for k in sides.values() if k not in (b["kind"], "axis")]
            if bad:
                why = (
                    " (no k_point: Meep builds metallic walls)"
                    if b["kind"] == "bloch" and "metallic" in bad
                    else " (a k_point makes it periodic)"
                    if "bloch" in bad
                    else ""
                )
                wrong.append(f"{_label(s)}: {axis} built {sorted(set(bad))}{why}")
    return Check(
        "built:bloch_as_declared",
        "fail" if wrong else "pass",
        ("; ".join(wrong[:6]) + " where the design declares otherwise")
        if wrong
        else "Bloch and metallic axes as declared",
        len(wrong),
        "fail: a declared Bloch axis not periodic, or a metallic one periodic",
    )


def run_values(sims: list[dict], key: str) -> list:
    """The value of `key` (k_point, m) each run used: the run's own, else its
    simulation's (records before per-run values)."""
    out = []
    for s in sims:
        runs = s.get("runs") or [{}]
        for r in runs:
            out.append(r[key] if r.get(key) is not None else s.get(key))
    return out


def _same_k(a, b) -> bool:
    a = [x or 0.0 for x in (a or [0, 0, 0])]
    return all(abs(x - y) <= K_TOLERANCE for x, y in zip(a, b, strict=True))


def k_points_check(sims: list[dict], design: dict) -> Check | None:
    wanted = design.get("k_points") or []
    if not wanted:
        return None
    ran = [k for k in run_values(sims, "k_point") if k is not None]
    missing = [k for k in wanted if not any(_same_k(r, k) for r in ran)]
    return Check(
        "built:k_points_run",
        "fail" if missing else "pass",
        (f"{len(missing)} of {len(wanted)} declared k points never ran: {missing[:6]}")
        if missing
        else f"all {len(wanted)} declared k points ran ({len(ran)} run(s) with a k point)",
        len(missing),
        f"fail: a declared k point (2π/a) with no run within {K_TOLERANCE:g}",
    )


def m_check(sims: list[dict], design: dict) -> Check | None:
    wanted = design.get("m") or []
    if not wanted:
        return None
    ran = {float(m) for m in run_values(sims, "m") if m is not None}
    missing = [m for m in wanted if not any(abs(r - m) <= K_TOLERANCE for r in ran)]
    return Check(
        "built:m_run",
        "fail" if missing else "pass",
        (f"declared m {missing} never ran (ran: {sorted(ran)})")
        if missing
        else f"all declared m {list(wanted)} ran",
        len(missing),
        "fail: a declared azimuthal order with no run",
    )


def boundary_checks(sims: list[dict], design: dict | None) -> list[Check]:
    """The design's coordinates, boundaries, k points and m against the record; none
    without a design or for a run that built nothing."""
    declared_none = design and design.get("runs_simulation") is False
    if not design or not sims or (declared_none and not design.get("plan_simulates")):
        return []
    coords = coordinates_check(sims, design)
    found = [coords, k_points_check(sims, design), m_check(sims, design)]
    if coords.status == "pass":  # axes are only comparable in the same coordinates
        found += [
            pml_declared_check(sims, design),
            pml_undeclared_check(sims, design),
            bloch_check(sims, design),
        ]
    return [c for c in found if c is not None]
