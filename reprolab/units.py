"""Physical quantities and units of a paper's axes, and conversion between them.

A paper states its axes in its own units (wavelength in nm or µm, frequency in THz,
photon energy in eV, angle in degrees); code converts, never an agent. Wavelength,
frequency, photon energy and wavenumber convert into each other through c and h.

Normalized units scale with the lattice constant a (frequency in c/a = a/λ, lengths in
a, wavevectors in 2π/a): they convert among themselves freely, and to SI units only
with the paper's length a (metadata `unit_length`).
"""

from __future__ import annotations

import math
import re

C_M_PER_S = 299_792_458.0
H_EV_S = 4.135_667_696e-15  # Planck's constant in eV·s
TWO_PI = 2 * math.pi

# The frequency unit of normalized papers and of Meep: ωa/2πc = a/λ = f in c/a.
NORMALIZED_FREQUENCY = ("c/a", "a/lambda", "a/λ", "ωa/2πc", "meep")
# quantity -> {unit: factor to the quantity's base unit (SI, or SI per power of a)}
UNITS: dict[str, dict[str, float]] = {
    "wavelength": {
        **{"nm": 1e-9, "um": 1e-6, "µm": 1e-6, "micron": 1e-6, "mm": 1e-3, "m": 1.0},
        "a": 1.0,
    },
    "length": {
        **{"nm": 1e-9, "um": 1e-6, "µm": 1e-6, "micron": 1e-6, "mm": 1e-3, "m": 1.0},
        "a": 1.0,
    },
    "frequency": {
        **{"Hz": 1.0, "GHz": 1e9, "THz": 1e12, "PHz": 1e15, "rad/fs": 1e15 / TWO_PI},
        **dict.fromkeys(NORMALIZED_FREQUENCY, C_M_PER_S),
    },
    "energy": {"eV": 1.0, "meV": 1e-3},
    "wavenumber": {"cm^-1": 100.0, "cm-1": 100.0, "um^-1": 1e6, "m^-1": 1.0},
    "angle": {"deg": math.pi / 180, "rad": 1.0},
    "time": {"fs": 1e-15, "ps": 1e-12, "ns": 1e-9, "s": 1.0},
    "dimensionless": {"1": 1.0, "%": 0.01},
    # A Bloch wavevector (radians per metre): Meep's k_point is in 2π/a.
    "wavevector": {"2pi/a": TWO_PI, "2π/a": TWO_PI, "1/um": 1e6, "1/nm": 1e9, "1/m": 1.0},
    "quality_factor": {"1": 1.0},
    # The position along a band diagram's k path: symmetry points at 0, 1, 2, ...
    "k_path": {"1": 1.0},
    # A length over the wavelength (a cavity length, an emitter's distance to a mirror):
    # a number of wavelengths, converted only to itself.
    "length_ratio": {"L/λ": 1.0, "L/lambda": 1.0, "1": 1.0},
    # A scatterer's size parameter x = 2πr/λ: photon quantities through its radius r
    # (size_parameter_converter).
    "size_parameter": {"1": 1.0},
}
# The power of a each normalized unit carries (SI value = number * factor * a**power).
PER_A: dict[str, int] = {**dict.fromkeys(NORMALIZED_FREQUENCY, -1), "2pi/a": -1, "2π/a": -1}
PER_A["a"] = 1
# A free parameter (number of layers, a fill factor, a thickness in the paper's own
# unit): any unit string, converted only to itself.
FREE = "parameter"
QUANTITIES = (*UNITS, FREE)
PHOTON = ("wavelength", "frequency", "energy", "wavenumber")
# Kept for readers of the first format: Meep's frequency units.
MEEP_UNITS = {"c/a", "meep"}
UNIT_LENGTH_HINT = "state the paper's length a as `unit_length: {value: 500, unit: nm}`"


def photon_quantity(unit: str) -> str | None:
    """The photon quantity (wavelength, frequency, energy, wavenumber) `unit` measures,
    or None (a unit of two, `a`, is a wavelength's)."""
    return next((q for q in PHOTON if unit in UNITS[q]), None)


class UnitError(ValueError):
    """A unit that is not one of its quantity's, or a conversion that has no meaning."""


