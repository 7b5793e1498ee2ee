"""The paper format's models: what metadata.yaml may say (docs/paper-format.md).

The JSON schema docs/paper-format.schema.json is generated from these
(`reprolab paper-schema --write`); reading and checking a folder is reprolab.paper.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reprolab import units

SCHEMA_PATH = Path(__file__).parents[1] / "docs" / "paper-format.schema.json"
ID = r"^[A-Za-z0-9_]+$"

# What a table column states -> the quantity of its unit (None: any unit, analyst only).
MEASURES: dict[str, str | None] = {
    "mode_frequency": "frequency",
    "mode_wavelength": "wavelength",
    "quality_factor": "quality_factor",
    "linewidth": "frequency",
    "splitting": "frequency",
    "gap_lower": "frequency",
    "gap_upper": "frequency",
    "gap_midgap_ratio": "dimensionless",
    "other": None,
}
# The row labels a table may declare: what tells its modes apart.
LABELS = ("m", "band", "parity", "k", "polarization", "order")
POLARIZATIONS = ("TE", "TM", "TE-like", "TM-like")
# Key-value kinds read off a table or a band diagram rather than off a curve.
MODE_KINDS = ("mode_frequency", "quality_factor", "gap_lower", "gap_upper", "gap_midgap_ratio")
CURVE_KINDS = (
    "y_at_x",
    "x_of_max",
    "x_of_min",
    "max_y",
    "min_y",
    "x_splitting_of_max",
    "x_splitting_of_min",
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Axis(Strict):
    label: str = Field(description="The axis label as printed in the paper.")
    quantity: Literal[units.QUANTITIES] = Field(  # type: ignore[valid-type]
        description="What the axis measures; `parameter` is a free parameter (e.g. a "
        "number of layers) converted only to itself."
    )
    unit: str = Field(
        "1",
        description="The axis unit, one of its quantity's (wavelength: nm, um, a; "
        "frequency: THz, GHz, c/a (also a/λ, ωa/2πc); energy: eV, meV; angle: deg, rad; "
        "dimensionless: 1, %; wavevector: 2π/a, 1/um; quality_factor, k_path: 1); "
        "any text for a free parameter.",
    )
    name: str | None = Field(None, description="A free parameter's name (e.g. `num_pairs`).")
    scale: Literal["linear", "log"] = Field(
        "linear",
        description="How the paper plots the axis; a log y axis is compared in log space "
        "(differences are ln(y_run / y_paper), a relative error wherever the curve sits).",
    )
    position_tolerance: float | None = Field(
        None,
        gt=0,
        description="How far (in the axis unit) a peak or dip may move and still be at the "
        "success limit of feature_shift_rel; without it, shifts are relative to the "
        "position, or to the axis span where the origin lies in the data (a lobe at 0°).",
    )

    @model_validator(mode="after")
    def _unit_of_quantity(self):
        problem = units.check_unit(self.quantity, self.unit)
        if problem:
            raise ValueError(problem)
        return self


class YAxes(Strict):
    left: Axis = Field(description="The left y axis; every curve is on it unless bound right.")
    right: Axis | None = Field(None, description="The right y axis of a two-axis figure.")


class StatedLine(Strict):
    x: float = Field(
        description="The line's position as the paper plots it, in the figure's x unit."
    )
    q: float = Field(gt=0, description="The quality factor the paper states for it (x / FWHM).")
    note: str = ""


class Curve(Strict):
    curve_id: str = Field(pattern=ID, description="Identifier within its figure (e.g. `T`).")
    label: str = Field(description="Legend text in the paper.")
    y_axis: Literal["left", "right"] = Field("left", description="The y axis the curve is on.")
    digitized: str | None = Field(
        None,
        description="Digitized CSV, relative to the paper folder: a header naming the x and "
        "y columns with their units (`wavelength_nm,T` or `wavelength (nm),R [%]`; a column "
        "without a unit is in its axis's unit), then numeric rows. Without it the curve is "
        "compared visually (a qualitative result at most).",
    )
    digitized_by: Literal["new-paper", "digitize"] | None = Field(
        None,
        description="Which ReproLab tool made the digitized CSV, where one did: `new-paper` "
        "(read from the PDF's drawing paths) or `digitize` (from the figure's image by its "
        "calibration points and colour); none for data the paper or a person gave. The "
        "report names the figures judged from such curves.",
    )
    reference: bool = Field(
        False,
        description="The curve is the paper's reference (analytic theory, a Mie series, a "
        "transfer matrix, another solver), not its result: it needs digitized data and no "
        "simulation output; the reproduction of each result curve is also compared with it.",
    )
    reference_for: list[str] | None = Field(
        None,
        description="The result curves (curve_id) a reference curve is the reference of; "
        "without it, every result curve of the figure on the same y axis.",
    )
    lines: list[StatedLine] = Field(
        [],
        description="Lines of this curve whose Q the paper states (a resonance of Q 2000 "
        "at 0.2503 c/a): each is compared as Q, and its linewidth x / Q is the scale of "
        "its shift (in linewidths). Only on a wavelength, frequency, energy or wavenumber "
        "axis.",
    )

    @model_validator(mode="after")
    def _reference_has_data(self):
        if self.reference and not self.digitized:
            raise ValueError(
                f"reference curve '{self.curve_id}' needs `digitized` data: a reference is "
                "compared by numbers"
            )
        if self.reference_for is not None and not self.reference:
            raise ValueError(
                f"curve '{self.curve_id}' names `reference_for` but is not `reference: true`"
            )
        return self


class Polar(Strict):
    normalise: Literal["max", "none"] = Field(
        "max",
        description="`max`: the paper plots the pattern divided by its maximum, and the "
        "reproduction is divided by its own; `none`: absolute values.",
    )
    db: bool = Field(
        False,
        description="The radial axis is in dB (10·log10 of the power): the paper's values "
        "are dB, the reproduction (a power) is converted; differences are dB over the "
        "paper's dB range.",
    )


class FieldMap(Strict):
    colour: Axis = Field(
        description="The colour bar: label, quantity and unit (e.g. `|E|²/|E₀|²`, dimensionless)."
    )
    vmin: float = Field(description="The lower end of the paper's colour scale.")
    vmax: float = Field(description="The upper end of the paper's colour scale.")
    colormap: str = Field("viridis", description="A matplotlib colour map like the paper's.")
    x_limits: list[float] | None = Field(
        None, min_length=2, max_length=2, description="The map's x range as printed."
    )
    y_limits: list[float] | None = Field(
        None, min_length=2, max_length=2, description="The map's y range as printed."
    )

    @model_validator(mode="after")
    def _scale(self):
        if not self.vmin < self.vmax:
            raise ValueError(f"vmin ({self.vmin:g}) must be below vmax ({self.vmax:g})")
        if self.colour.scale == "log" and self.vmin <= 0:
            raise ValueError(f"a log colour scale needs vmin > 0 (got {self.vmin:g})")
        from matplotlib import colormaps  # only for a figure that has a field map

        if self.colormap not in colormaps:
            near = difflib.get_close_matches(self.colormap, list(colormaps), n=3)
            raise ValueError(
                f"colormap '{self.colormap}' is not a matplotlib colour map"
                + (f" (did you mean {', '.join(near)}?)" if near else "")
            )
        return self


class KPoint(Strict):
    label: str = Field(min_length=1, description="The symmetry point's label (`Γ`, `X`, `M`).")
    k: list[float] = Field(
        min_length=1,
        max_length=3,
        description="Cartesian k in units of 2π/a (Meep's k_point convention); missing "
        "components are 0.",
    )

    @property
    def vector(self) -> list[float]:
        return [*self.k, *[0.0] * (3 - len(self.k))]


class Gap(Strict):
    below_band: int = Field(ge=1, description="The band below the gap (1-based).")
    lower: float = Field(description="The gap's lower edge, in the y-axis unit.")
    upper: float = Field(description="The gap's upper edge, in the y-axis unit.")

    @model_validator(mode="after")
    def _ordered(self):
        if not 0 <= self.lower < self.upper:
            raise ValueError(
                f"a gap needs 0 <= lower < upper (got lower {self.lower:g}, upper {self.upper:g})"
            )
        return self

    @property
    def midgap_ratio(self) -> float:
        """Gap width over midgap frequency (Δω/ω_mid)."""
        return 2 * (self.upper - self.lower) / (self.upper + self.lower)


class BandDiagram(Strict):
    lattice: Literal["square", "triangular", "rectangular", "oblique"] | None = Field(
        None, description="The lattice (informative)."
    )
    polarization: Literal["TE", "TM", "none"] = Field(
        "none", description="The bands' polarization (`none`: both, or a 3D structure)."
    )
    k_path: list[KPoint] = Field(
        description="The symmetry points in the order of the x axis; point i is at k_path "
        "= i, segments are straight lines in k between them."
    )
    bands: int = Field(ge=1, description="How many lowest bands the figure shows (compared).")
    light_line: bool = Field(False, description="The figure draws the light line.")
    gaps: list[Gap] = Field([], description="Band gaps the paper states.")

    @field_validator("k_path")
    @classmethod
    def _two_points(cls, value: list[KPoint]) -> list[KPoint]:
        if len(value) < 2:
            raise ValueError(
                f"a k path needs at least 2 points (got {len(value)}); valid: the symmetry "
                "points in order, e.g. [{label: Γ, k: [0, 0, 0]}, {label: X, k: [0.5, 0, 0]}]"
            )
        return value

    @model_validator(mode="after")
    def _gaps_between_shown_bands(self):
        for gap in self.gaps:
            if gap.below_band >= self.bands:
                raise ValueError(
                    f"a gap below band {gap.below_band + 1} lies above the {self.bands} "
                    f"band(s) shown; valid below_band: 1 to {self.bands - 1} (or raise bands)"
                )
        return self

    @property
    def labels(self) -> list[str]:
        return [p.label for p in self.k_path]


class Figure(Strict):
    figure_id: str = Field(pattern=ID)
    title: str
    image: str = Field(description="The figure image, relative to the paper folder.")
    caption: str = ""
    x_axis: Axis
    y_axes: YAxes
    curves: list[Curve] = Field(min_length=1)
    field_map: FieldMap | None = Field(
        None,
        description="A field-map figure (|E|² or Ez over a plane): x_axis and y_axes.left "
        "are the map's axes, its one curve names the map (no digitized data); the "
        "reproduction, written as HDF5, is drawn with the same axes and colour scale "
        "beside the paper's image and compared by eye (qualitative).",
    )
    band_diagram: BandDiagram | None = Field(
        None,
        description="A band diagram ω(k): x_axis is `k_path` (unit 1), y_axes.left a "
        "frequency; each curve's CSV has columns k_path, frequency and optionally band "
        "(1-based).",
    )

    polar: Polar | None = Field(
        None,
        description="A polar figure (a radiation pattern): x_axis is the angle (deg or "
        "rad, wrapping at a full turn), y_axes.left the radial quantity.",
    )

    @model_validator(mode="after")
    def _polar_and_references(self):
        if self.polar is not None and self.x_axis.quantity != "angle":
            raise ValueError(
                f"a polar figure's x_axis has quantity 'angle' (unit deg or rad); "
                f"got '{self.x_axis.quantity}'"
            )
        ids = {c.curve_id: c for c in self.curves}
        results = [c.curve_id for c in self.curves if not c.reference]
        for curve in self.curves:
            for target in curve.reference_for or []:
                if target not in ids or ids[target].reference:
                    raise ValueError(
                        f"reference curve '{curve.curve_id}' names reference_for '{target}', "
                        f"not a result curve of this figure (valid: {results})"
                    )
        if not results:
            raise ValueError("a figure needs at least one result curve (not `reference: true`)")
        stating = [c.curve_id for c in self.curves if c.lines]
        if stating and self.x_axis.quantity not in units.PHOTON:
            raise ValueError(
                f"curve '{stating[0]}' states lines with a Q, but the x_axis is "
                f"{self.x_axis.quantity}; valid: a wavelength, frequency, energy or "
                "wavenumber axis (Q = x / FWHM)"
            )
        return self

    def references_of(self, curve_id: str) -> list[Curve]:
        """The paper's reference curves that result curve `curve_id` is compared with."""
        result = next(c for c in self.curves if c.curve_id == curve_id)
        return [
            c
            for c in self.curves
            if c.reference
            and (
                curve_id in c.reference_for
                if c.reference_for is not None
                else c.y_axis == result.y_axis
            )
        ]

    @model_validator(mode="after")
    def _band_axes(self):
        if self.band_diagram is None:
            return self
        if self.field_map is not None:
            raise ValueError("a figure is a field map or a band diagram, not both")
        if self.x_axis.quantity != "k_path":
            raise ValueError(
                f"a band diagram's x_axis has quantity 'k_path' (unit 1: symmetry points "
                f"at 0, 1, 2, ...); got '{self.x_axis.quantity}'"
            )
        if self.y_axes.left.quantity != "frequency" or self.y_axes.right is not None:
            raise ValueError(
                "a band diagram's y_axes has only left, with quantity 'frequency' (e.g. unit "
                f"c/a); got '{self.y_axes.left.quantity}'"
                + (" and a right axis" if self.y_axes.right else "")
            )
        return self

    @model_validator(mode="after")
    def _one_map(self):
        if self.field_map is None:
            return self
        if len(self.curves) != 1 or self.curves[0].digitized or self.y_axes.right:
            raise ValueError(
                "a field-map figure has exactly one curve (the map), without digitized "
                "data, and no right y axis"
            )
        return self

    @model_validator(mode="before")
    @classmethod
    def _legacy_labels(cls, data: Any) -> Any:
        """The first format's `x_label`, `y_label`, `x_quantity` (e.g. `wavelength_um`,
        `num_pairs`), read as axes so older paper folders keep working."""
        if not isinstance(data, dict) or "x_axis" in data or "x_label" not in data:
            return data
        data = dict(data)
        qty = data.pop("x_quantity", "wavelength_um")
        parsed = units.column_quantity(str(qty))
        x = {"label": data.pop("x_label")}
        x |= {"quantity": parsed[0], "unit": parsed[1]} if parsed else {"quantity": "parameter"}
        x |= {} if parsed else {"name": str(qty)}
        data["x_axis"] = x
        if "y_label" in data:
            data["y_axes"] = {"left": {"label": data.pop("y_label"), "quantity": "parameter"}}
        return data

    @property
    def x_label(self) -> str:
        return self.x_axis.label

    @property
    def y_label(self) -> str:
        right = f" / {self.y_axes.right.label} (right)" if self.y_axes.right else ""
        return self.y_axes.left.label + right

    def curve_axis(self, curve_id: str) -> str:
        """`left` or `right`: the y axis curve `curve_id` is on."""
        return next((c.y_axis for c in self.curves if c.curve_id == curve_id), "left")

    @property
    def digitized(self) -> bool:
        """Every curve has digitized data: compared by numbers, not only by eye."""
        return all(c.digitized for c in self.curves)

    @property
    def result_curves(self) -> list[Curve]:
        """The curves a simulation reproduces (not the paper's references)."""
        return [c for c in self.curves if not c.reference]


