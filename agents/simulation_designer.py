"""SimulationDesignerAgent: designs one stage's simulation (no code)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from agents.common import AgentModel, Assumption, Question, StageId
from agents.emitter_design import LdosDesign, NearToFarDesign
from reprolab.physics.meanings import COLUMN_MEANINGS

AGENT = "simulation_designer"
# What only a time-stepping simulation has; a stage-0 material evaluation gives none.
FDTD_PARAMETERS = ("resolution", "pml_thickness", "source_fcen", "source_fwidth")
# What a design that declares its `boundaries` may leave out (a Bloch cell has no PML).
BOUNDARY_PARAMETERS = ("pml_thickness",)
AXES = {"cartesian": ("x", "y", "z"), "cylindrical": ("r", "z")}


class OutputSpec(AgentModel):
    file: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """File name written in the stage's run directory (no directories)."""
    columns: list[str] = []
    """CSV column names; spectra use `T`, `R` (and `A`): transmittance, reflectance, absorbance;
    scattering uses `sigma_sca`, `sigma_abs`, `sigma_ext` (or `Q_` efficiencies), which the
    checks hold to non-negativity and ext = sca + abs."""
    description: str
    column_meanings: dict[str, Literal[COLUMN_MEANINGS]] = {}
    """What each column is (column -> meaning): the run-time checks hold a column to the
    range its meaning allows (transmittance in [0, 1], cross sections >= 0), never by its
    name. Without it the names above are read as documented."""

    @model_validator(mode="after")
    def _meanings_of_columns(self) -> OutputSpec:
        unknown = sorted(set(self.column_meanings) - set(self.columns))
        if unknown:
            raise ValueError(
                f"column_meanings of {self.file}: {unknown} not among its columns {self.columns}"
            )
        return self


class FigureOutput(AgentModel):
    figure_id: str
    """The paper's figure this curve reproduces."""
    curve_id: str
    """The curve within that figure."""
    file: str
    """Output CSV holding the reproduced curve."""
    x_column: str
    """Column matching the figure's x axis (same unit as the paper)."""
    y_column: str
    """Column matching the curve's y values."""
    dataset: str | None = None
    """Only for a field-map figure: `file` is HDF5 (h5py), `dataset` its 2D map with
    rows along `y_column` and columns along `x_column`, which then name the
    coordinate datasets (`z_um`, `wavelength_um`: units in their names)."""


class PerformanceEstimate(AgentModel):
    runtime_seconds: Annotated[float, Field(gt=0)]
    memory_mb: Annotated[float, Field(gt=0)]
    mpi_ranks: Annotated[int, Field(ge=1, le=4096)] = 1


class Sweep(AgentModel):
    """A parameter sweep: one simulation per value, run as one job-array task each."""

    parameter: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)
    """Name of the swept parameter (a Python identifier, e.g. `num_pairs`)."""
    values: list[int | float | str] = Field(min_length=2, max_length=1000)
    """The values, in order. The script reads its point from the environment:
    REPROLAB_SWEEP_VALUE (the value as JSON), REPROLAB_SWEEP_INDEX (0-based) and
    REPROLAB_SWEEP_PARAMETER. Each point writes the CSV outputs with the same
    columns (one row per point is typical); ReproLab concatenates them in point
    order into the stage's outputs."""


class DeclaredDimension(AgentModel):
    """A dimension of the structure, compared with the geometry Meep built."""

    name: str
    """What it is, e.g. `spacer thickness` or `cylinder radius`."""
    value: Annotated[float, Field(gt=0)]
    """In units of a (a block's size along an axis, a cylinder's radius or height)."""


class Boundary(AgentModel):
    """The boundary condition of one axis of the cell (both sides; along r: its outer side)."""

    axis: Literal["x", "y", "z", "r"]
    """`x`, `y`, `z` (Cartesian) or `r`, `z` (cylindrical)."""
    kind: Literal["pml", "bloch", "metallic", "none"]
    """`pml` (absorbing), `bloch` (periodic with the run's k_point), `metallic` (Meep's
    default wall, no k_point), `none` (the cell has no extent along it)."""
    thickness: Annotated[float, Field(gt=0)] | None = None
    """PML thickness in units of a (pml only; default: `pml_thickness`)."""

    @model_validator(mode="after")
    def _thickness_only_for_pml(self) -> Boundary:
        if self.thickness is not None and self.kind != "pml":
            raise ValueError(
                f"boundary {self.axis}: thickness {self.thickness:g} given for kind "
                f"'{self.kind}'; only a pml boundary has a thickness"
            )
        return self


