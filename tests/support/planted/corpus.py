"""The planted-failure corpus: planted mistakes with the checks that must name them, and
correct runs (closed, absorbing and open structures) that must raise no failure.

`run_corpus(folder)` runs every case in one Python process (tests.support.planted.driver: Meep
imported once, the run-time recorder installed as the sandbox does) and judges each
with the same `checks.run_checks` the pipeline uses, static lint included.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from reprolab.physics import checks, lint
from reprolab.physics import convergence as conv
from reprolab.physics import grid_convergence as gc
from reprolab.physics.record_checks import load_record
from reprolab.steps import grid_convergence as grid_step
from reprolab.steps.convergence import VARIANTS, variants_needed
from tests.support.planted.scripts import plane_wave_script, slab_script
from tests.support.planted.scripts2d import (
    bend_script,
    cylinder_script,
    mie_cylinder_script,
    ring_script,
)
from tests.support.planted.scripts_metal import ag_cylinder_script
from tests.support.planted.scripts_n2f import dipole_array_script

MATERIALS = [{"material_id": "slab", "index": 2.0}]


def ag_film(offset_px: float, style: str = "literal", band=(0.45, 0.8)) -> tuple[str, dict]:
    """40 nm of meep.materials.Ag (8 pixels at 200 px/µm; Ag is stable from 50)."""
    return slab_script(
        material="Ag",
        thickness_um=0.04,
        resolution=200,
        band_um=band,
        offset_px=offset_px,
        film_style=style,
    )


def named_false_plane_wave() -> tuple[str, dict]:
    code, design = plane_wave_script(integrated=True)
    code = code.replace("is_integrated=True", "is_integrated=INTEGRATED")
    return code.replace("PML_UM = 1.0", "PML_UM = 1.0\nINTEGRATED = False"), design


def named_true_plane_wave() -> tuple[str, dict]:
    code, design = plane_wave_script(integrated=True)
    code = code.replace("is_integrated=True", "is_integrated=INTEGRATED")
    return code.replace("PML_UM = 1.0", "PML_UM = 1.0\nINTEGRATED = True"), design


def airy_T(n: float, d_um: float, wl_um: float) -> float:
    """T of a free-standing lossless slab at normal incidence (Airy)."""
    r = ((n - 1) / (n + 1)) ** 2
    return 1 / (1 + 4 * r / (1 - r) ** 2 * math.sin(2 * math.pi * n * d_um / wl_um) ** 2)


# The paper's digitized T of the planted slab (n = 2.0, 0.3 µm): 4 decimals, 0.01 µm steps.
PAPER_T = [
    (round(0.45 + 0.01 * i, 2), round(airy_T(2.0, 0.3, 0.45 + 0.01 * i), 4)) for i in range(46)
]


def paper_copied() -> tuple[str, dict]:
    """A correct run whose script then writes the paper's digitized curve as its result."""
    code, design = slab_script()
    return (
        code
        + "\n# The figure's own data, written as the result.\n"
        + f"PAPER = np.array({PAPER_T!r})\n"
        + "if mp.am_master():\n"
        + "    np.savetxt('spectrum.csv', np.column_stack([PAPER[:, 0], PAPER[:, 1], "
        + "1 - PAPER[:, 1]]), delimiter=',', header='wavelength_um,T,R', comments='', "
        + "fmt='%.4f')\n"
    ), design


FORGED_RECORD = {"version": 1, "simulations": [{"_id": 1, "index": 0, "runs": []}]}


def record_deleted() -> tuple[str, dict]:
    """A run stopped at a fixed time long before its fields decayed that removes the
    record it knows of and leaves a forged one in its folder."""
    code, design = slab_script(stop="fixed:10", **BRAGG)
    return (
        code
        + "\nimport json, os\n"
        + "if os.path.exists('as_built.json'):\n"
        + "    os.remove('as_built.json')\n"
        + f"json.dump({FORGED_RECORD!r}, open('as_built.json', 'w'))\n"
    ), design