class KeyValue(Strict):
    quantity: str = Field(description="What the number is, e.g. `peak reflectance`.")
    value: float
    unit: str = Field("1", description="Its unit (`1` when dimensionless).")
    kind: Literal[(*CURVE_KINDS, *MODE_KINDS, "other")] = Field(  # type: ignore[valid-type]
        "other",
        description="How code reads it off the reproduction: off a curve, y at `x`, the x "
        "of the maximum or minimum, the maximum or minimum y, the distance in x between "
        "its two most prominent peaks or dips (a Rabi splitting); off a table or a band "
        "diagram, a mode's frequency or Q, a gap's edges or its gap-midgap ratio; `other` "
        "is compared by the analyst only.",
    )
    figure: str | None = Field(
        None, description="The figure (or, for a mode kind, the table) the value belongs to."
    )
    curve: str | None = Field(None, description="The curve of that figure.")
    x: float | None = Field(None, description="Where on the x axis, in the figure's x unit.")
    labels: dict[str, Any] | None = Field(
        None,
        description="The mode's labels (a mode kind): for a table, some of its declared "
        "labels (`{m: 5}`); for a band diagram, `{k: X}` (a k_path label).",
    )
    band: int | None = Field(
        None, ge=1, description="The band (a mode kind): on a band diagram, the band below a gap."
    )
    note: str = ""


