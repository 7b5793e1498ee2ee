"""Static lint of a simulation design and its generated Meep code, before anything runs.

Findings are `Check`s (pass / warn / fail with the number and threshold). The `fail`
ones become problem strings that go back to design or code regeneration as feedback
(`problems()`); all of them are recorded in the stage's checks.json. Thresholds come
from `reprolab.physics.thresholds` (docs/checks.md, measured table rows 5-9 and 11).

`design_findings` judges a design: resolution in pixels per wavelength, PML thickness.

`code_findings` reads the generated script with `ast`, one function per concern, each
returning its `Check`s (named `lint:<name>`): the normalisation run and incident-field
subtraction (row 6), the stop criterion (row 5), plane-wave sources through PML (row 11),
resolution and PML as the design has them (rows 7, 9), thin dispersive films on the grid
(row 8, `film_findings`) and the resolution scale (in a Harminv script also the PML
scale) read from the environment. `Consts` resolves module-level numeric constants
(`RESOLUTION = 2 * 400`, `float(os.environ.get("X", 1)) * 800` → its default), so the
lint judges what the script will do without running it; `calls`, `kwarg` and `dotted`
find calls and their arguments; `run_invocations` counts simulation runs.
"""

from __future__ import annotations

import ast
import math
import operator
from pathlib import Path

from reprolab.errors import InputFileError
from reprolab.physics import meanings
from reprolab.physics import thresholds as th
from reprolab.physics.boundary_checks import pml_thicknesses
from reprolab.physics.checks import Check, read_numeric_csv

# The environment variable a generated script multiplies its resolution by: 2 for the
# convergence rerun, the debug factor in quick-check mode. Scripts must read it.
RESOLUTION_SCALE_ENV = "REPROLAB_RESOLUTION_SCALE"
# The one its PML thickness is multiplied by: 2 in a resonance stage's convergence rerun
# (a thin PML's reflection biases Harminv's Q). Scripts that run Harminv must read it.
PML_SCALE_ENV = "REPROLAB_PML_SCALE"


def _status_low(value: float, lim: th.CheckLimit) -> str:
    """For metrics where lower is worse (pixels per wavelength)."""
    return "fail" if value < lim.fail else "warn" if value < lim.warn else "pass"


def material_max_index(material: dict) -> float | None:
    """Largest real index of a validated material: its constant index, or the max of the
    `n` column of its stage-0 data file."""
    if material.get("index"):
        return float(material["index"])
    data = material.get("data")
    if data and Path(data).is_file():
        try:
            cols = read_numeric_csv(Path(data))
        except (OSError, IndexError, UnicodeDecodeError, InputFileError):
            return None
        if cols.get("n"):
            return max(cols["n"])
    return None


def source_band(design: dict) -> tuple[float, float]:
    """(f_min, f_max) of the source in c/a; f_min is floored at a tenth of fcen."""
    fcen, fwidth = design["source_fcen"], design["source_fwidth"]
    return max(fcen - fwidth / 2, fcen / 10), fcen + fwidth / 2


