"""What an output column's name says about its unit: a wavelength (`wavelength`,
`lambda`, `wl`; `_nm` for nanometres, else micrometres) or a frequency (`freq`, in c/a).

A ratio to a wavelength (`L_over_lambda`, `d_per_wl`, `r/lambda`) is dimensionless, not
a wavelength: reading it as one would invert a length ratio into a frequency.
"""

from __future__ import annotations

import math
import re

_WAVELENGTH = ("wavelength", "lambda", "wl")
_RATIO = re.compile(r"(over|per|/|_by_|_to_)_?(wavelength|lambda|wl)")


def is_wavelength(column: str) -> bool:
    name = column.lower()
    return any(k in name for k in _WAVELENGTH) and not _RATIO.search(name)


def is_frequency(column: str) -> bool:
    name = column.lower()
    return "freq" in name and "thz" not in name


def frequencies(column: str, values: list[float], unit_length_um: float) -> list[float] | None:
    """Frequencies (c/a) of a wavelength or frequency column, one per value (NaN for a
    wavelength that is not positive), else None when the name gives no unit."""
    if is_wavelength(column):
        scale = 1e-3 if "nm" in column.lower() else 1.0
        return [unit_length_um / (v * scale) if v > 0 else math.nan for v in values]
    if is_frequency(column):
        return list(values)
    return None