class _Length(Strict):
    """A length in SI units (nm, um, mm, m); `_of` names it in an error."""

    _of: ClassVar[str] = "a length"
    value: float = Field(gt=0)
    unit: str = Field(description="Its unit: nm, um, mm, m.")

    @model_validator(mode="after")
    def _length_unit(self):
        valid = [u for u in units.UNITS["length"] if not units.normalized(u)]
        if self.unit not in valid:
            raise ValueError(
                f"'{self.unit}' is not a length unit for {self._of}; valid: {', '.join(valid)}"
            )
        return self

    @property
    def metres(self) -> float:
        return self.value * units.UNITS["length"][self.unit]


class UnitLength(_Length):
    _of: ClassVar[str] = "a"
    value: float = Field(gt=0, description="The length a of the paper's normalized units.")


class ScattererRadius(_Length):
    _of: ClassVar[str] = "the scatterer's radius"
    value: float = Field(gt=0, description="The radius r of the paper's scatterer.")


def size_parameter_axes(figures: list) -> list[str]:
    """The figures' axes that are a size parameter (`figures[0].x_axis`)."""
    out = []
    for i, fig in enumerate(figures):
        axes = {"x_axis": fig.x_axis, "y_axes.left": fig.y_axes.left}
        axes["y_axes.right"] = fig.y_axes.right
        out += [
            f"figures[{i}].{k}" for k, a in axes.items() if a and a.quantity == "size_parameter"
        ]
    return out


