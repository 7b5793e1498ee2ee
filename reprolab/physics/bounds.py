"""Physics bounds from an independent estimate: what the run-time record says a cross
section's constant and a closed box's balance must be, whatever the script computed.

- `bound:cross_section_normalisation:<file>:<column>`: a cross section or efficiency
  column (the design's `column_meanings`, else its documented name) of a spectrum is
  one constant times a combination of flux spectra of the scattering run (each monitor
  +1, -1 or unused: a box read as one flux object or face by face). The record gives
  that constant independently: the incident intensity is the empty run's flux through
  its plane monitor over the monitor's length (2D) or area (3D), the geometric cross
  section is the as-built scatterer's (2D: a cylinder's diameter 2r, a block's width
  across the incidence; 3D: a sphere's πr², a block's projected area). A cross section
  is P / I (in the design's units when its name says `_um` or `_nm`), an efficiency
  P / (I G). Off by more than `thresholds.NORMALISATION_BOUND` fails, naming the
  factor ("×2.00: normalised by r, not 2r?"). A column no combination reproduces (within
  `thresholds.NORMALISATION_FIT`) warns: the bound could not be derived.
- `bound:closed_box_balance`: where every material is lossless and a scattering run
  reads two flux objects over the same closed box around the scatterer (the scattered
  fields and the total fields), the total fields' net flux is zero: its size relative
  to the scattered flux above `thresholds.CLOSED_BOX_BALANCE` fails.

A sweep (one record per point) and cylindrical coordinates are not judged here.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np

from reprolab import run_files
from reprolab.errors import InputFileError
from reprolab.physics import meanings as pm
from reprolab.physics import thresholds as th
from reprolab.physics.check import Check
from reprolab.physics.column_names import frequencies as reported_frequencies
from reprolab.physics.record_checks import load_record, lossless
from reprolab.physics.record_store import record_home
from reprolab.physics.trace import simulates

MAX_MONITORS = 10  # 3^10 sign patterns of one run's flux spectra
NEGLIGIBLE = 1e-2  # frequencies where the scattered flux is under this of its largest
# Factors a wrong normalisation typically leaves, with what most likely caused them.
_HINTS = (
    (2.0, "normalised by r, not 2r?"),
    (0.5, "normalised by 2r where r was meant, or the intensity counted twice?"),
    (math.pi, "normalised by r², not πr²?"),
    (1 / math.pi, "normalised by πr² where a length was meant?"),
    (4.0, "normalised by r², not (2r)²?"),
    (0.25, "normalised by (2r)² where r² was meant?"),
)


def bound_checks(workdir: Path, design: dict | None) -> list[Check]:
    """The bounds of one run's outputs against its record (see the module's doc)."""
    workdir = Path(workdir)
    if not simulates(design) or any(record_home(workdir).glob("points/*")):
        return []
    sims = [s for s in load_record(workdir) if not s.get("cylindrical")]
    if not sims:
        return []
    out = []
    for spec in design.get("output_specifications", []):
        name = spec.get("file", "")
        path = workdir / name
        if not name.endswith(".csv") or path.is_symlink() or not path.is_file():
            continue
        try:
            cols = _read_csv(path)
        except (OSError, ValueError, InputFileError):
            continue  # parse:<file> or unsafe_file:<file> already fails it
        found = pm.of_file(design, name, list(cols))
        xs_cols = pm.with_meaning(found, *pm.CROSS_SECTIONS)
        freqs = _row_freqs(cols, design)
        if xs_cols and freqs is not None:
            out += [_guarded(name, c, freqs, cols[c], sims, design) for c in xs_cols]
    try:
        if lossless(sims):
            out += [c for c in (_closed_box(s) for s in sims if s.get("geometry")) if c]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        out.append(Check("bound:closed_box_balance", "warn", f"record incomplete: {exc!r}"))
    return out


def _guarded(file: str, column: str, freqs, ys, sims, design) -> Check:
    """The normalisation bound; a record missing a field warns, naming it."""
    try:
        return _normalisation(file, column, freqs, ys, sims, design)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return Check(
            f"bound:cross_section_normalisation:{file}:{column}",
            "warn",
            f"the record lacks what the bound needs ({type(exc).__name__}: {exc}): "
            "a run's cell, dimensions, monitors, sources or geometry",
        )


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    rows = run_files.read_run_csv(path.parent, path.name)  # no link, within the caps
    header = [h.strip() for h in rows[0]]
    body = np.array([[float(v) for v in r[: len(header)]] for r in rows[1:]], dtype=float)
    return {h: body[:, i] for i, h in enumerate(header)} if len(body) else {}


def _row_freqs(cols: dict, design: dict) -> np.ndarray | None:
    """The rows' frequencies (c/a) from the first wavelength or frequency column."""
    unit = design.get("unit_length_um", 1.0)
    for name, values in cols.items():
        freqs = reported_frequencies(name, list(values), unit)
        if freqs is not None:
            return np.array(freqs, dtype=float)
    return None