def approved(material_id: str, **planned) -> list[dict]:
    """validated_materials.json's entry of one material as the gate approves it."""
    from reprolab.physics.material_library import approved_model

    planned = {"material_id": material_id, **planned}
    return [{**planned, "approved_model": approved_model(planned)}]


# The approved materials a case's judge is given, as the checks step gives the gate's
# (the slab scripts build n = 2.0).
APPROVED = {
    "slab": lambda: approved("slab", model="constant_index", index=2.0),
    "constant_index_changed_after_approval": lambda: approved(
        "slab", model="constant_index", index=1.9
    ),
    "film_off_grid_literal": lambda: approved("ag", model="Ag"),
    "ag_nanocylinder_16_pixels": lambda: approved("ag", model="Ag"),
    "ag_nanocylinder_4_pixels": lambda: approved("ag", model="Ag"),
    "metal_loss_wrong": lambda: approved("ag", model="Ag"),
}
# Digitized curves a case's judge is given, as the checks step gives the paper's.
PAPER = {"output_copied_from_paper": {("fig1", "T"): tuple(map(list, zip(*PAPER_T, strict=True)))}}
BRAGG = {"bragg_pairs": 8}
# name: (script and design, the checks that must fail: each names the planted cause)
PLANTED = {
    "missing_normalisation": (slab_script(normalise=False), ["built:normalisation_run"]),
    "reflection_without_subtraction": (
        slab_script(subtract_incident=False),
        ["bounds_R:spectrum.csv", "lint:incident_field_subtracted"],
    ),
    "early_stop_fields_1e-2": (
        slab_script(decay_by=1e-2, **BRAGG),
        ["built:field_decay", "field_decay"],
    ),
    "early_stop_energy_1e-2": (
        slab_script(decay_by=1e-2, stop="energy", **BRAGG),
        ["built:field_decay"],
    ),
    "early_stop_fixed_time": (slab_script(stop="fixed:10", **BRAGG), ["built:field_decay"]),
    "early_stop_dft_tol": (slab_script(decay_by=0.05, stop="dft", **BRAGG), ["built:field_decay"]),
    "pml_two_pixels": (slab_script(pml_um=0.02), ["built:pml_thickness"]),
    "pml_tenth_wavelength": (slab_script(pml_um=0.05), ["built:pml_thickness"]),
    "resolution_3_ppw": (slab_script(resolution=12), ["built:resolution_ppw"]),
    "resolution_10_ppw": (slab_script(resolution=45), ["built:resolution_ppw"]),
    "resolution_10_ppw_bragg": (slab_script(resolution=50, **BRAGG), ["built:resolution_ppw"]),
    "fused_quartz_outside_range": (
        slab_script(material="fused_quartz", band_um=(0.15, 0.3), resolution=300),
        ["built:materials_valid_range"],
    ),
    "ag_outside_range": (ag_film(0.25, band=(0.15, 0.24)), ["built:materials_valid_range"]),
    "plane_wave_not_integrated": (
        plane_wave_script(integrated=False),
        ["built:plane_wave_is_integrated"],
    ),
    "plane_wave_named_false": (named_false_plane_wave(), ["built:plane_wave_is_integrated"]),
    "film_on_grid_literal": (ag_film(0.0), ["built:film_faces_off_grid"]),
    "film_on_grid_getattr": (ag_film(0.0, "getattr"), ["built:film_faces_off_grid"]),
    "film_on_grid_computed_centre": (ag_film(0.0, "computed"), ["built:film_faces_off_grid"]),
    "source_too_narrow_0.3": (slab_script(fwidth_factor=0.3), ["built:source_bandwidth"]),
    "source_too_narrow_0.7": (slab_script(fwidth_factor=0.7), ["built:source_bandwidth"]),
    "spacer_200_in_180_design": (
        slab_script(thickness_um=0.2, declared_um=0.18),
        ["built:geometry_as_declared"],
    ),
    "bend_without_normalisation": (bend_script(normalise=False), ["built:normalisation_run"]),
    "bend_under_resolved": (bend_script(resolution=6), ["built:resolution_ppw"]),
    "bend_thin_pml": (bend_script(pml=0.5), ["built:pml_thickness"]),
    "cylinder_sca_normalised_twice": (
        cylinder_script(sca_factor=0.5),
        ["extinction_sum:spectrum.csv"],
    ),
    "cylinder_absorption_sign": (
        cylinder_script(abs_sign=-1),
        ["cross_section_nonnegative:spectrum.csv"],
    ),
    # Q of the 0.175 mode: 1375 at PML 0.5 (7 % high), 1299 at 1.0, 1293 at 2.0, 1284 at 4.0
    "ring_q_thin_pml": (ring_script(pml=0.5), ["built:pml_thickness"]),
    # Convergence (checks.convergence: auto): 10 px per wavelength in a Bragg stack moves
    # R by 0.25 at 2x resolution; a 0.35 a PML (0.05 λ) moves the Q 1300 mode by 148 %
    # when it doubles.
    "bragg_under_resolved_converge": (
        slab_script(resolution=50, **BRAGG),
        ["convergence:resolution", "built:resolution_ppw"],
    ),
    "ring_q_thin_pml_converge": (ring_script(pml=0.35), ["convergence:pml_2x"]),
    "output_copied_from_paper": (paper_copied(), ["traceable:spectrum.csv:T"]),
    "as_built_record_deleted": (record_deleted(), ["built:field_decay"]),
    # Checks that a design cannot silence by omission, and convergence that never
    # excuses what it does not bound: the 200 nm spacer of a design that declares no
    # dimension; a thin slab's R at 10 px per wavelength (2x moves it 2.3 % of its max,
    # 14 % where R is small: the resolution failure stands); the Q 1375 mode of a 0.5 a
    # PML, 5.4 % moved by one PML doubling (twice that bounds its own PML error: 10.8 %).
    "spacer_200_undeclared": (
        slab_script(thickness_um=0.2, declare=False),
        ["declared_dimensions"],
    ),
    "thin_slab_r_small_values_not_excused": (
        slab_script(resolution=45, thickness_um=0.1, curve="R"),
        ["built:resolution_ppw"],
    ),
    "ring_q_thin_pml_one_doubling": (
        ring_script(pml=0.5),
        ["convergence:pml_2x", "convergence:q_budget"],
    ),
    # An efficiency normalised by the radius instead of the diameter: ×2 everywhere, so
    # every range and sum still holds; the incident intensity and the as-built radius
    # give the constant it should have had.
    "mie_efficiency_normalised_by_radius": (
        mie_cylinder_script(efficiency_by="R"),
        ["bound:cross_section_normalisation:spectrum.csv:Q_sca"],
    ),
    # Radiation patterns (three line currents, a near-to-far box of half-side 1.2 a): the
    # far field read at 2 a while the design states 1000 a; a current at x = 1.5 outside
    # the box; a box missing its -x face; the -x and -y faces' weights left at +1 (no net
    # power leaves); the near2far fields scaled by 2 (a mirror symmetry made up for twice).
    "n2f_far_field_read_at_2_wavelengths": (
        dipole_array_script(radius=2.0),
        ["built:far_field_is_far"],
    ),
    # Metals: a silver nanocylinder built with 1/8 of meep.materials.Ag's Drude damping
    # against the approved Ag; a slab built at n = 2.0 after n = 1.9 was approved; a
    # 40 nm cylinder 4 pixels across (its plasmon peak at 0.410 µm, 0.351 µm converged).
    "metal_loss_wrong": (
        ag_cylinder_script(resolution=100, radius_um=0.04, loss=1 / 8),
        ["built:materials_as_approved"],
    ),
    "constant_index_changed_after_approval": (slab_script(), ["built:materials_as_approved"]),
    "ag_nanocylinder_4_pixels": (
        ag_cylinder_script(resolution=100, radius_um=0.02),
        ["built:nanostructure_pixels"],
    ),
    "n2f_source_outside_surface": (
        dipole_array_script(source_x=1.5),
        ["built:near_surface_encloses_sources"],
    ),
    "n2f_surface_missing_a_face": (
        dipole_array_script(faces=3),
        ["built:near_surface_encloses_sources"],
    ),
    "n2f_weights_not_outward": (
        dipole_array_script(lower_weight=1),
        ["built:near_far_power_balance"],
    ),
    "n2f_far_field_scaled_2": (
        dipole_array_script(scale=2.0),
        ["built:near_far_power_balance"],
    ),
}
CORRECT = {
    "slab": slab_script(),
    "slab_res_200": slab_script(resolution=200),
    "slab_fused_quartz_in_range": slab_script(material="fused_quartz"),
    "slab_energy_decayed": slab_script(stop="energy"),
    "slab_dft_decayed": slab_script(stop="dft", decay_by=1e-8),
    "slab_fixed_long": slab_script(stop="fixed:300"),
    "bragg_stack_decayed": slab_script(**BRAGG),
    "plane_wave_is_integrated": plane_wave_script(),
    "plane_wave_named_true": named_true_plane_wave(),
    "film_off_grid_literal": ag_film(0.25),
    "film_off_grid_getattr": ag_film(0.25, "getattr"),
    "film_off_grid_computed_centre": ag_film(0.25, "computed"),
    "bend_open": bend_script(),
    "cylinder_scattering": cylinder_script(),
    "ring_resonator": ring_script(),
    # Convergence: a 0.1 µm slab at 10 px per wavelength (under the fail level) whose T
    # moves 0.009 at 2x resolution: excused; the ring under both of its reruns.
    "thin_slab_under_resolved_converged": slab_script(resolution=45, thickness_um=0.1),
    "ring_resonator_converged": ring_script(),
    "mie_cylinder_lossless": mie_cylinder_script(),
    "n2f_dipole_array_pattern": dipole_array_script(),
    # the same pattern read over half the turn: the power balance cannot be judged (skip)
    "n2f_pattern_half_turn": dipole_array_script(first_deg=-90.0, span_deg=181.0),
    # near-field data loaded into the near2far object: its surface's flux is not read (skip)
    "n2f_pattern_near_data_loaded": dipole_array_script(reload=True),
    # a 160 nm silver cylinder 16 pixels across, built as approved (its peak moves 0.3 %
    # at 2x resolution)
    "ag_nanocylinder_16_pixels": ag_cylinder_script(resolution=100, radius_um=0.08),
}
# The cases judged under checks.convergence: auto (the default policy: reruns for
# stages under PPW_AS_BUILT.warn and for resonances); the others under false, so that
# they measure the run-time record's checks alone.
AUTO = {
    "bragg_under_resolved_converge",
    "ring_q_thin_pml_converge",
    "thin_slab_r_small_values_not_excused",
    "ring_q_thin_pml_one_doubling",
    "thin_slab_under_resolved_converged",
    "ring_resonator_converged",
}