def design_findings(
    design: dict,
    materials: list[dict],
    band: tuple[float, float] | None = None,
    structure: bool = True,
) -> list[Check]:
    """Resolution in pixels per wavelength and PML thickness of a design, and its
    declared dimensions when it simulates a `structure` (a material validation does not).

    `band` is the reported frequency band (f_min, f_max) in c/a when known (the paper
    figures' x range); otherwise the source band is used, which is conservative.
    """
    if design.get("runs_simulation") is False:
        # A stage-0 material evaluation: no grid or PML to judge (the run's record must
        # show no simulation: built:no_simulation).
        return []
    # a structure is made of something other than the background: sources in vacuum
    # alone (an antenna array's currents) have no dimension to declare
    built_of = [m for m in design.get("materials") or [] if str(m).lower() not in EMPTY_MEDIA]
    has_structure = structure and built_of
    findings = [declared_dimensions_finding(design)] if has_structure else []
    f_lo, f_hi = band if band else source_band(design)
    lam_min, lam_max = 1 / f_hi, 1 / f_lo  # in units of a
    res = design["resolution"]
    indices = {m["material_id"]: material_max_index(m) for m in materials}
    used = [indices.get(mid) for mid in design.get("materials", [])]
    known = [n for n in used if n]
    n_max = max(known + [1.0])
    ppw = res * lam_min / n_max
    unknown = [mid for mid, n in zip(design.get("materials", []), used, strict=True) if not n]
    findings.append(
        Check(
            "resolution_ppw",
            _status_low(ppw, th.PPW),
            f"resolution {res}/a × λ_min {lam_min:.4g} a / n_max {n_max:.4g} = {ppw:.3g} "
            "pixels per wavelength in the highest-index material"
            + (f" (index unknown for {unknown})" if unknown else ""),
            round(ppw, 3),
            f"fail < {th.PPW.fail:g}, warn < {th.PPW.warn:g}",
        )
    )
    pmls = pml_thicknesses(design)
    if not pmls:  # a Bloch or metallic cell: no PML to judge
        return findings
    pml = min(pmls)
    pml_px = pml * res
    if pml_px < th.PML_MIN_PIXELS:
        status = "fail"
    elif pml < th.PML_MIN_WAVELENGTHS * lam_max:
        status = "warn"
    else:
        status = "pass"
    findings.append(
        Check(
            "pml_thickness",
            status,
            f"PML {pml:g} a = {pml_px:.3g} pixels; longest wavelength {lam_max:.4g} a",
            round(pml_px, 3),
            f"fail < {th.PML_MIN_PIXELS:g} pixels, warn < {th.PML_MIN_WAVELENGTHS:g} λ_max",
        )
    )
    return findings


EMPTY_MEDIA = frozenset({"vacuum", "air", "free space", "none"})


def declared_dimensions_finding(design: dict) -> Check:
    """A simulated structure (a design that names materials) must declare its
    dimensions: the run-time record checks each against what Meep built
    (`built:geometry_as_declared`), so a design that declares none would leave a wrong
    thickness or radius unseen."""
    declared = design.get("declared_dimensions") or []
    if declared:
        names = ", ".join(f"{d['name']} {d['value']:g}" for d in declared[:6])
        return Check(
            "declared_dimensions",
            "pass",
            f"{len(declared)} declared (units of a): {names}",
            len(declared),
        )
    return Check(
        "declared_dimensions",
        "fail",
        "the design names materials but declares no dimension: list every dimension the "
        "stage's structure has (thickness, width, radius, period; in units of a) in "
        "`declared_dimensions`, so that the run-time record can check what Meep built",
        0,
        "fail when none is declared",
    )


def problems(findings: list[Check]) -> list[str]:
    """Failed findings as feedback lines for regeneration."""
    return [f"{f.name}: {f.detail}" for f in findings if f.status == "fail"]


# Reading the script: constants, calls and their arguments.

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}


def finding(name: str, status: str, detail: str, value=None, threshold: str = "") -> Check:
    """A code-lint `Check`, named `lint:<name>`."""
    return Check(f"lint:{name}", status, detail, value, threshold)