def _extent(region: dict, cell: list, dims: int) -> float | None:
    """A plane monitor's length (2D) or area (3D), clipped to the cell; else None."""
    sizes = [
        min(abs(s or 0.0), abs(c or 0.0) or math.inf)
        for s, c in zip(region["size"], cell, strict=False)
    ]
    spans = [s for s in sizes[:dims] if s > 0]
    return math.prod(spans) if len(spans) == dims - 1 else None


def incident(sims: list[dict]) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(frequencies, intensity, where from): the flux through a plane monitor of a run
    with no geometry over its size; of several, the one with the largest intensity
    (a plane across the beam, not one along it)."""
    best = None
    for s in sims:
        if s.get("geometry"):
            continue
        for m in s.get("measured", []):
            mons = s.get("monitors", [])
            if m["kind"] != "flux" or not m.get("freqs") or m["monitor"] >= len(mons):
                continue
            regions = mons[m["monitor"]].get("regions", [])
            size = _extent(regions[0], s["cell"], s["dimensions"]) if len(regions) == 1 else None
            if not size:
                continue
            inten = np.abs(_arr(m["values"])) / size
            if best is None or np.nanmedian(inten) > np.nanmedian(best[1]):
                where = f"flux through monitor {m['monitor']} of run {s['index']} / {size:.4g}"
                best = (_arr(m["freqs"]), inten, where)
    return best


def _powers(s: dict, freqs: np.ndarray) -> list[tuple[list[int], np.ndarray]]:
    """Per reading time of one run: (monitors, their flux spectra) on `freqs`."""
    by_time: dict = {}
    for m in s.get("measured", []):
        f = _arr(m.get("freqs") or [])
        if m["kind"] == "flux" and len(f) == len(freqs) and np.allclose(f, freqs, rtol=1e-9):
            by_time.setdefault(m.get("sim_time"), {})[m["monitor"]] = _arr(m["values"])
    out = []
    for spectra in by_time.values():
        mons = sorted(spectra)[:MAX_MONITORS]
        out.append((mons, np.array([spectra[k] for k in mons])))
    return out


def fit(y: np.ndarray, spectra: np.ndarray) -> tuple[float, float, tuple[int, ...]]:
    """(relative residual, constant c, signs) of y = c · Σ signs_k spectra_k, the best of
    every pattern of +1, -1 and 0 (its first non-zero sign +1); ranked through the Gram
    matrix (memory per pattern, not per row), the best one's residual computed exactly."""
    n = len(spectra)
    pats = np.array([p for p in itertools.product((0, 1, -1), repeat=n) if _first_plus(p)])
    a = pats @ (spectra @ y)
    b = np.einsum("ij,ij->i", pats @ (spectra @ spectra.T), pats)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(b > 0, float(y @ y) - a * a / b, np.inf)
    i = int(np.argmin(np.where(np.isfinite(left), left, np.inf)))
    comb = pats[i] @ spectra
    c = float(a[i] / b[i]) if b[i] > 0 else 0.0
    res = float(np.linalg.norm(y - c * comb) / np.linalg.norm(y))
    return res, c, tuple(int(v) for v in pats[i])


def _first_plus(p) -> bool:
    nz = [v for v in p if v]
    return bool(nz) and nz[0] == 1


