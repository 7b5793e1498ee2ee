"""Static lint of a generated Meep script, read with `ast` before it runs.

`code_findings` is the list of the checks below, one function per concern, each
returning its `Check`s (named `lint:<name>`): the normalisation run and incident-field
subtraction (docs/checks.md, measured table row 6), the stop criterion (row 5), plane-wave sources
through PML (row 11), resolution and PML as the design has them (rows 7, 9), thin
dispersive films (row 8, `lint_films`) and the resolution scale (in a Harminv script
also the PML scale) read from the environment. Constants are resolved by `lint_ast.Consts`.
"""

from __future__ import annotations

import ast
import math

from reprolab.physics import thresholds as th
from reprolab.physics.checks import Check
from reprolab.physics.lint_ast import Consts, calls, dotted, finding, kwarg, run_invocations
from reprolab.physics.lint_films import _vector, film_findings

# The environment variable a generated script multiplies its resolution by: 2 for the
# convergence rerun, the debug factor in quick-check mode. Scripts must read it.
RESOLUTION_SCALE_ENV = "REPROLAB_RESOLUTION_SCALE"
# The one its PML thickness is multiplied by: 2 in a resonance stage's convergence rerun
# (a thin PML's reflection biases Harminv's Q). Scripts that run Harminv must read it.
PML_SCALE_ENV = "REPROLAB_PML_SCALE"