class Column(Strict):
    name: str = Field(pattern=ID, description="The column's key in each row (e.g. `Q`).")
    measure: Literal[tuple(MEASURES)] = Field(  # type: ignore[valid-type]
        description="What the column states: mode_frequency, mode_wavelength, "
        "quality_factor (unit 1), linewidth (full width), splitting, gap_lower, gap_upper "
        "(frequency units), gap_midgap_ratio (1 or %), other (analyst only)."
    )
    unit: str = Field("1", description="The column's unit, one of its measure's.")
    label: str = Field("", description="The column heading as printed, if it helps.")

    @model_validator(mode="after")
    def _unit_of_measure(self):
        quantity = MEASURES[self.measure]
        if self.name in LABELS:
            raise ValueError(f"column name '{self.name}' is a label name; valid: another name")
        problem = units.check_unit(quantity, self.unit) if quantity else None
        if problem:
            raise ValueError(f"column '{self.name}' (measure {self.measure}): {problem}")
        return self


class Table(Strict):
    table_id: str = Field(pattern=ID, description="Unique among figure and table ids.")
    title: str
    caption: str = ""
    labels: list[Literal[LABELS]] = Field(  # type: ignore[valid-type]
        [],
        description="The label columns that tell the rows apart: m (azimuthal order), band, "
        "parity, k (a symmetry-point label or [kx, ky, kz] in 2π/a), polarization, order.",
    )
    columns: list[Column] = Field(min_length=1, description="The value columns.")
    rows: list[dict[str, Any]] = Field(
        min_length=1,
        description="One mapping per row: every declared label, and the columns' values "
        "(a number, or null when not stated).",
    )

    @model_validator(mode="after")
    def _unique_names(self):
        names = [c.name for c in self.columns]
        for group, what in ((names, "column name"), (list(self.labels), "label")):
            dup = sorted({n for n in group if group.count(n) > 1})
            if dup:
                raise ValueError(f"{what} {dup[0]!r} is declared twice")
        return self

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"table {self.table_id} has no column '{name}' (valid: {self.names})")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def row_labels(self, row: dict) -> dict[str, Any]:
        return {label: row.get(label) for label in self.labels}

    def value(self, row: dict, name: str) -> float | None:
        """A row's value of column `name`; None when not stated."""
        self.column(name)
        return row.get(name)