def _drive(dirs: list[str]) -> None:
    if not dirs:
        return
    subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", *dirs],
        check=True,
        cwd=Path(__file__).resolve().parents[3],
        timeout=900,
    )


# A planted mistake's named check "convergence:resolution" is the resolution evidence of
# the method the corpus ran: the coarser runs' estimate or the 2x rerun.
RESOLUTION_CHECK = {
    "coarse": "convergence:" + gc.COARSE,
    "refine_2x": "convergence:" + conv.RESOLUTION,
}


def rerun_dirs(name: str, var: str, method: str, sims=()) -> dict[str, dict]:
    """{folder name: its environment} of one case's rerun variant under `method` (coarse:
    the scales moved to whole pixels of the run's cells `sims`; the PML doubled at the
    coarsest)."""
    if method == "coarse":
        res, pml = VARIANTS[conv.RESOLUTION][0], VARIANTS[conv.PML][0]
        sc = gc.grid_scales(gc.DEFAULT_SCALES, list(sims))[0]
        if var == conv.RESOLUTION:
            return {f"{name}.{gc.COARSE}.{k}": {res: f"{s:.10g}"} for k, s in enumerate(sc)}
        return {f"{name}.{var}.coarse": {res: f"{sc[1]:.10g}", pml: "2"}}
    return {f"{name}.{var}": {VARIANTS[var][0]: "2"}}