def code_findings(code: str, design: dict, *, need_resolution_env: bool = False) -> list[Check]:
    """Static findings on a generated Meep script (see the module docstring)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [finding("parse", "fail", f"code does not parse: line {exc.lineno}: {exc.msg}")]
    consts = Consts(tree)
    if design.get("runs_simulation") is False:
        return _no_simulation_findings(tree)
    res_code = _code_resolution(tree, consts)
    # In this order: the last one reads the environment variables that evaluating the
    # constants of all the others has seen.
    return [
        *_normalisation_findings(tree, design),
        *_decay_tolerance_findings(tree, consts),
        *_run_stop_findings(tree, consts),
        *_plane_wave_findings(tree, consts),
        *_resolution_findings(res_code, design),
        *_pml_findings(tree, consts, res_code, design),
        *film_findings(tree, consts, res_code or design["resolution"]),
        *_resolution_env_findings(tree, consts, design, need_resolution_env),
        *_pml_env_findings(tree, consts, design, need_resolution_env),
    ]


def _no_simulation_findings(tree: ast.Module) -> list[Check]:
    """A design that runs no simulation (stage-0 material evaluation) has code building none."""
    sims = calls(tree, "Simulation")
    if not sims:
        return [finding("no_simulation", "pass", "no mp.Simulation, as the design declares")]
    return [
        finding(
            "no_simulation",
            "fail",
            f"line {sims[0].lineno}: the code builds a Simulation but the design declares "
            "runs_simulation: false (no resolution, PML or source to build it with); "
            "evaluate the material models only, or redesign with runs_simulation: true",
            len(sims),
            "0 simulations",
        )
    ]


def _uses_flux(tree: ast.Module) -> bool:
    return bool(calls(tree, "add_flux"))


def _code_resolution(tree: ast.Module, consts: Consts) -> float | None:
    """The resolution of the first `Simulation(...)` whose resolution evaluates."""
    return next(
        (
            v
            for s in calls(tree, "Simulation")
            if (v := consts.eval(kwarg(s, "resolution"))) is not None
        ),
        None,
    )


def _normalisation_findings(tree: ast.Module, design: dict) -> list[Check]:
    """Row 6: flux spectra need an empty-cell normalisation run, and a reported
    reflection the incident field subtracted."""
    columns = {c for o in design.get("output_specifications", []) for c in o.get("columns", [])}
    reflection = "R" in columns or any(c.lower().startswith("refl") for c in columns)
    if not _uses_flux(tree):
        return []
    findings = []
    runs = run_invocations(tree)
    if runs < 2:
        findings.append(
            finding(
                "normalisation_run",
                "fail",
                f"flux monitors but {runs} simulation run(s): no empty-cell normalisation "
                "run to divide by (T = flux / incident flux of an identical empty cell)",
                runs,
                ">= 2 runs",
            )
        )
    else:
        findings.append(finding("normalisation_run", "pass", f"{runs} runs", runs, ">= 2 runs"))
    if reflection:
        has_get = bool(calls(tree, "get_flux_data"))
        has_load = bool(calls(tree, "load_minus_flux_data"))
        findings.append(
            finding(
                "incident_field_subtracted",
                "pass" if has_get and has_load else "fail",
                "reflection computed with get_flux_data + load_minus_flux_data"
                if has_get and has_load
                else "reflection is reported but the incident field is not subtracted: "
                "save sim.get_flux_data(refl) in the empty run and call "
                "sim.load_minus_flux_data(refl, data) before the structure run",
            )
        )
    return findings


def _decay_tolerance_findings(tree: ast.Module, consts: Consts) -> list[Check]:
    """Row 5: the decay tolerance of the stop criteria."""
    findings = []
    for call in calls(tree, "stop_when_fields_decayed", "stop_when_energy_decayed"):
        short = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
        pos = 3 if short == "stop_when_fields_decayed" else 1
        node = kwarg(call, "decay_by") or (call.args[pos] if len(call.args) > pos else None)
        tol = consts.eval(node)
        if tol is None:
            continue
        findings.append(
            finding(
                "decay_tolerance",
                "fail" if tol > th.MAX_DECAY_TOLERANCE else "pass",
                f"line {call.lineno}: {short} decay_by = {tol:g}",
                tol,
                f"fail > {th.MAX_DECAY_TOLERANCE:g}",
            )
        )
    for call in calls(tree, "stop_when_dft_decayed"):
        node = kwarg(call, "tol") or (call.args[0] if call.args else None)
        tol = 1e-11 if node is None else consts.eval(node)
        if tol is not None and tol > th.MAX_DECAY_TOLERANCE:
            findings.append(
                finding(
                    "decay_tolerance",
                    "fail",
                    f"line {call.lineno}: stop_when_dft_decayed tol = {tol:g}",
                    tol,
                    f"fail > {th.MAX_DECAY_TOLERANCE:g}",
                )
            )
    return findings


def _run_stop_findings(tree: ast.Module, consts: Consts) -> list[Check]:
    """Row 5: how each `run(...)` stops: not stop_when_dft_decayed after the sources,
    not a fixed time for flux spectra."""
    findings = []
    uses_flux = _uses_flux(tree)
    for call in calls(tree, "run"):
        after = kwarg(call, "until_after_sources")
        if isinstance(after, ast.Call) and dotted(after.func).endswith("stop_when_dft_decayed"):
            findings.append(
                finding(
                    "early_stop_pitfall",
                    "fail",
                    f"line {call.lineno}: stop_when_dft_decayed as until_after_sources stopped a "
                    "Bragg run too early in tests; use stop_when_fields_decayed(dt, component, "
                    "point, 1e-9) after the sources, or stop_when_dft_decayed as `until`",
                )
            )
        until = kwarg(call, "until")
        fixed = consts.eval(until) if until is not None else None
        fixed_after = consts.eval(after) if after is not None else None
        if uses_flux and (fixed is not None or fixed_after is not None):
            findings.append(
                finding(
                    "fixed_run_time",
                    "warn",
                    f"line {call.lineno}: a fixed run time for flux spectra; nothing guarantees "
                    "the fields have decayed (use stop_when_fields_decayed, decay_by <= 1e-6)",
                )
            )
    return findings


def _truthy_constant(node: ast.Name, consts: Consts) -> bool:
    value = consts.eval(node)
    return value is not None and bool(value)


def _pml_all_round(tree: ast.Module) -> bool:
    """Whether some PML layer has no direction, i.e. covers every side."""
    return any(kwarg(c, "direction") is None for c in calls(tree, "PML"))


def _source_reaches_pml(tree: ast.Module, consts: Consts, call: ast.Call, size) -> bool | None:
    """Whether a sized source reaches the PML: True when some extent fills the cell
    inside the PML (or is mp.inf), False for a compact source (e.g. across a waveguide),
    None when the extents, the cell or the PML cannot be read."""
    ext = _vector(size, consts)
    sims = calls(tree, "Simulation")
    cell_node = kwarg(sims[0], "cell_size") if sims else None
    if isinstance(cell_node, ast.Name):
        cell_node = consts.calls.get(cell_node.id)
    cell = _vector(cell_node, consts) if cell_node is not None else None
    pmls = calls(tree, "PML")
    pml = consts.eval(pmls[0].args[0] if pmls[0].args else kwarg(pmls[0], "thickness"))
    if ext is None or cell is None or pml is None:
        return None
    sized = [(e, c) for e, c in zip(ext, cell, strict=True) if e is None or e > 0]
    if any(e is None or c is None for e, c in sized):
        return None
    return any(e >= 1e19 or e > c - 2 * pml + 1e-9 for e, c in sized)


def _plane_wave_findings(tree: ast.Module, consts: Consts) -> list[Check]:
    """Row 11: plane waves through PML need is_integrated=True."""
    findings = []
    pml_all_round = _pml_all_round(tree)
    for call in calls(tree, "Source", "EigenModeSource"):
        size = kwarg(call, "size")
        if size is None or not pml_all_round:
            continue
        reach = _source_reaches_pml(tree, consts, call, size)
        extended = reach is not False
        # is_integrated belongs to the SourceTime (GaussianSource(..., is_integrated=True));
        # accept it on the Source call too, and through a name bound to a SourceTime.
        src_time = kwarg(call, "src") or (call.args[0] if call.args else None)
        if isinstance(src_time, ast.Name):
            src_time = consts.calls.get(src_time.id)
        flags = [kwarg(call, "is_integrated")]
        if isinstance(src_time, ast.Call):
            flags.append(kwarg(src_time, "is_integrated"))
        # a named constant (INTEGRATED = True) counts: the code prompt asks for names
        ok = any(
            (isinstance(f, ast.Constant) and f.value is True)
            or (isinstance(f, ast.Name) and _truthy_constant(f, consts))
            for f in flags
        )
        if extended and not ok:
            findings.append(
                finding(
                    "plane_wave_is_integrated",
                    # unknown extent: the run-time record (built:plane_wave_is_integrated) decides
                    "fail" if reach else "warn",
                    f"line {call.lineno}: an extended source crosses PML on every side without "
                    "is_integrated=True (the incident wave is then non-uniform; a 2D cross-"
                    "section came out 38 % wrong)",
                )
            )
    return findings


def _resolution_findings(res_code: float | None, design: dict) -> list[Check]:
    """The code's resolution is the design's."""
    if res_code is None or math.isclose(res_code, design["resolution"], rel_tol=1e-6):
        return []
    return [
        finding(
            "resolution_matches_design",
            "fail",
            f"code resolution {res_code:g} differs from the design's {design['resolution']}",
            res_code,
            f"= {design['resolution']}",
        )
    ]


def _pml_findings(
    tree: ast.Module, consts: Consts, res_code: float | None, design: dict
) -> list[Check]:
    """Each PML of the code: thick enough in pixels, and as thick as the design's."""
    findings = []
    pml_calls = calls(tree, "PML")
    thicknesses = [consts.eval(c.args[0] if c.args else kwarg(c, "thickness")) for c in pml_calls]
    for t in (t for t in thicknesses if t is not None):
        if res_code is not None and t * res_code < th.PML_MIN_PIXELS:
            findings.append(
                finding(
                    "pml_pixels",
                    "fail",
                    f"PML of {t:g} a at resolution {res_code:g} is {t * res_code:.3g} pixels",
                    t * res_code,
                    f"fail < {th.PML_MIN_PIXELS:g} pixels",
                )
            )
        if not math.isclose(t, design["pml_thickness"], rel_tol=1e-6):
            findings.append(
                finding(
                    "pml_matches_design",
                    "fail",
                    f"code PML {t:g} differs from the design's {design['pml_thickness']:g} "
                    f"(both in units of a = {design.get('unit_length_um', 1.0):g} µm)",
                    t,
                    f"= {design['pml_thickness']:g}",
                )
            )
    return findings