def _normalisation(file: str, column: str, freqs, ys, sims, design) -> Check:
    name = f"bound:cross_section_normalisation:{file}:{column}"
    threshold = (
        f"|constant / derived - 1| <= {th.NORMALISATION_BOUND.fail:g} (warn "
        f"{th.NORMALISATION_BOUND.warn:g}); derived: incident intensity from the empty "
        "run's plane monitor, geometric cross section from the as-built scatterer"
    )
    inc = incident(sims)
    if inc is None:
        return Check(
            name,
            "warn",
            "no run without geometry read a plane flux monitor: the "
            "incident intensity, hence the constant, cannot be derived",
            None,
            threshold,
        )
    best = _best_fit(freqs, ys, inc, sims)
    if best is None or best[0] > th.NORMALISATION_FIT:
        res = "no" if best is None else f"the best ({best[0]:.2g} residual) is no"
        return Check(
            name,
            "warn",
            f"{res} combination of the scattering run's flux spectra "
            f"over the incident intensity reproduces {column}: the constant cannot "
            "be judged",
            None,
            threshold,
        )
    res, c, signs, mons, sim = best
    expected = _expected(column, sim, design)
    if not expected:
        return Check(
            name,
            "warn",
            f"{column} = {c:.4g} × P / I, but the scatterer's geometric "
            "cross section cannot be derived from the record (several objects, "
            "or an unknown incidence)",
            None,
            threshold,
        )
    what, want = min(expected, key=lambda e: abs(math.log(c / e[1])))
    factor = c / want
    dev = abs(factor - 1)
    lim = th.NORMALISATION_BOUND
    status = "fail" if dev > lim.fail else "warn" if dev > lim.warn else "pass"
    used = " ".join(f"{'+' if s > 0 else '-'}m{k}" for s, k in zip(signs, mons, strict=True) if s)
    detail = (
        f"{column} = {c:.4g} × P / I, P = {used} of run {sim['index']} (residual {res:.2g}), "
        f"I = {inc[2]}; {what} needs {want:.4g}: ×{factor:.2f}"
    )
    if status == "fail":
        detail += ": " + _hint(factor)
    return Check(name, status, detail, round(factor, 4), threshold)


def _best_fit(freqs, ys, inc, sims):
    """The best (residual, c, signs, monitors, run) of every scattering run's readings."""
    f_inc, inten, _ = inc
    order = np.argsort(f_inc)
    inside = (freqs >= f_inc[order][0] * (1 - 1e-5)) & (freqs <= f_inc[order][-1] * (1 + 1e-5))
    if inside.sum() < 3 or not np.any(np.abs(ys[inside]) > 0):
        return None
    rows, y = freqs[inside], ys[inside]
    best = None
    for s in sims:
        if not s.get("geometry"):
            continue
        for mons, spectra in _powers(s, f_inc):
            sigma = np.array([np.interp(rows, f_inc[order], (v / inten)[order]) for v in spectra])
            if not np.all(np.isfinite(sigma)):
                continue
            res, c, signs = fit(y, sigma)
            if c and (best is None or res < best[0]):
                signs = signs if c > 0 else tuple(-v for v in signs)
                best = (res, abs(c), signs, mons, s)
    return best


def _expected(column: str, sim: dict, design: dict) -> list[tuple[str, float]]:
    """(what, constant) a cross section or an efficiency named `column` must have."""
    dims = sim["dimensions"]
    unit = design.get("unit_length_um", 1.0)
    low = column.lower()
    scale = (
        (1000 * unit) ** (dims - 1) if "_nm" in low else unit ** (dims - 1) if "_um" in low else 1
    )
    cross = [("a cross section P / I", float(scale))]
    g = geometric_cross_section(sim)
    eff = [(f"an efficiency P / (I G), G = {g[1]} = {g[0]:.4g}", 1 / g[0])] if g else []
    if re.match(r"q_", low) or "eff" in low:
        return eff
    if re.match(r"(sigma|c)_", low) or "cross" in low:
        return cross
    return cross + eff


