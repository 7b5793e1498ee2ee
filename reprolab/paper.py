"""The paper a user asks to reproduce: text, figures and digitized curves."""

from __future__ import annotations

import csv
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


class Paper:
    """A paper folder, validated: every referenced file exists and every CSV parses."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.metadata_path = self.folder / "metadata.yaml"
        self.meta = read_model(self.metadata_path, PaperMetadata)
        for rel in self.referenced_files():
            if not (self.folder / rel).is_file():
                raise InputFileError(
                    self.metadata_path, f"refers to '{rel}', which does not exist in {self.folder}"
                )
        for fig in self.meta.figures:  # every digitized curve parses, before any work
            for curve in fig.curves:
                read_xy_csv(self.folder / curve.digitized)

    @property
    def paper_id(self) -> str:
        return self.meta.paper_id

    def referenced_files(self) -> list[str]:
        files = [self.meta.paper_text]
        for fig in self.meta.figures:
            files.append(fig.image)
            files.extend(c.digitized for c in fig.curves)
        return files

    def text(self) -> str:
        return (self.folder / self.meta.paper_text).read_text(encoding="utf-8")

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