def valid_units(quantity: str) -> list[str]:
    return sorted(UNITS.get(quantity, {}))


def check_unit(quantity: str, unit: str) -> str | None:
    """None when `unit` is a unit of `quantity`, else what would be valid."""
    if quantity == FREE or unit in UNITS.get(quantity, {}):
        return None
    return f"'{unit}' is not a unit of {quantity}; valid: {', '.join(valid_units(quantity))}"


def same_unit(quantity: str, a: str, b: str) -> bool:
    """`a` and `b` are one unit of `quantity` (two spellings: `um` and `µm`, `c/a` and
    `a/λ`)."""
    known = UNITS.get(quantity, {})
    if a == b:
        return True
    return a in known and b in known and (known[a], PER_A.get(a)) == (known[b], PER_A.get(b))


def normalized(unit: str) -> bool:
    """The unit scales with the lattice constant a (c/a, a, 2π/a)."""
    return unit in PER_A


def _si_factor(quantity: str, unit: str, a_m: float) -> float:
    return UNITS[quantity][unit] * a_m ** PER_A.get(unit, 0)


def _photon_hz(si: float, quantity: str) -> float:
    if quantity == "frequency":
        return si
    if quantity == "energy":
        return si / H_EV_S
    if quantity == "wavelength":
        return C_M_PER_S / si
    return C_M_PER_S * si  # wavenumber in 1/m


def _from_hz(hz: float, quantity: str) -> float:
    if quantity == "frequency":
        return hz
    if quantity == "energy":
        return hz * H_EV_S
    if quantity == "wavelength":
        return C_M_PER_S / hz
    return hz / C_M_PER_S


def converter(src: tuple[str, str], dst: tuple[str, str], unit_length_m: float | None = None):
    """A function value -> value from (quantity, unit) `src` to `dst`; UnitError when
    the two cannot be converted (a free parameter into another unit, angle to length,
    c/a to THz without the paper's length a, `unit_length_m` in metres)."""
    (sq, su), (dq, du) = src, dst
    for q, u in (src, dst):
        problem = check_unit(q, u)
        if problem:
            raise UnitError(problem)
    if (sq, su) == (dq, du):
        return lambda v: v
    if FREE in (sq, dq):
        raise UnitError(f"{sq} in '{su}' cannot be converted to {dq} in '{du}'")
    same = sq == dq or {sq, dq} == {"wavelength", "length"}
    if not same and not (sq in PHOTON and dq in PHOTON):
        raise UnitError(f"{sq} cannot be converted to {dq}")
    a_m = unit_length_m
    if normalized(su) != normalized(du) and a_m is None:
        raise UnitError(
            f"{sq} in '{su}' converts to {dq} in '{du}' only with the paper's length a "
            f"(metadata field 'unit_length'): {UNIT_LENGTH_HINT}"
        )
    # Both normalized: any a gives the same number, since both scale with it alike.
    a_m = 1.0 if a_m is None else a_m
    fs, fd = _si_factor(sq, su, a_m), _si_factor(dq, du, a_m)
    if same:
        factor = fs / fd
        return lambda v: v * factor

    def photon(v: float) -> float:
        if v == 0:
            raise UnitError(f"{sq} 0 {su} has no {dq}")
        return _from_hz(_photon_hz(v * fs, sq), dq) / fd

    return photon


def convert(
    values: list[float],
    src: tuple[str, str],
    dst: tuple[str, str],
    unit_length_m: float | None = None,
) -> list[float]:
    fn = converter(src, dst, unit_length_m)
    return [fn(v) for v in values]


# Column headers: `wavelength_nm`, `wavelength (nm)`, `wavelength [nm]`, `T [%]`.
_BRACKETED = re.compile(r"^\s*(?P<name>.*?)\s*[\[(]\s*(?P<unit>[^\])]+?)\s*[\])]\s*$")
_ALIASES = {"lambda": "wavelength", "wl": "wavelength", "freq": "frequency", "f": "frequency"}
_ALIASES |= {"e": "energy", "energy": "energy", "theta": "angle", "angle": "angle"}
_ALIASES |= {"z": "length", "position": "length"}  # field maps: `z_um`, `position_nm`
_ALIASES |= {"k": "wavevector", "wavevector": "wavevector", "q": "quality_factor"}
_ALIASES |= {"l/λ": "length_ratio", "l/lambda": "length_ratio"}


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