def dotted(node: ast.AST) -> str:
    """`a.b.c` of a name or attribute chain; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


class Consts:
    """Module-level numeric constants of a script, evaluated without running it.

    `env_names` collects the environment variables read through `os.environ.get` /
    `os.getenv`, by the module-level assignments and by every later `eval`.
    """

    def __init__(self, tree: ast.Module):
        self.values: dict[str, float] = {}
        self.calls: dict[str, ast.Call] = {}
        self.env_names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if isinstance(value, ast.Tuple) and len(targets) == 1:
                tgt = targets[0]
                if isinstance(tgt, ast.Tuple) and len(tgt.elts) == len(value.elts):
                    for t, v in zip(tgt.elts, value.elts, strict=True):
                        self._assign(t, v)
                continue
            for t in targets:
                self._assign(t, value)

        # Names bound by `from meep.materials import Ag` (dispersive media).
        self.meep_materials: set[str] = self.library_media(tree)

    @staticmethod
    def library_media(tree: ast.Module) -> set[str]:
        """Names bound by `from meep.materials import Ag` (dispersive media)."""
        return {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "meep.materials"
            for alias in node.names
        }

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            self.calls[target.id] = value
        if isinstance(target, ast.Name):
            v = self.eval(value)
            if v is not None:
                self.values[target.id] = v

    def eval(self, node: ast.AST | None) -> float | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return float(node.value)
            except ValueError:
                return None
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.eval(node.operand)
            return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = self.eval(node.left), self.eval(node.right)
            if left is None or right is None:
                return None
            try:
                return float(_BINOPS[type(node.op)](left, right))
            except (ZeroDivisionError, OverflowError, TypeError):  # TypeError: complex result
                return None
        if isinstance(node, ast.Call):
            fn = dotted(node.func)
            if fn in {"float", "int", "round", "abs"} and node.args:
                return self.eval(node.args[0])
            if fn in {"os.environ.get", "os.getenv", "environ.get", "getenv"}:
                if node.args and isinstance(node.args[0], ast.Constant):
                    self.env_names.add(str(node.args[0].value))
                return self.eval(node.args[1]) if len(node.args) > 1 else None
        return None


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    """The value of keyword argument `name` of a call, or None."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def calls(tree: ast.AST, *names: str) -> list[ast.Call]:
    """Calls whose function is `name` or `<anything>.name`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            short = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if short in names:
                out.append(node)
    return out


def run_invocations(tree: ast.Module) -> int:
    """How many simulation runs the script performs, counting calls of helper functions
    that contain `.run(` and runs inside loops twice."""
    runners = {
        f.name
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(c.func, ast.Attribute) and c.func.attr == "run" for c in calls(f, "run"))
    }
    count = 0
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    in_loop = {id(c) for loop in loops for c in ast.walk(loop) if isinstance(c, ast.Call)}
    inside_runner = {
        id(c)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and f.name in runners
        for c in ast.walk(f)
        if isinstance(c, ast.Call)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside_runner:
            continue
        fn = node.func
        is_run = isinstance(fn, ast.Attribute) and fn.attr == "run"
        is_runner = isinstance(fn, ast.Name) and fn.id in runners
        if is_run or is_runner:
            count += 2 if id(node) in in_loop else 1
    return count


# The code lint, one function per concern (see the module docstring).


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


def _reports_reflection(design: dict, spec: dict) -> bool:
    """A reflectance column by the design's meanings (without them: `R` or `refl...`)."""
    file, cols = spec.get("file", ""), spec.get("columns", [])
    if meanings.declared(design, file):
        return bool(meanings.with_meaning(meanings.of_file(design, file, cols), "reflectance"))
    return "R" in cols or any(c.lower().startswith("refl") for c in cols)


def _normalisation_findings(tree: ast.Module, design: dict) -> list[Check]:
    """Row 6: flux spectra need an empty-cell normalisation run, and a reported
    reflection the incident field subtracted."""
    reflection = any(
        _reports_reflection(design, o) for o in design.get("output_specifications", [])
    )
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
    ext = vector3(size, consts)
    sims = calls(tree, "Simulation")
    cell_node = kwarg(sims[0], "cell_size") if sims else None
    if isinstance(cell_node, ast.Name):
        cell_node = consts.calls.get(cell_node.id)
    cell = vector3(cell_node, consts) if cell_node is not None else None
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
        wanted = pml_thicknesses(design)
        if not any(math.isclose(t, w, rel_tol=1e-6) for w in wanted):
            said = " or ".join(f"{w:g}" for w in wanted) or "no PML"
            findings.append(
                finding(
                    "pml_matches_design",
                    "fail",
                    f"code PML {t:g} differs from the design's {said} "
                    f"(in units of a = {design.get('unit_length_um', 1.0):g} µm)",
                    t,
                    f"= {said}",
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
            f"{(pml_thicknesses(design) or ['<its thickness>'])[0]}",
        )
    ]


# Thin dispersive films on the grid (row 8).

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


def vector3(node: ast.AST | None, consts: Consts) -> list[float | None] | None:
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
            vector3(kwarg(call, "size"), consts),
            vector3(kwarg(call, "center"), consts),
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