class Symmetry(AgentModel):
    kind: Literal["mirror", "rotate2", "rotate4"]
    direction: Literal["x", "y", "z"]
    phase: float = 1.0
    """+1 (even) or -1 (odd) for a mirror."""


class SourceSpec(AgentModel):
    kind: Literal["point_dipole", "line", "plane", "eigenmode", "oblique_plane_wave"]
    component: str | None = None
    """Field component, e.g. `Ez` (TM in 2D) or `Hz` (TE)."""
    band: Annotated[int, Field(ge=1)] | None = None
    """Eigenmode band (eigenmode sources only)."""
    parity: str | None = None
    """Eigenmode parity, e.g. `EVEN_Y` (eigenmode sources only)."""
    fcen: Annotated[float, Field(gt=0)]
    """Centre frequency in c/a."""
    fwidth: Annotated[float, Field(gt=0)]
    """Gaussian width in c/a."""
    position: list[float] | None = None
    """A point dipole's position [x, y, z] in a (an emitter: LDOS, Purcell, patterns)."""


class SimulationDesign(AgentModel):
    stage_id: StageId
    summary: str
    """What is simulated, in two or three sentences."""
    dimensions: Literal[1, 2, 3]
    unit_length_um: Annotated[float, Field(gt=0)]
    """Meep's length unit a, in µm."""
    runs_simulation: bool = True
    """False only for a MATERIAL_VALIDATION stage (stage 0) that evaluates material models
    (e.g. `Medium.epsilon(f)`) without time stepping: it then gives no resolution, PML or
    source, and the run must build no `mp.Simulation` (checked on the run's record)."""
    resolution: Annotated[int, Field(ge=1)] | None = None
    """Pixels per unit length (required when the stage runs a simulation)."""
    pml_thickness: Annotated[float, Field(gt=0)] | None = None
    """PML thickness in units of a. Without `boundaries` it means a PML on every axis
    (required then); with them, the thickness of each pml boundary that gives none."""
    coordinates: Literal["cartesian", "cylindrical"] = "cartesian"
    """`cylindrical`: Meep's `dimensions=mp.CYLINDRICAL`, axes r and z, one azimuthal
    order m per run."""
    m: list[int] = []
    """The azimuthal orders run (required when cylindrical, none otherwise)."""
    boundaries: list[Boundary] = []
    """The boundary of each axis; empty: a PML of `pml_thickness` on every axis."""
    k_points: list[list[float]] = []
    """Meep k_point values ([kx, ky, kz], units of 2π/a) run with Bloch boundaries."""
    symmetries: list[Symmetry] = []
    sources: list[SourceSpec] = []
    """The sources, when more than the one Gaussian of source_fcen/source_fwidth."""
    ldos: LdosDesign | None = None
    """An LDOS or Purcell-factor result: its band and normalisation."""
    near_to_far: NearToFarDesign | None = None
    """A far-field result (a radiation pattern): near surface, radius, angles."""
    mode_results: list[str] = []
    """Table ids and band-diagram figure ids among the stage's targets that this stage
    measures with Harminv: compared from the run-time record, no CSV needed."""
    source_fcen: Annotated[float, Field(gt=0)] | None = None
    """Source centre frequency in units of c/a (required when the stage runs a simulation)."""
    source_fwidth: Annotated[float, Field(gt=0)] | None = None
    """Gaussian source width in units of c/a (required when the stage runs a simulation)."""
    materials: list[str] = []
    """material_ids (from the validated materials) the stage uses."""
    geometry: str
    """The structure, with every dimension."""
    monitors: list[str] = []
    """Flux or field monitors and what each measures."""
    output_specifications: list[OutputSpec] = Field(min_length=1)
    figure_outputs: list[FigureOutput] = []
    """Which output column reproduces which paper curve."""
    performance_estimate: PerformanceEstimate
    """Runtime, memory and MPI ranks of one run (of one sweep point for a sweep)."""
    sweep: Sweep | None = None
    """Set for PARAMETER_SWEEP stages that run one simulation per value; None otherwise."""
    new_assumptions: list[Assumption] = []
    symmetric_outputs: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = []
    """Pairs of output columns the structure's mirror symmetry makes equal, e.g.
    `[["T_left", "T_right"]]`; the run-time check compares each pair."""
    conservation: Literal["closed", "absorbing", "open_radiating"] | None = None
    """Which energy balance holds: `closed` (every channel monitored, lossless: R + T = 1),
    `absorbing` (lossy materials: A = 1 - R - T >= 0), `open_radiating` (light leaves
    through unmonitored channels, e.g. a bend or a scatterer: 1 - R - T is radiation)."""
    declared_dimensions: list[DeclaredDimension] = []
    """The structure's key dimensions; each must be the size of some object as built."""
    questions: list[Question] = []
    """What you need the user to decide for this stage (a value the paper leaves open, an
    inferred parameter to confirm, a trade-off of accuracy against time); empty when the
    plan and paper settle everything. Answers come back as `user_answers`."""

    @model_validator(mode="after")
    def _fdtd_parameters(self) -> SimulationDesign:
        """A simulation needs all four FDTD parameters (declared boundaries replace
        pml_thickness); a material-only evaluation none."""
        given = [f for f in FDTD_PARAMETERS if getattr(self, f) is not None]
        needed = [f for f in FDTD_PARAMETERS if not (self.boundaries and f in BOUNDARY_PARAMETERS)]
        if self.runs_simulation and not set(needed) <= set(given):
            missing = [f for f in needed if f not in given]
            raise ValueError(
                f"runs_simulation is true but {', '.join(missing)} missing: a simulation "
                "needs resolution, pml_thickness, source_fcen and source_fwidth (a stage-0 "
                "material evaluation without time stepping sets runs_simulation: false)"
            )
        if not self.runs_simulation and given:
            raise ValueError(
                f"runs_simulation is false but {', '.join(given)} given: a design that runs "
                "no simulation has no resolution, PML or source (remove them, or set "
                "runs_simulation: true)"
            )
        if not self.runs_simulation and (self.boundaries or self.k_points or self.m):
            raise ValueError(
                "runs_simulation is false but boundaries, k_points or m given: a design "
                "that runs no simulation has none"
            )
        return self

    @model_validator(mode="after")
    def _coordinates_and_boundaries(self) -> SimulationDesign:
        """Cylindrical runs name m; boundaries use the coordinates' axes, once each; a
        PML has a thickness; Bloch boundaries name the k points run."""
        problems = []
        if self.coordinates == "cylindrical" and not self.m:
            problems.append("coordinates: cylindrical needs m (the azimuthal orders run)")
        if self.coordinates == "cartesian" and self.m:
            problems.append(f"m {self.m} given for cartesian coordinates (cylindrical only)")
        axes = [b.axis for b in self.boundaries]
        valid = AXES[self.coordinates]
        for axis in sorted(set(axes)):
            if axis not in valid:
                problems.append(
                    f"boundaries: axis '{axis}' is not an axis of {self.coordinates} "
                    f"coordinates (valid: {list(valid)})"
                )
            if axes.count(axis) > 1:
                problems.append(f"boundaries: axis '{axis}' given {axes.count(axis)} times")
        for b in self.boundaries:
            if b.kind == "pml" and b.thickness is None and self.pml_thickness is None:
                problems.append(
                    f"boundaries: pml on {b.axis} has no thickness (give it, or pml_thickness)"
                )
        bloch = [b.axis for b in self.boundaries if b.kind == "bloch"]
        if bloch and not self.k_points:
            problems.append(f"boundaries: bloch on {bloch} needs k_points (the k points run)")
        if self.k_points and not bloch:
            problems.append(
                "k_points given but no bloch boundary: declare `boundaries` with kind "
                "bloch on the periodic axes"
            )
        problems += [
            f"k_points[{i}] = {k}: give [kx, ky, kz] (3 numbers)"
            for i, k in enumerate(self.k_points)
            if len(k) != 3
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


def context(
    plan_stage: dict,
    assumptions: list,
    materials: list,
    figures: list[dict],
    reviewer_feedback: str | None,
    *,
    extracted_parameters: list[dict] = (),
    paper_domain: str = "",
) -> dict:
    """The stage, its numbers and materials; the target figures' metadata (ids,
    axes, curves: needed to map outputs to curves), never their images or the
    paper's text."""
    ctx = {
        "current_stage": plan_stage,
        "assumptions": assumptions,
        "extracted_parameters": list(extracted_parameters),
        "paper_domain": paper_domain,
        "materials": materials,
        "target_figures": figures,
    }
    if reviewer_feedback:
        ctx["reviewer_feedback"] = reviewer_feedback
    return ctx
