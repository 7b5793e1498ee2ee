"""What a design states about emitters: LDOS spectra and their Purcell normalisation,
and near-to-far field transformations (parts of `simulation_designer`'s output)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from agents.common import AgentModel


class LdosDesign(AgentModel):
    fmin: Annotated[float, Field(gt=0)]
    """Lowest LDOS frequency in c/a (the `dft_ldos` band)."""
    fmax: Annotated[float, Field(gt=0)]
    """Highest LDOS frequency in c/a."""
    normalisation: Literal["homogeneous_run", "analytic_bulk", "none"]
    """How a Purcell factor is made: the same run (source, resolution, cell, PML) in the
    homogeneous reference medium, or the analytic bulk LDOS of `reference_index`;
    `none`: the LDOS itself is the result."""
    reference_index: Annotated[float, Field(ge=1)] = 1.0
    """The refractive index of the homogeneous reference medium."""

    @model_validator(mode="after")
    def _ordered(self):
        if self.fmin > self.fmax:
            raise ValueError(f"ldos fmin {self.fmin:g} is above fmax {self.fmax:g}")
        return self


class NearToFarDesign(AgentModel):
    surface: list[Annotated[list[float], Field(min_length=6, max_length=6)]]
    """The near-field surface's regions, each [cx, cy, cz, sx, sy, sz] in a: a closed
    box (two faces per axis) around every source, or one plane."""
    far_field_radius: Annotated[float, Field(gt=0)]
    """Where the far field is taken, in a, from the surface's centre."""
    angle_min_deg: float = 0.0
    angle_max_deg: float = 360.0
    angle_count: Annotated[int, Field(ge=2)] = 360
    """Angular sampling of the far field: the whole turn (2D) or a θ, φ grid over the
    whole sphere (3D) lets the run's power balance be judged; a part of it cannot be."""