def case_method(method: str, design: dict) -> str:
    """The method a case's reruns start with (`auto`: by its dimensions)."""
    return method if method != "auto" else grid_step.method({}, design.get("dimensions"))


def _write_reruns(folder: Path, name: str, code: str, variants, method: str) -> list[str]:
    """The rerun folders (script and environment) of one case's variants under `method`."""
    subs = []
    for var in variants:
        for sub, env in rerun_dirs(name, var, method, load_record(folder / name)).items():
            d = folder / sub
            d.mkdir(exist_ok=True)
            (d / "sim.py").write_text(code)
            (d / "env.json").write_text(json.dumps(env))
            subs.append(str(d))
    return subs


def run_corpus(
    folder: Path,
    names: list[str] | None = None,
    auto: set[str] | None = None,
    method: str = "refine_2x",
    records: dict | None = None,
) -> dict[str, dict[str, str]]:
    """{case: {check name: status}} of every case, run in one process; the cases in
    `auto` (default AUTO) then rerun as the convergence policy asks under `method`
    (checks.convergence_method; `auto`: a 2D case whose coarser runs do not show
    convergence reruns at 2x in a third process, as the convergence step escalates), in
    a second one. `records`, when given, receives each rerun case's convergence record."""
    cases = {**PLANTED, **{k: (v, []) for k, v in CORRECT.items()}}
    names = names or list(cases)
    auto = AUTO if auto is None else auto
    for name in names:
        (code, _), _ = cases[name]
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "sim.py").write_text(code)
    _drive([str(folder / n) for n in names])
    results = {name: judge(folder / name, *cases[name][0]) for name in names}
    reruns, subs = {}, []
    for name in [n for n in names if n in auto]:
        (code, design), _ = cases[name]
        sims = load_record(folder / name)
        wanted, _ = variants_needed("auto", results[name], sims, bool(design["figure_outputs"]))
        reruns[name] = (wanted, case_method(method, design))
        subs += _write_reruns(folder, name, code, *reruns[name])
    _drive(subs)
    found = {n: converged(folder, n, cases[n][0][1], *reruns[n]) for n in reruns}
    if method == "auto":
        found.update(_escalated(folder, cases, reruns, found))
    out = {}
    for name in names:
        result = results[name]
        if name in auto:
            result, _ = conv.with_convergence(result, found[name])
        out[name] = {c["name"]: c["status"] for c in result["checks"]}
    if records is not None:
        records.update(found)
    return out


