"""The static lint applied to a stage's design and code: the band the stage
reports, whether the resolution must follow the environment, the findings."""

from __future__ import annotations

from pathlib import Path

from agents.common import StageType
from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import load_plan
from reprolab.errors import InputFileError
from reprolab.physics import checks as checks_mod
from reprolab.physics import lint
from reprolab.settings import PaperRun


def reported_band(design: SimulationDesign, run: PaperRun) -> tuple[float, float] | None:
    """(f_min, f_max) in c/a that the stage reports: the x range of the paper's curves it
    reproduces, when the x column is a wavelength or frequency (else None); the paper's
    x is read in the column's unit (a figure in nm, a column `wavelength_um`)."""
    freqs = []
    for fo in design.figure_outputs:
        try:
            xp, _ = run.paper.curve_data(fo.figure_id, fo.curve_id, fo.x_column)
        except Exception:  # noqa: BLE001 - a bad figure reference is design_problems' finding
            continue
        freqs += checks_mod.reported_frequencies(fo.x_column, list(xp), design.unit_length_um) or []
    return (min(freqs), max(freqs)) if freqs else None


def resolution_env_required(run: PaperRun) -> bool:
    """Convergence reruns (checks.convergence not false) and quick-check mode scale the
    resolution (and a resonance's PML) through the environment."""
    cfg = run.config
    on = cfg.get("checks", {}).get("convergence", "auto") is not False
    return bool(on or cfg.get("debug", {}).get("enabled"))


def simulates_structure(design: SimulationDesign, run: PaperRun) -> bool:
    """False for a material validation stage of the plan (it evaluates materials and
    builds no structure whose dimensions could be declared); True otherwise."""
    try:
        plan = load_plan(Path(run.out_dir) / "plan.json")
    except (InputFileError, OSError):
        return True
    stage = next((s for s in plan.stages if s.stage_id == design.stage_id), None)
    return stage is None or stage.stage_type != StageType.MATERIAL_VALIDATION


def static_findings(design: SimulationDesign, mats: list, code: str | None, run: PaperRun):
    """The lint's findings on a design (and its code), numbers and thresholds included."""
    d = design.model_dump()
    structure = simulates_structure(design, run)
    findings = lint.design_findings(d, mats, reported_band(design, run), structure)
    if code is not None:
        findings += lint.code_findings(code, d, need_resolution_env=resolution_env_required(run))
    return findings
