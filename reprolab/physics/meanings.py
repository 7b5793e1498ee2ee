"""What an output column is, from the design (`OutputSpec.column_meanings`).

The run-time checks hold a column to the range its meaning allows: transmittance,
reflectance and absorbance in [0, 1] (with the energy balance), cross sections
non-negative (with extinction = scattering + absorption). A column is never judged by
a name the design did not give a meaning to: a band diagram's `k` may be negative, a
`Q` of a lossless mode is not a range. A design without `column_meanings` for a file
is read by the naming convention its schema documents (`T`, `R`, `A`, `sigma_`/`C_`/`Q_`
+ `sca`/`abs`/`ext`), and only that.
"""

from __future__ import annotations

import re

COLUMN_MEANINGS = (
    "transmittance",
    "reflectance",
    "absorbance",
    "extinction_cross_section",
    "scattering_cross_section",
    "absorption_cross_section",
    "frequency",
    "wavelength",
    "wavevector",
    "k_path",
    "quality_factor",
    "field",
    "ldos",
    "purcell",
    "parameter",
    "other",
)
# Ratios of powers: [0, 1] (thresholds.TR_BOUNDS) and the energy balance.
RATIOS = {"transmittance": "T", "reflectance": "R", "absorbance": "A"}
# Cross sections (or efficiencies): non-negative, ext = sca + abs.
CROSS_SECTIONS = {
    "extinction_cross_section": "ext",
    "scattering_cross_section": "sca",
    "absorption_cross_section": "abs",
}
# The documented names of a design that gives no meanings.
_CONVENTION = {"T": "transmittance", "R": "reflectance", "A": "absorbance"}
_XS = re.compile(r"^(?:sigma|C|Q)_(sca|abs|ext)\b", re.IGNORECASE)
_XS_MEANING = {short: meaning for meaning, short in CROSS_SECTIONS.items()}


def by_convention(columns) -> dict[str, str]:
    """Meanings of the documented column names (a design without column_meanings)."""
    out = {}
    for name in columns:
        if name in _CONVENTION:
            out[name] = _CONVENTION[name]
        elif m := _XS.match(name):
            out[name] = _XS_MEANING[m[1].lower()]
    return out


def _spec(design: dict | None, file: str) -> dict | None:
    return next(
        (o for o in (design or {}).get("output_specifications", []) if o.get("file") == file),
        None,
    )


def of_file(design: dict | None, file: str, columns) -> dict[str, str]:
    """column -> meaning for the columns of one output file: the design's
    `column_meanings` where it gives them, else the documented names."""
    spec = _spec(design, file)
    declared = (spec or {}).get("column_meanings") or {}
    if declared:
        return {c: m for c, m in declared.items() if c in columns}
    return by_convention(columns)


def declared(design: dict | None, file: str) -> bool:
    """Whether the design states the meanings of this file's columns."""
    return bool((_spec(design, file) or {}).get("column_meanings"))


def with_meaning(meanings: dict[str, str], *wanted: str) -> list[str]:
    """The columns with one of the wanted meanings, in column order."""
    return [c for c, m in meanings.items() if m in wanted]


def ratio_outputs(design: dict | None) -> bool:
    """Whether any output is a transmittance or reflectance (needs a normalisation run)."""
    for spec in (design or {}).get("output_specifications", []):
        cols = spec.get("columns", [])
        found = of_file(design, spec.get("file", ""), cols)
        if with_meaning(found, "transmittance", "reflectance"):
            return True
    return False