def _resolution_env_findings(
    tree: ast.Module, consts: Consts, design: dict, need_resolution_env: bool
) -> list[Check]:
    """Convergence/debug reruns scale the resolution through the environment."""
    if not calls(tree, "Simulation") or RESOLUTION_SCALE_ENV in consts.env_names:
        return []
    return [
        finding(
            "resolution_from_env",
            "fail" if need_resolution_env else "warn",
            f"the script does not read {RESOLUTION_SCALE_ENV}; convergence and quick-check "
            f'runs need RESOLUTION = float(os.environ.get("{RESOLUTION_SCALE_ENV}", 1)) * '
            f"{design['resolution']}",
        )
    ]


def _pml_env_findings(
    tree: ast.Module, consts: Consts, design: dict, need_env: bool
) -> list[Check]:
    """A resonance (Harminv) script's convergence rerun doubles its PML through the env."""
    if not calls(tree, "Harminv") or not calls(tree, "PML") or PML_SCALE_ENV in consts.env_names:
        return []
    return [
        finding(
            "pml_from_env",
            "fail" if need_env else "warn",
            f"the script runs Harminv but does not read {PML_SCALE_ENV}; the convergence "
            f'rerun of a resonance needs PML = float(os.environ.get("{PML_SCALE_ENV}", 1)) * '
            f"{design['pml_thickness']}",
        )
    ]
