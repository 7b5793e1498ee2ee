"""Static lint of thin dispersive films on the grid (docs/checks.md, "Thin dispersive films").

Part of the code lint (`lint_code.code_findings`): reads the `mp.Block`s of a generated
script whose material is dispersive and judges their thickness in pixels and where their
faces fall relative to the grid points.
"""

from __future__ import annotations

import ast
import math

from reprolab.physics import thresholds as th
from reprolab.physics.checks import Check
from reprolab.physics.lint_ast import Consts, calls, dotted, finding, kwarg

_DISPERSIVE_KWARGS = {"E_susceptibilities", "H_susceptibilities", "D_conductivity"}
# A face closer than this (pixels) to a grid point counts as on it: which side the
# point falls is then decided by rounding.
ON_GRID_PX = th.FILM_ON_GRID_PX


def _dispersive(node: ast.AST | None, consts: Consts) -> str | None:
    """The name of a dispersive material expression (a `meep.materials` medium or a
    Medium with susceptibilities/conductivity), or None."""
    if isinstance(node, ast.Name):
        if node.id in consts.meep_materials:
            return node.id
        call = consts.calls.get(node.id)
        return node.id if call is not None and _dispersive(call, consts) else None
    if isinstance(node, ast.Attribute) and ".materials." in f".{dotted(node)}":
        return dotted(node)
    if (
        isinstance(node, ast.Call)
        and dotted(node.func).endswith("Medium")
        and any(k.arg in _DISPERSIVE_KWARGS for k in node.keywords)
    ):
        return "Medium(susceptibilities)"
    return None


def _vector(node: ast.AST | None, consts: Consts) -> list[float | None] | None:
    """(x, y, z) of a literal `mp.Vector3(...)`: None for a component that cannot be
    evaluated (mp.inf included); None when the node is not a Vector3 call."""
    if node is None:
        return [0.0, 0.0, 0.0]
    if not (isinstance(node, ast.Call) and dotted(node.func).endswith("Vector3")):
        return None
    out: list[float | None] = [0.0, 0.0, 0.0]
    for i, arg in enumerate(node.args[:3]):
        out[i] = consts.eval(arg)
    for k in node.keywords:
        if k.arg in ("x", "y", "z"):
            out["xyz".index(k.arg)] = consts.eval(k.value)
    return out


def film_findings(tree: ast.Module, consts: Consts, resolution: float) -> list[Check]:
    """Thin dispersive layers: pixels across, and faces relative to the grid.

    Dispersive media get no subpixel smoothing, so a layer is as thick as the number of
    grid points inside it. Meep samples the tangential E field at integer multiples of
    1/resolution from the cell centre along the film normal; a film with both faces on
    such points gets one extra point (one pixel thicker). Measured in 1D, 40 nm Ag at
    200 px/µm: max |ΔT| against the transfer matrix 0.037 with faces on grid points,
    0.001 with faces a quarter or half pixel off; a 0.3 µm fused-quartz slab 0.024 vs 0.001.
    Only Blocks whose centre and size are constants are judged (not stacks built in loops).
    """
    findings = []
    for call in calls(tree, "Block"):
        name = _dispersive(kwarg(call, "material"), consts)
        size, center = (
            _vector(kwarg(call, "size"), consts),
            _vector(kwarg(call, "center"), consts),
        )
        if name is None or size is None or center is None:
            continue
        finite = [(s, i) for i, s in enumerate(size) if s is not None and s > 0]
        if not finite or center[min(finite)[1]] is None:
            continue
        thickness, axis = min(finite)
        where = f"line {call.lineno}: {name} layer {thickness:g} a along {'xyz'[axis]}"
        findings += _film_checks(where, center[axis], thickness, axis, resolution)
    return findings


def _film_checks(
    where: str, center: float, thickness: float, axis: int, resolution: float
) -> list[Check]:
    """The two findings on one dispersive layer: its pixels across, and its faces."""
    lo = (center - thickness / 2) * resolution
    hi = (center + thickness / 2) * resolution
    offsets = [lo - round(lo), hi - round(hi)]  # signed, in pixels
    on_grid = [abs(o) < ON_GRID_PX for o in offsets]
    sampled = math.floor(hi + ON_GRID_PX) - math.ceil(lo - ON_GRID_PX) + 1
    px = thickness * resolution
    pixels = finding(
        "thin_layer_pixels",
        "warn" if px < th.THIN_LAYER_MIN_PIXELS else "pass",
        f"{where} is {px:.3g} pixels thick at resolution {resolution:g} (dispersive "
        "media get no subpixel smoothing: the error is first order in the pixel size)",
        round(px, 3),
        f"warn < {th.THIN_LAYER_MIN_PIXELS:g} pixels",
    )
    if all(on_grid):
        status = "fail"
    elif any(on_grid):
        status = "warn"
    else:
        status = "pass"
    quarter = f"{'xyz'[axis]} + 0.25 / RESOLUTION"
    faces = finding(
        "film_faces_off_grid",
        status,
        f"{where}: faces at {offsets[0]:+.3g} and {offsets[1]:+.3g} pixels from the "
        f"nearest grid point; {sampled} grid points sampled for {px:.3g} pixels"
        + (
            f" (the film is {sampled - px:+.3g} pixels off its thickness); move the "
            f"layer by a quarter pixel ({quarter}), which stays off the grid at 2x "
            "and 0.5x resolution too"
            if status != "pass"
            else ""
        ),
        round(min(abs(o) for o in offsets), 4),
        f"fail: both faces within {ON_GRID_PX:g} px of grid points, warn: one",
    )
    return [pixels, faces]