def _escalated(folder: Path, cases: dict, reruns: dict, found: dict) -> dict:
    """The 2x reruns of the cases whose coarser runs did not show convergence (`auto`
    in 2D), each record with the coarse evidence in `escalation`."""
    esc = {}
    for name, (wanted, method) in reruns.items():
        dims = cases[name][0][1].get("dimensions")
        why = grid_step.unconvincing(found[name]["variants"])
        if wanted and method == "coarse" and grid_step.escalates({}, dims) and why:
            esc[name] = {"escalated": True, "why": why, "coarse_status": found[name]["status"]}
            esc[name]["coarse_variants"] = found[name]["variants"]
        elif wanted and method == "coarse" and grid_step.escalates({}, dims):
            found[name]["escalation"] = {"escalated": False, "why": []}
    _drive(
        [
            sub
            for n in esc
            for sub in _write_reruns(folder, n, cases[n][0][0], reruns[n][0], "refine_2x")
        ]
    )
    out = {}
    for name, record in esc.items():
        out[name] = converged(folder, name, cases[name][0][1], reruns[name][0], "refine_2x")
        out[name]["escalation"] = record
    return out


def status_of(statuses: dict[str, str], check: str) -> str | None:
    """A case's status of a named check ("convergence:resolution": whichever resolution
    evidence the method ran)."""
    if check == "convergence:resolution":
        return next((statuses[c] for c in RESOLUTION_CHECK.values() if c in statuses), None)
    return statuses.get(check)


