"""Physical quantities and units of a paper's axes, and conversion between them.

A paper states its axes in its own units (wavelength in nm or µm, frequency in THz,
photon energy in eV, angle in degrees); code converts, never an agent. Wavelength,
frequency, photon energy and wavenumber convert into each other through c and h.
"""

from __future__ import annotations

import math
import re

C_M_PER_S = 299_792_458.0
H_EV_S = 4.135_667_696e-15  # Planck's constant in eV·s

# quantity -> {unit: factor to the quantity's base unit}
UNITS: dict[str, dict[str, float]] = {
    "wavelength": {"nm": 1e-9, "um": 1e-6, "µm": 1e-6, "micron": 1e-6, "mm": 1e-3, "m": 1.0},
    "length": {"nm": 1e-9, "um": 1e-6, "µm": 1e-6, "micron": 1e-6, "mm": 1e-3, "m": 1.0},
    "frequency": {"Hz": 1.0, "GHz": 1e9, "THz": 1e12, "PHz": 1e15, "rad/fs": 1e15 / (2 * math.pi)},
    "energy": {"eV": 1.0, "meV": 1e-3},
    "wavenumber": {"cm^-1": 100.0, "cm-1": 100.0, "um^-1": 1e6, "m^-1": 1.0},
    "angle": {"deg": math.pi / 180, "rad": 1.0},
    "time": {"fs": 1e-15, "ps": 1e-12, "ns": 1e-9, "s": 1.0},
    "dimensionless": {"1": 1.0, "%": 0.01},
}
# A free parameter (number of layers, a fill factor, a thickness in the paper's own
# unit): any unit string, converted only to itself.
FREE = "parameter"
QUANTITIES = (*UNITS, FREE)
PHOTON = ("wavelength", "frequency", "energy", "wavenumber")
# Meep's own frequency unit c/a depends on the simulation's length unit: same unit only.
MEEP_UNITS = {"c/a", "meep"}


class UnitError(ValueError):
    """A unit that is not one of its quantity's, or a conversion that has no meaning."""


def valid_units(quantity: str) -> list[str]:
    return sorted(UNITS.get(quantity, {}))


def check_unit(quantity: str, unit: str) -> str | None:
    """None when `unit` is a unit of `quantity`, else what would be valid."""
    if quantity == FREE or unit in UNITS.get(quantity, {}):
        return None
    if quantity == "frequency" and unit in MEEP_UNITS:
        return None
    return f"'{unit}' is not a unit of {quantity}; valid: {', '.join(valid_units(quantity))}"


def _photon_hz(value: float, quantity: str, unit: str) -> float:
    si = value * UNITS[quantity][unit]
    if quantity == "frequency":
        return si
    if quantity == "energy":
        return si / H_EV_S
    if quantity == "wavelength":
        return C_M_PER_S / si
    return C_M_PER_S * si  # wavenumber in 1/m


def _from_hz(hz: float, quantity: str, unit: str) -> float:
    if quantity == "frequency":
        si = hz
    elif quantity == "energy":
        si = hz * H_EV_S
    elif quantity == "wavelength":
        si = C_M_PER_S / hz
    else:
        si = hz / C_M_PER_S
    return si / UNITS[quantity][unit]


def converter(src: tuple[str, str], dst: tuple[str, str]):
    """A function value -> value from (quantity, unit) `src` to `dst`; UnitError when
    the two cannot be converted (a free parameter into another unit, angle to length)."""
    (sq, su), (dq, du) = src, dst
    for q, u in (src, dst):
        problem = check_unit(q, u)
        if problem:
            raise UnitError(problem)
    if (sq, su) == (dq, du) or (sq == dq and su == du):
        return lambda v: v
    if su in MEEP_UNITS or du in MEEP_UNITS or FREE in (sq, dq):
        raise UnitError(f"{sq} in '{su}' cannot be converted to {dq} in '{du}'")
    if sq == dq or {sq, dq} == {"wavelength", "length"}:
        factor = UNITS[sq][su] / UNITS[dq][du]
        return lambda v: v * factor
    if sq in PHOTON and dq in PHOTON:

        def photon(v: float) -> float:
            if v == 0:
                raise UnitError(f"{sq} 0 {su} has no {dq}")
            return _from_hz(_photon_hz(v, sq, su), dq, du)

        return photon
    raise UnitError(f"{sq} cannot be converted to {dq}")


def convert(values: list[float], src: tuple[str, str], dst: tuple[str, str]) -> list[float]:
    fn = converter(src, dst)
    return [fn(v) for v in values]


# Column headers: `wavelength_nm`, `wavelength (nm)`, `wavelength [nm]`, `T [%]`.
_BRACKETED = re.compile(r"^\s*(?P<name>.*?)\s*[\[(]\s*(?P<unit>[^\])]+?)\s*[\])]\s*$")
_ALIASES = {"lambda": "wavelength", "wl": "wavelength", "freq": "frequency", "f": "frequency"}
_ALIASES |= {"e": "energy", "energy": "energy", "theta": "angle", "angle": "angle"}
_ALIASES |= {"z": "length", "position": "length"}  # field maps: `z_um`, `position_nm`


def split_header(header: str) -> tuple[str, str | None]:
    """(name, unit or None) of a CSV column header."""
    m = _BRACKETED.match(header)
    if m:
        return m["name"], m["unit"]
    if "_" in header:
        name, _, unit = header.rpartition("_")
        if any(unit.lower() == u.lower() for units in UNITS.values() for u in units):
            return name, canonical_unit(unit)
    return header.strip(), None


def canonical_unit(unit: str) -> str:
    """The table's spelling of a unit written in any case (`thz` -> `THz`, `ev` -> `eV`)."""
    for units in UNITS.values():
        for u in units:
            if u.lower() == unit.lower():
                return u
    return unit


def column_quantity(header: str) -> tuple[str, str] | None:
    """(quantity, unit) a simulation's column name implies (`wavelength_um`,
    `frequency_THz`, `energy_eV`), or None when it names no convertible unit."""
    name, unit = split_header(header)
    if unit is None:
        return None
    key = name.lower().split("_")[0]
    quantity = _ALIASES.get(key, key if key in UNITS else None)
    if quantity is None or check_unit(quantity, canonical_unit(unit)):
        return None
    return quantity, canonical_unit(unit)