# Words a researcher writes for "no unit" in a column header.
UNIT_WORDS = {"dimensionless": "1", "unitless": "1", "-": "1"}


def column_unit(header: str, quantity: str) -> tuple[str, str] | None:
    """The (quantity, unit) a CSV column header states for an axis of `quantity`, or
    None when it states none (the column is in the axis's unit). A unit is read only
    from a `_unit` suffix or a trailing bracketed unit: `T [%]`, `R [dimensionless]`,
    `wavelength (nm)` (converted to a photon axis). A bracket that holds no unit is part
    of the name (`Re(epsilon)`, `Q_sca = C_sca/(2r)`). UnitError: the header states a
    unit the axis cannot take (`wavelength [furlong]`, `T [m]`)."""
    name, unit = split_header(header)
    if unit is None or header.strip() in ("x", "y"):
        return None
    unit = UNIT_WORDS.get(unit.strip().lower(), canonical_unit(unit))
    parsed = column_quantity(header)
    if parsed:
        return parsed
    if quantity == FREE or check_unit(quantity, unit) is None:
        return quantity, unit
    known = any(unit in us for us in UNITS.values())
    key = name.strip().lower()
    names_quantity = re.fullmatch(r"[a-z0-9_]+", key) and key.split("_")[0] in (
        *_ALIASES,
        *UNITS,
    )
    if known or names_quantity:
        raise UnitError(
            f"states unit '{unit}', not a unit of the axis quantity {quantity}; "
            f"valid: {', '.join(valid_units(quantity))}"
        )
    return None


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


# A sphere's (or cylinder's) size parameter x = 2πr/λ, λ the vacuum wavelength.
SIZE_PARAMETER = "size_parameter"
RADIUS_HINT = "state the scatterer's radius as `scatterer_radius: {value: 0.5, unit: um}`"


def size_parameter_converter(
    src: tuple[str, str],
    dst: tuple[str, str],
    radius_m: float | None,
    unit_length_m: float | None = None,
):
    """A function value -> value between a size parameter x = 2πr/λ and a photon
    quantity (wavelength, frequency, energy, wavenumber) through the scatterer's radius
    `radius_m` (metres): λ = 2πr/x. UnitError without a radius, for a quantity that is
    not a photon one, or for x <= 0 (no wavelength)."""
    (sq, su), (dq, du) = src, dst
    for q, u in (src, dst):
        problem = check_unit(q, u)
        if problem:
            raise UnitError(problem)
    if sq == dq:
        return converter(src, dst, unit_length_m)
    other = dq if sq == SIZE_PARAMETER else sq
    if SIZE_PARAMETER not in (sq, dq) or other not in PHOTON:
        raise UnitError(f"{sq} cannot be converted to {dq}")
    if not radius_m or radius_m <= 0:
        raise UnitError(
            f"{sq} in '{su}' converts to {dq} in '{du}' only with the scatterer's radius "
            f"(metadata field 'scatterer_radius'): {RADIUS_HINT}"
        )
    metres = ("wavelength", "m")
    if sq == SIZE_PARAMETER:
        to_dst = converter(metres, dst, unit_length_m)
        return lambda v: to_dst(TWO_PI * radius_m / _positive(v, "size parameter"))
    to_m = converter(src, metres, unit_length_m)
    return lambda v: TWO_PI * radius_m / _positive(to_m(v), f"{sq} in '{su}'")


def _positive(value: float, what: str) -> float:
    if not value > 0:
        raise UnitError(f"{what} {value:g} has no size parameter (x = 2πr/λ needs x, λ > 0)")
    return value


def convert_with_radius(
    values: list[float],
    src: tuple[str, str],
    dst: tuple[str, str],
    unit_length_m: float | None = None,
    radius_m: float | None = None,
) -> list[float]:
    """`convert`, and between a size parameter and a photon quantity through the
    scatterer's radius `radius_m` (size_parameter_converter)."""
    if SIZE_PARAMETER not in (src[0], dst[0]):
        return convert(values, src, dst, unit_length_m)
    fn = size_parameter_converter(src, dst, radius_m, unit_length_m)
    return [fn(v) for v in values]
