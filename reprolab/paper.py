"""The paper a user asks to reproduce: text, figures and digitized curves.

The format is documented in docs/paper-format.md; its JSON schema
(docs/paper-format.schema.json) is generated from its models in `reprolab.paper_format`
(`reprolab paper-schema --write`). A paper folder is checked whole: every problem is
collected (file, field, what would be valid) before anything is refused.
"""

from __future__ import annotations

import csv
import difflib
import json
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from reprolab import units
from reprolab.errors import InputFileError
from reprolab.fileio import read_text
from reprolab.paper_format import Axis, BandDiagram, Curve, Figure, PaperMetadata, Table
from reprolab.paper_results import key_value_problems, table_problems

TODO = "TODO"


# Caps on what a paper folder may hand the pipeline (bytes).
MAX_BYTES = {
    "metadata.yaml": 1 << 20,
    "paper_text": 2 << 20,
    "image": 20 << 20,
    "digitized": 5 << 20,
}
MAX_BYTES["supplementary_text"] = MAX_BYTES["paper_text"]
MAX_JSON_DEPTH = 64
MAX_JSON_BYTES = 5 << 20

Problem = tuple[str, str]  # (file, what is wrong and what would be valid)
BandPoint = tuple[float, float, int | None]  # (k_path, frequency, band or None)


def load_yaml(path: Path) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader where built
    try:
        return yaml.load(read_text(path), Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise InputFileError(path, f"is not valid YAML ({exc})") from None


def dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def todo_fields(data: Any, loc: tuple = ()) -> list[tuple[tuple, str]]:
    """(location, text) of every value still carrying a TODO marker."""
    if isinstance(data, dict):
        return [t for k, v in data.items() for t in todo_fields(v, (*loc, k))]
    if isinstance(data, list):
        return [t for i, v in enumerate(data) for t in todo_fields(v, (*loc, i))]
    return [(loc, data)] if isinstance(data, str) and TODO in data else []


def model_at(loc: tuple) -> type[BaseModel] | None:
    """The model whose field sits at `loc` in PaperMetadata (for did-you-mean)."""
    model: Any = PaperMetadata
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) else None
        if field is None:
            return None
        model = next(
            (
                t
                for t in [field.annotation, *_flatten(field.annotation)]
                if isinstance(t, type) and issubclass(t, BaseModel)
            ),
            None,
        )
    return model


def _flatten(tp: Any) -> list:
    out = []
    for arg in typing.get_args(tp):
        out += [arg, *_flatten(arg)]
    return out