def geometric_cross_section(sim: dict) -> tuple[float, str] | None:
    """(G, how) of the run's scatterer: one object, or concentric ones (the largest)."""
    objs = sim.get("geometry") or []
    if not objs or any(o["center"] != objs[0]["center"] for o in objs):
        return None
    dims, axis = sim["dimensions"], _incidence(sim)
    sizes = []
    for o in objs:
        r, kind = o.get("radius"), o["kind"]
        if kind in ("Cylinder", "Sphere") and r and (dims == 2 or kind == "Sphere"):
            sizes.append((2 * r, "2r") if dims == 2 else (math.pi * r * r, "πr²"))
        elif kind == "Cylinder" and r and axis is not None:
            h = o.get("height") or math.inf
            sizes.append((math.pi * r * r, "πr²") if axis == 2 else (2 * r * h, "2r h"))
        elif kind == "Block" and axis is not None:
            across = [abs(o["size"][i]) for i in range(dims) if i != axis]
            sizes.append((math.prod(across), "the block's projected size"))
        else:
            return None
    g = max(sizes)
    return g if math.isfinite(g[0]) and g[0] > 0 else None


def _incidence(sim: dict) -> int | None:
    """The axis a plane source launches along: the one it has no extent in."""
    dims = sim["dimensions"]
    for s in sim.get("sources", []):
        flat = [i for i in range(dims) if not (s["size"][i] or 0)]
        if len(flat) == 1:
            return flat[0]
    return None


def _hint(factor: float) -> str:
    for f, text in _HINTS:
        if abs(factor / f - 1) <= th.NORMALISATION_BOUND.fail:
            return text
    return "the incident intensity or the geometric cross section differs from the record's"


def _closed_box(sim: dict) -> Check | None:
    """The total fields' net flux through a closed box around a lossless scatterer."""
    boxes: dict = {}
    for k, mon in enumerate(sim.get("monitors", [])):
        if mon.get("kind") == "flux" and _encloses(mon.get("regions", []), sim):
            key = tuple(
                sorted(
                    tuple(round(v or 0.0, 6) for v in r["center"] + r["size"])
                    for r in mon["regions"]
                )
            )
            boxes.setdefault(key, set()).add(k)
    worst = None
    for mons in boxes.values():
        for have, spectra in _powers(sim, _any_freqs(sim)):
            rows = [spectra[have.index(k)] for k in sorted(mons) if k in have]
            if len(rows) < 2:
                continue
            mags = np.abs(np.array(rows))
            sca, net = mags.max(axis=0), mags.min(axis=0)
            keep = sca >= NEGLIGIBLE * sca.max()
            ratio = float(np.max(net[keep] / sca[keep])) if keep.any() else 0.0
            worst = ratio if worst is None else max(worst, ratio)
    if worst is None:
        return None
    lim = th.CLOSED_BOX_BALANCE
    status = "fail" if worst > lim.fail else "warn" if worst > lim.warn else "pass"
    return Check(
        "bound:closed_box_balance",
        status,
        f"lossless scatterer of run {sim['index']}: |net flux of the total fields| / "
        f"scattered flux through the same closed box reaches {worst:.2g}"
        + ("" if status == "pass" else ": power appears or vanishes in a lossless box"),
        worst,
        f"<= {lim.fail:g} (warn {lim.warn:g})",
    )


def _encloses(regions: list[dict], sim: dict) -> bool:
    """Plane regions that close a box (two faces per axis) around every object."""
    dims = sim["dimensions"]
    if len(regions) != 2 * dims:
        return False
    lo, hi = [], []
    for i in range(dims):
        faces = sorted(r["center"][i] for r in regions if not (r["size"][i] or 0))
        if len(faces) != 2:
            return False
        lo.append(faces[0])
        hi.append(faces[1])
    return all(
        lo[i] < (o["center"][i] or 0.0) < hi[i] for o in sim["geometry"] for i in range(dims)
    )


def _any_freqs(sim: dict) -> np.ndarray:
    return next(
        (_arr(m["freqs"]) for m in sim.get("measured", []) if m["kind"] == "flux"),
        np.array([]),
    )


def _arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)
