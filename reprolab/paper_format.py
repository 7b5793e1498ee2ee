"""The paper format's models: what metadata.yaml may say (docs/paper-format.md).

The JSON schema docs/paper-format.schema.json is generated from these
(`reprolab paper-schema --write`); reading and checking a folder is reprolab.paper.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reprolab import units

SCHEMA_PATH = Path(__file__).parents[1] / "docs" / "paper-format.schema.json"
ID = r"^[A-Za-z0-9_]+$"


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
        description="The axis unit, one of its quantity's (wavelength: nm, um; "
        "frequency: THz, GHz, c/a; energy: eV, meV; angle: deg, rad; dimensionless: 1, %); "
        "any text for a free parameter.",
    )
    name: str | None = Field(None, description="A free parameter's name (e.g. `num_pairs`).")
    scale: Literal["linear", "log"] = "linear"

    @model_validator(mode="after")
    def _unit_of_quantity(self):
        problem = units.check_unit(self.quantity, self.unit)
        if problem:
            raise ValueError(problem)
        return self


class YAxes(Strict):
    left: Axis = Field(description="The left y axis; every curve is on it unless bound right.")
    right: Axis | None = Field(None, description="The right y axis of a two-axis figure.")


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

    @property
    def digitized(self) -> bool:
        """Every curve has digitized data: compared by numbers, not only by eye."""
        return all(c.digitized for c in self.curves)


class KeyValue(Strict):
    quantity: str = Field(description="What the number is, e.g. `peak reflectance`.")
    value: float
    unit: str = Field("1", description="Its unit (`1` when dimensionless).")
    kind: Literal["y_at_x", "x_of_max", "x_of_min", "max_y", "min_y", "other"] = Field(
        "other",
        description="How code reads it off the curve: y at `x`, the x of the maximum or "
        "minimum, the maximum or minimum y; `other` is compared by the analyst only.",
    )
    figure: str | None = Field(None, description="The figure the value belongs to.")
    curve: str | None = Field(None, description="The curve of that figure.")
    x: float | None = Field(None, description="Where on the x axis, in the figure's x unit.")
    note: str = ""


class SupplementaryFigure(Strict):
    image: str
    caption: str = ""


class PaperMetadata(Strict):
    paper_id: str = Field(pattern=ID)
    title: str
    authors: list[str] = []
    domain: str
    paper_text: str = Field(description="The markdown text, relative to the paper folder.")
    figures: list[Figure] = Field(min_length=1)
    key_values: list[KeyValue] = Field(
        [], description="Headline numbers the paper states, compared with the reproduction."
    )
    supplementary_text: list[str] = Field([], description="Markdown files of supplements.")
    supplementary_figures: list[SupplementaryFigure] = []


def paper_schema() -> dict:
    schema = PaperMetadata.model_json_schema()
    schema["title"] = "ReproLab paper metadata (metadata.yaml)"
    return schema


def schema_text() -> str:
    return json.dumps(paper_schema(), indent=2, ensure_ascii=False) + "\n"