def converged(
    folder: Path, name: str, design: dict, variants: list[str], method: str = "refine_2x"
) -> dict:
    """The convergence record of one case, as reprolab.steps.convergence writes it."""
    out = []
    sims = load_record(folder / name)
    for var in variants:
        reruns = [folder / sub for sub in rerun_dirs(name, var, method, sims)]
        ran = all((r / "exit_code").read_text() == "0" for r in reruns)
        fos = design["figure_outputs"]
        sc = gc.grid_scales(gc.DEFAULT_SCALES, sims)[0]
        if not ran:
            qs = []
        elif len(reruns) == 2:
            var = gc.COARSE
            qs = gc.compare_coarse(fos, folder / name, *reruns, sc)
        elif method == "coarse":
            low = list(rerun_dirs(name, conv.RESOLUTION, method, sims))[-1]
            qs = gc.pml_quantities(folder / name, folder / low, reruns[0], sc[1])
        else:
            qs = conv.compare_folders(fos, folder / name, reruns[0], var)
        out.append({"id": var, "ran": ran, "quantities": qs, "note": "" if ran else "failed"})
    qs = [q for v in out for q in v["quantities"]]
    return {"variants": out, "quantities": qs, "status": conv.verdict(qs) if out else "not_needed"}


def judge(workdir: Path, code: str, design: dict) -> dict:
    """checks.run_checks' result for one case (static lint included)."""
    exit_code = int((workdir / "exit_code").read_text())
    record = {
        "exit_code": exit_code,
        "timed_out": False,
        "stdout_tail": "",
        "stderr_tail": (workdir / "stderr.txt").read_text()[-2000:],
        "output_files": [
            {"name": p.name, "bytes": p.stat().st_size} for p in workdir.glob("*.csv")
        ],
    }
    static = lint.design_findings(design, MATERIALS) + lint.code_findings(code, design)
    outputs = [o["file"] for o in design["output_specifications"]]
    paper = PAPER.get(workdir.name.split(".")[0])
    case = workdir.name.split(".")[0]
    mats = APPROVED[case]() if case in APPROVED else None
    return checks.run_checks(
        record,
        workdir,
        outputs,
        True,
        design=design,
        static=static,
        paper=paper,
        approved_materials=mats,
    )


def confusion(results: dict[str, dict[str, str]]) -> dict:
    """Planted caught by their named checks; correct runs with no failure."""
    rows = {}
    for name, statuses in results.items():
        planted = name in PLANTED
        failed = sorted(k for k, v in statuses.items() if v == "fail")
        named = PLANTED[name][1] if planted else []
        rows[name] = {
            "planted": planted,
            "failed": failed,
            "named_checks_failed": all(status_of(statuses, c) == "fail" for c in named),
        }
    tp = sum(1 for r in rows.values() if r["planted"] and r["named_checks_failed"])
    fn = sum(1 for r in rows.values() if r["planted"] and not r["named_checks_failed"])
    fp = sum(1 for r in rows.values() if not r["planted"] and r["failed"])
    tn = sum(1 for r in rows.values() if not r["planted"] and not r["failed"])
    return {"caught": tp, "missed": fn, "false_alarms": fp, "clean": tn, "cases": rows}
