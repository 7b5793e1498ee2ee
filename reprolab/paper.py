"""The paper a user asks to reproduce: text, figures and digitized curves."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from pydantic import BaseModel, Field

from reprolab.errors import InputFileError
from reprolab.fileio import read_model


class Curve(BaseModel):
    curve_id: str = Field(pattern=r"^[A-Za-z0-9_]+$")
    """Identifier of the curve within its figure (e.g. `T`)."""
    label: str
    """Legend text in the paper."""
    digitized: str
    """Path of the digitized CSV (columns `x,y`), relative to the paper folder."""


class Figure(BaseModel):
    figure_id: str = Field(pattern=r"^[A-Za-z0-9_]+$")
    title: str
    image: str
    """Path of the figure image, relative to the paper folder."""
    x_label: str
    y_label: str
    x_quantity: str = "wavelength_um"
    curves: list[Curve] = Field(min_length=1)


class PaperMetadata(BaseModel):
    paper_id: str = Field(pattern=r"^[A-Za-z0-9_]+$")
    title: str
    authors: list[str] = []
    domain: str
    paper_text: str
    """Path of the markdown text, relative to the paper folder."""
    figures: list[Figure] = Field(min_length=1)


# Caps on what a paper folder may hand the pipeline (bytes).
MAX_BYTES = {
    "metadata.yaml": 1 << 20,
    "paper_text": 2 << 20,
    "image": 20 << 20,
    "digitized": 5 << 20,
}
MAX_JSON_DEPTH = 64
MAX_JSON_BYTES = 5 << 20


class Paper:
    """A paper folder, validated: every referenced file lies inside it (after symlinks),
    exists, is within its size cap, and every CSV parses."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.metadata_path = self.folder / "metadata.yaml"
        check_size(self.metadata_path, MAX_BYTES["metadata.yaml"], "metadata.yaml")
        self.meta = read_model(self.metadata_path, PaperMetadata)
        for field, rel in self.referenced_fields():
            self.confined(field, rel)
        for fig in self.meta.figures:  # every digitized curve parses, before any work
            for curve in fig.curves:
                read_xy_csv(self.folder / curve.digitized)

    @property
    def paper_id(self) -> str:
        return self.meta.paper_id

    def referenced_files(self) -> list[str]:
        return [rel for _field, rel in self.referenced_fields()]

    def referenced_fields(self) -> list[tuple[str, str]]:
        """(metadata field, path) of every file the metadata names."""
        fields = [("paper_text", self.meta.paper_text)]
        for i, fig in enumerate(self.meta.figures):
            fields.append((f"figures[{i}].image", fig.image))
            fields += [
                (f"figures[{i}].curves[{j}].digitized", c.digitized)
                for j, c in enumerate(fig.curves)
            ]
        return fields

    def confined(self, field: str, rel: str) -> Path:
        """The file a metadata field names, refused unless it lies inside the paper folder."""
        root = self.folder.resolve()
        path = (self.folder / rel).resolve()
        if not path.is_relative_to(root):
            raise InputFileError(
                self.metadata_path,
                f"field '{field}' is '{rel}', which resolves to {path}, outside the paper "
                f"folder {root}; valid: a file inside the paper folder (no '..', no absolute "
                "path, no symlink leading out)",
            )
        if not path.is_file():
            raise InputFileError(
                self.metadata_path,
                f"field '{field}' refers to '{rel}', which does not exist in {self.folder}",
            )
        check_size(path, MAX_BYTES[field.rsplit(".", 1)[-1]], f"field '{field}'")
        return path

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
        valid = ", ".join(f.figure_id for f in self.meta.figures)
        raise KeyError(f"paper {self.paper_id} has no figure '{figure_id}' (valid: {valid})")

    def curve_data(self, figure_id: str, curve_id: str) -> tuple[list[float], list[float]]:
        fig = self.figure(figure_id)
        for curve in fig.curves:
            if curve.curve_id == curve_id:
                return read_xy_csv(self.folder / curve.digitized)
        valid = ", ".join(c.curve_id for c in fig.curves)
        raise KeyError(f"figure {figure_id} has no curve '{curve_id}' (valid: {valid})")


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


def read_xy_csv(path: str | Path) -> tuple[list[float], list[float]]:
    """Read a digitized curve: header `x,y`, then numeric rows."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(
            path, f"is not a UTF-8 text CSV (byte {exc.start}: {exc.reason}); expected 'x,y' rows"
        ) from None
    if not rows or [c.strip() for c in rows[0]] != ["x", "y"]:
        raise InputFileError(path, "first line must be the header 'x,y'")
    xs, ys = [], []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            x, y = float(row[0]), float(row[1])
        except (ValueError, IndexError):
            raise InputFileError(path, f"line {lineno} is not two numbers: {row!r}") from None
        xs.append(x)
        ys.append(y)
    if len(xs) < 2:
        raise InputFileError(path, "needs at least two data rows")
    return xs, ys