def describe(err: dict) -> str:
    loc = err["loc"]
    where = dotted(loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        model = model_at(loc[:-1])
        valid = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return f"field '{where}' is not a field of the paper format; {hint}valid: {valid}"
    got = err.get("input")
    shown = repr(got)[:80] if not isinstance(got, dict | list) else type(got).__name__
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        return f"field '{where}' is required and missing"
    return f"field '{where}': {msg} (got {shown})"


def metadata_problems(path: Path, data: Any) -> tuple[PaperMetadata | None, list[str]]:
    """The metadata model, or None, and every problem in it: TODO markers left by
    `reprolab new-paper`, unknown keys (with a did-you-mean), invalid values."""
    todos = todo_fields(data)
    problems = [
        f"field '{dotted(loc)}' still has a TODO marker ({text!r}): replace it with the "
        "paper's value (docs/paper-format.md)"
        for loc, text in todos
    ]
    try:
        return PaperMetadata.model_validate(data), problems
    except ValidationError as exc:
        todo_locs = {loc for loc, _ in todos}
        errors = [e for e in exc.errors() if not any(e["loc"][: len(t)] == t for t in todo_locs)]
        return None, problems + [describe(e) for e in errors]


def consistency_problems(meta: PaperMetadata) -> list[str]:
    """Identifiers unique (figures and tables share them), curves bound to axes that
    exist, table rows complete, key values on real curves, tables or band diagrams."""
    problems = []
    ids = [f.figure_id for f in meta.figures]
    tids = [t.table_id for t in meta.tables]
    for what, group in (("figure_id", ids), ("table_id", tids)):
        dups = sorted({i for i in group if group.count(i) > 1})
        problems += [f"{what} '{i}' is used twice" for i in dups]
    for i in sorted(set(ids) & set(tids)):
        problems.append(
            f"field 'tables[{tids.index(i)}].table_id' is '{i}', the id of figures"
            f"[{ids.index(i)}]; figure and table ids share one namespace: valid: another id"
        )
    for i, fig in enumerate(meta.figures):
        cids = [c.curve_id for c in fig.curves]
        for dup in sorted({c for c in cids if cids.count(c) > 1}):
            problems.append(f"field 'figures[{i}].curves': curve_id '{dup}' is used twice")
        for j, c in enumerate(fig.curves):
            if c.y_axis == "right" and fig.y_axes.right is None:
                problems.append(
                    f"field 'figures[{i}].curves[{j}].y_axis' is 'right' but figure "
                    f"'{fig.figure_id}' has no y_axes.right; valid: left, or add y_axes.right"
                )
    return problems + table_problems(meta) + key_value_problems(meta)


class Paper:
    """A paper folder, validated: every referenced file lies inside it (after symlinks),
    exists, is within its size cap, and every CSV parses with its units."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.metadata_path = self.folder / "metadata.yaml"
        self._curves: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        self._bands: dict[tuple[str, str], list[BandPoint]] = {}
        # The CSVs are read once, while the folder is checked.
        meta, problems = check_folder(self.folder, self._curves, self._bands)
        if problems:
            path, first = problems[0]
            more = "".join(f"\n  {p}: {m}" for p, m in problems[1:])
            extra = f"\n{len(problems) - 1} more problem(s):{more}" if more else ""
            raise InputFileError(path, first + extra)
        self.meta = meta

    @property
    def paper_id(self) -> str:
        return self.meta.paper_id

    @property
    def tables(self) -> list[Table]:
        return list(self.meta.tables)

    def table(self, table_id: str) -> Table:
        for table in self.meta.tables:
            if table.table_id == table_id:
                return table
        valid = ", ".join(t.table_id for t in self.meta.tables) or "none"
        raise KeyError(f"paper {self.paper_id} has no table '{table_id}' (valid: {valid})")

    def result_ids(self) -> list[str]:
        """Every result a stage may target: the figures' ids, then the tables'."""
        return [f.figure_id for f in self.meta.figures] + [t.table_id for t in self.meta.tables]

    def is_table(self, result_id: str) -> bool:
        return any(t.table_id == result_id for t in self.meta.tables)

    def band_diagram(self, figure_id: str) -> BandDiagram | None:
        """The figure's band diagram; None for a figure of curves (or a table)."""
        if self.is_table(figure_id):
            return None
        return self.figure(figure_id).band_diagram

    @property
    def unit_length_m(self) -> float | None:
        """The paper's length a in metres (metadata `unit_length`), or None."""
        return self.meta.unit_length.metres if self.meta.unit_length else None

    @property
    def scatterer_radius_m(self) -> float | None:
        """The scatterer's radius in metres (metadata `scatterer_radius`), or None."""
        radius = self.meta.scatterer_radius
        return radius.metres if radius else None

    def convert(self, values, src: tuple[str, str], dst: tuple[str, str]) -> list[float]:
        """`values` from (quantity, unit) `src` to `dst`, through the paper's length a
        where one side is normalized (c/a, a, 2π/a) and through its scatterer's radius
        where one side is a size parameter; units.UnitError when it cannot."""
        values = [float(v) for v in values]
        return units.convert_with_radius(
            values, src, dst, self.unit_length_m, self.scatterer_radius_m
        )

    def band_points(self, figure_id: str, curve_id: str | None = None) -> list[BandPoint]:
        """The digitized points of a band diagram, (k_path, frequency in the y-axis unit,
        band or None), in file order: of one curve, or of all its curves."""
        fig = self.figure(figure_id)
        if fig.band_diagram is None:
            raise KeyError(f"figure {figure_id} is not a band diagram (no band_diagram)")
        curves = [self.curve(figure_id, curve_id)] if curve_id else fig.curves
        points: list[BandPoint] = []
        for curve in curves:
            if curve.digitized is None:
                continue
            key = (figure_id, curve.curve_id)
            if key not in self._bands:
                self._bands[key] = read_band_csv(
                    self.folder / curve.digitized, fig, self.unit_length_m
                )
            points += self._bands[key]
        return points

    def referenced_files(self) -> list[str]:
        return [rel for _field, rel in referenced_fields(self.meta)]

    def confined(self, field: str, rel: str) -> Path:
        problem = confinement_problem(self.folder, field, rel)
        if problem:
            raise InputFileError(self.metadata_path, problem)
        return (self.folder / rel).resolve()

    def text(self) -> str:
        path = self.confined("paper_text", self.meta.paper_text)
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputFileError(
                path,
                f"the paper text (metadata field 'paper_text') is not UTF-8 (byte {exc.start}: "
                f"{exc.reason}); convert it to UTF-8 markdown",
            ) from None

    def figure(self, figure_id: str) -> Figure:
        for fig in self.meta.figures:
            if fig.figure_id == figure_id:
                return fig
        valid = ", ".join(f.figure_id for f in self.meta.figures) or "none"
        if self.is_table(figure_id):
            valid += f"; '{figure_id}' is a table: Paper.table"
        raise KeyError(f"paper {self.paper_id} has no figure '{figure_id}' (valid: {valid})")

    def curve(self, figure_id: str, curve_id: str) -> Curve:
        fig = self.figure(figure_id)
        for curve in fig.curves:
            if curve.curve_id == curve_id:
                return curve
        valid = ", ".join(c.curve_id for c in fig.curves)
        raise KeyError(f"figure {figure_id} has no curve '{curve_id}' (valid: {valid})")

    def has_data(self, figure_id: str, curve_id: str) -> bool:
        return self.curve(figure_id, curve_id).digitized is not None

    def curve_data(
        self, figure_id: str, curve_id: str, x_column: str | None = None
    ) -> tuple[list[float], list[float]]:
        """The digitized curve in its axes' units; with `x_column`, a simulation column
        whose name states a unit (`wavelength_um`, `frequency_THz`), x converted to it
        (sorted by x: wavelength to frequency reverses the order; c/a to THz through the
        paper's `unit_length`). A band diagram's curve is (k_path, frequency): its band
        column is read by `band_points`."""
        fig, curve = self.figure(figure_id), self.curve(figure_id, curve_id)
        if curve.digitized is None:
            raise KeyError(
                f"figure {figure_id} curve '{curve_id}' has no digitized data: it is "
                "compared visually (a qualitative result at most)"
            )
        key = (figure_id, curve_id)
        if key not in self._curves:
            y_axis = fig.y_axes.right if curve.y_axis == "right" else fig.y_axes.left
            self._curves[key] = read_curve_csv(
                self.folder / curve.digitized, fig.x_axis, y_axis, self.unit_length_m
            )
        xs, ys = self._curves[key]
        target = units.column_quantity(x_column) if x_column else None
        if target is None or target == (fig.x_axis.quantity, fig.x_axis.unit):
            return list(xs), list(ys)
        try:
            xs = self.convert(xs, (fig.x_axis.quantity, fig.x_axis.unit), target)
        except units.UnitError:
            return list(xs), list(ys)  # e.g. a free parameter: the column is read as is
        pairs = sorted(zip(xs, ys, strict=True))
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def x_in_figure_units(self, figure_id: str, x_column: str | None, xs) -> list[float]:
        """A simulation column's x values (`wavelength_um`) in the figure's x unit (the
        inverse of `curve_data`'s conversion); as they are when the column states none."""
        axis = self.figure(figure_id).x_axis
        src = units.column_quantity(x_column) if x_column else None
        if src is None or src == (axis.quantity, axis.unit):
            return list(xs)
        try:
            return self.convert(list(xs), src, (axis.quantity, axis.unit))
        except units.UnitError:
            return list(xs)


def referenced_fields(meta: PaperMetadata) -> list[tuple[str, str]]:
    """(metadata field, path) of every file the metadata names."""
    fields = [("paper_text", meta.paper_text)]
    for i, fig in enumerate(meta.figures):
        fields.append((f"figures[{i}].image", fig.image))
        fields += [
            (f"figures[{i}].curves[{j}].digitized", c.digitized)
            for j, c in enumerate(fig.curves)
            if c.digitized
        ]
    fields += [(f"supplementary_text[{i}]", t) for i, t in enumerate(meta.supplementary_text)]
    fields += [
        (f"supplementary_figures[{i}].image", f.image)
        for i, f in enumerate(meta.supplementary_figures)
    ]
    return fields


def confinement_problem(folder: Path, field: str, rel: str) -> str | None:
    """Why the file a metadata field names is refused (outside the folder, missing, too
    big), or None."""
    root = folder.resolve()
    path = (folder / rel).resolve()
    if not path.is_relative_to(root):
        return (
            f"field '{field}' is '{rel}', which resolves to {path}, outside the paper "
            f"folder {root}; valid: a file inside the paper folder (no '..', no absolute "
            "path, no symlink leading out)"
        )
    if not path.is_file():
        return f"field '{field}' refers to '{rel}', which does not exist in {folder}"
    cap = MAX_BYTES[field.rsplit(".", 1)[-1].split("[")[0]]
    size = path.stat().st_size
    if size > cap:
        return f"field '{field}' is {size} bytes, over the cap of {cap} bytes ({cap >> 20} MiB)"
    return None


def check_folder(
    folder: str | Path, curves: dict | None = None, bands: dict | None = None
) -> tuple[PaperMetadata | None, list[Problem]]:
    """The metadata, and every problem of the paper folder at once (file, message);
    `curves` gets each digitized curve read, by (figure_id, curve_id), and `bands` each
    band diagram's points (k_path, frequency, band)."""
    folder = Path(folder)
    meta_path = folder / "metadata.yaml"
    if not meta_path.is_file():
        return None, [(str(meta_path), "file does not exist; a paper folder needs one")]
    try:
        check_size(meta_path, MAX_BYTES["metadata.yaml"], "metadata.yaml")
        data = load_yaml(meta_path)
    except InputFileError as exc:
        return None, [(exc.path, exc.problem)]
    meta, found = metadata_problems(meta_path, data)
    problems: list[Problem] = [(str(meta_path), m) for m in found]
    if meta is None:
        return None, problems
    problems += [(str(meta_path), m) for m in consistency_problems(meta)]
    for field, rel in referenced_fields(meta):
        problem = confinement_problem(folder, field, rel)
        if problem:
            problems.append((str(meta_path), problem))
    bad = [m for _f, m in problems]
    a_m = meta.unit_length.metres if meta.unit_length else None
    curves = {} if curves is None else curves
    bands = {} if bands is None else bands
    for fig in meta.figures:
        for curve in fig.curves:
            if not curve.digitized or any(f"'{curve.digitized}'" in m for m in bad):
                continue
            y_axis = fig.y_axes.right if curve.y_axis == "right" else fig.y_axes.left
            key, path = (fig.figure_id, curve.curve_id), folder / curve.digitized
            try:
                if fig.band_diagram is not None:
                    bands[key] = read_band_csv(path, fig, a_m)
                    curves[key] = ([p[0] for p in bands[key]], [p[1] for p in bands[key]])
                else:
                    curves[key] = read_curve_csv(path, fig.x_axis, y_axis or fig.y_axes.left, a_m)
            except InputFileError as exc:
                problems.append((exc.path, exc.problem))
    return meta, problems


def check_size(path: Path, cap: int, what: str) -> None:
    try:
        size = path.stat().st_size
    except OSError:
        return  # a missing file is named by whoever reads it
    if size > cap:
        raise InputFileError(
            path, f"{what} is {size} bytes, over the cap of {cap} bytes ({cap >> 20} MiB)"
        )


def strict_json(text: str, source: str | Path) -> object:
    """JSON from outside (an answer, an edit): duplicate keys, deep nesting and huge
    files are refused naming the file, never a traceback."""
    if len(text) > MAX_JSON_BYTES:
        raise InputFileError(source, f"is {len(text)} characters, over {MAX_JSON_BYTES}")

    def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
        keys = [k for k, _ in pairs]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup is not None:
            raise InputFileError(source, f"has the key {dup!r} twice in one object")
        return dict(pairs)

    depth = max_depth = 0
    in_string = escaped = False
    for ch in text:  # nesting measured before parsing: json recurses per level
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = ch == "\\", ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            max_depth = max(max_depth, depth)
        elif ch in "]}":
            depth -= 1
    if max_depth > MAX_JSON_DEPTH:
        raise InputFileError(source, f"nests {max_depth} levels deep; at most {MAX_JSON_DEPTH}")
    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            source, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def csv_lines(path: Path) -> list[list[str]]:
    """The rows of a UTF-8 CSV, errors naming the file."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.reader(fh))
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(
            path, f"is not a UTF-8 text CSV (byte {exc.start}: {exc.reason}); expected x,y rows"
        ) from None


def read_csv_rows(
    path: Path, expect: list[str] | None = None
) -> tuple[list[str], list[tuple[float, float]]]:
    """(header, numeric rows) of a two-column CSV, errors naming the line."""
    rows = csv_lines(path)
    if not rows or len(rows[0]) < 2:
        raise InputFileError(path, "first line must be a header naming the x and y columns")
    if expect and [c.strip() for c in rows[0][:2]] != expect:
        raise InputFileError(path, f"first line must be the header '{','.join(expect)}'")
    data = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            data.append((float(row[0]), float(row[1])))
        except (ValueError, IndexError):
            raise InputFileError(path, f"line {lineno} is not two numbers: {row!r}") from None
    if len(data) < 2:
        raise InputFileError(path, "needs at least two data rows")
    return [c.strip() for c in rows[0]], data


def read_xy_csv(path: str | Path) -> tuple[list[float], list[float]]:
    """A digitized curve of the first format: header `x,y`, then numeric rows."""
    header, data = read_csv_rows(Path(path), expect=["x", "y"])
    return [r[0] for r in data], [r[1] for r in data]


def column_values(
    path: Path, header: str, axis: Axis, values: list[float], unit_length_m: float | None = None
) -> list[float]:
    """A column in its axis's unit: converted from the unit its header states (c/a to
    THz only through the paper's length a, `unit_length_m`)."""
    qty = axis.quantity
    try:
        src = units.column_unit(header, qty)
    except units.UnitError as exc:
        raise InputFileError(
            path, f"column '{header}' {exc} (or no unit: the axis's '{axis.unit}')"
        ) from None
    if src is None:
        return values
    try:
        return units.convert(values, src, (qty, axis.unit), unit_length_m)
    except units.UnitError as exc:
        raise InputFileError(path, f"column '{header}': {exc}") from None


def read_curve_csv(
    path: Path, x_axis: Axis, y_axis: Axis, unit_length_m: float | None = None
) -> tuple[list[float], list[float]]:
    """A digitized curve in its figure's axis units (see Curve.digitized)."""
    header, data = read_csv_rows(path)
    xs = column_values(path, header[0], x_axis, [r[0] for r in data], unit_length_m)
    ys = column_values(path, header[1], y_axis, [r[1] for r in data], unit_length_m)
    return xs, ys


def band_index(text: str) -> int | None:
    """The 1-based band of a CSV cell, or None when it is not a positive integer."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and value >= 1 else None


def read_band_csv(path: Path, fig: Figure, unit_length_m: float | None = None) -> list[BandPoint]:
    """A band diagram's digitized points: columns k_path, frequency (its unit in the
    header, converted to the y axis's) and optionally band, each row on the k path and,
    with a band, within the bands the figure shows."""
    bd = fig.band_diagram
    assert bd is not None
    rows = [r for r in csv_lines(path) if r]
    header = [c.strip() for c in rows[0]] if rows else []
    if len(header) not in (2, 3):
        raise InputFileError(
            path,
            f"first line must name 2 or 3 columns: k_path, frequency (with its unit, "
            f"e.g. frequency_c/a) and optionally band; got {header!r}",
        )
    if len(header) == 3 and header[2].lower() != "band":
        raise InputFileError(
            path, f"column 3 is '{header[2]}'; valid: band (the 1-based band) or no third column"
        )
    last = len(bd.k_path) - 1
    ks, fs, bands = [], [], []
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise InputFileError(
                path, f"line {lineno} has {len(row)} cells; the header {len(header)}"
            )
        try:
            k, f = float(row[0]), float(row[1])
        except ValueError:
            raise InputFileError(
                path, f"line {lineno}: k_path and frequency must be numbers: {row!r}"
            ) from None
        if not -1e-9 <= k <= last + 1e-9:
            raise InputFileError(
                path,
                f"line {lineno}: k_path {k:g} is off the k path; valid: 0 to {last} "
                f"({'-'.join(bd.labels)})",
            )
        band = band_index(row[2]) if len(row) == 3 else None
        if len(row) == 3 and (band is None or band > bd.bands):
            raise InputFileError(
                path,
                f"line {lineno}: column 'band' is {row[2].strip()!r}; valid: a positive "
                f"integer, 1 to {bd.bands} (band_diagram.bands)",
            )
        ks.append(k)
        fs.append(f)
        bands.append(band)
    if len(ks) < 2:
        raise InputFileError(path, "needs at least two data rows")
    ks = column_values(path, header[0], fig.x_axis, ks, unit_length_m)
    fs = column_values(path, header[1], fig.y_axes.left, fs, unit_length_m)
    return list(zip(ks, fs, bands, strict=True))