class SupplementaryFigure(Strict):
    image: str
    caption: str = ""


class PaperMetadata(Strict):
    paper_id: str = Field(pattern=ID)
    title: str
    authors: list[str] = []
    domain: str
    paper_text: str = Field(description="The markdown text, relative to the paper folder.")
    unit_length: UnitLength | None = Field(
        None,
        description="The length a of normalized units (c/a, a, 2π/a), if the paper states "
        "it: without it they are never converted to THz or nm.",
    )
    scatterer_radius: ScattererRadius | None = Field(
        None,
        description="The radius r of the scatterer whose size parameter x = 2πr/λ an axis "
        "states (quantity `size_parameter`): x converts to wavelength or frequency through "
        "it. Required when an axis is a size parameter.",
    )
    figures: list[Figure] = Field([], description="The figures (at least one figure or table).")
    tables: list[Table] = Field([], description="Tables of modes (at least one figure or table).")
    key_values: list[KeyValue] = Field(
        [], description="Headline numbers the paper states, compared with the reproduction."
    )
    supplementary_text: list[str] = Field([], description="Markdown files of supplements.")
    supplementary_figures: list[SupplementaryFigure] = []

    @model_validator(mode="after")
    def _one_result(self):
        if not self.figures and not self.tables:
            raise ValueError(
                "a paper needs at least one result: a figure (`figures`) or a table (`tables`)"
            )
        return self

    @model_validator(mode="after")
    def _size_parameter_needs_radius(self):
        axes = size_parameter_axes(self.figures)
        if axes and self.scatterer_radius is None:
            raise ValueError(
                f"{axes[0]} is a size parameter (x = 2πr/λ): a simulation's wavelength or "
                "frequency converts to it only through the scatterer's radius; "
                f"{units.RADIUS_HINT} (a sphere's Q depends on r only through x: where the "
                "paper states none, state the radius the reproduction is to use)"
            )
        return self

    @model_validator(mode="after")
    def _the_one_gap(self):
        """A gap's key value on a band diagram that states one gap is about that gap."""
        figs = {f.figure_id: f for f in self.figures}
        for kv in self.key_values:
            fig = figs.get(kv.figure or "")
            bd = fig.band_diagram if fig else None
            if kv.kind.startswith("gap_") and kv.band is None and bd and len(bd.gaps) == 1:
                kv.band = bd.gaps[0].below_band
        return self


def paper_schema() -> dict:
    schema = PaperMetadata.model_json_schema()
    schema["title"] = "ReproLab paper metadata (metadata.yaml)"
    return schema


def schema_text() -> str:
    return json.dumps(paper_schema(), indent=2, ensure_ascii=False) + "\n"
