"""Outputs traced to what Meep measured: each figure output against the monitors' values.

The run-time record holds what every monitor measured as the script read it
(`reprolab.physics.as_measured`: flux spectra, mode coefficients, DFT field digests,
LDOS, far-field |F|^2 at each point asked, and the Harminv modes of each run). A
figure output (the design's `figure_outputs`) is traceable when every value it reports
is one of those numbers or follows from them as a normalised spectrum does:

- a spectrum (x a wavelength or a frequency, `column_names`): at each
  row's frequency the value is a measured spectrum F, a ratio ±F_a/F_b of two spectra
  on the same frequencies (T = flux / incident through the normalisation run, R from
  a subtracted reflected flux), 1 − r_1 − r_2 of two such ratios over the same
  spectrum (A = 1 − R − T), the outward flux of a closed box of single-face monitors
  read at one time (each face signed outward, whether by a FluxRegion weight of -1 or
  in Python; several boxes on the same faces, the scattered and the total fields, each
  its own), else the net flux of all monitors of one simulation read at one time, or
  one of these times a single constant over the whole curve (cross sections: flux
  over the incident intensity); between two monitored frequencies it may lie anywhere
  between the values at both;
- any other x (a sweep's parameter, a mode's index): each value is one of those
  numbers at any monitored frequency, of the same point's record for a sweep, or a
  Harminv mode's frequency, Q or decay; a wavelength or frequency column may also be
  the frequency of a spectrum's highest or lowest value (a peak wavelength against a
  swept radius), at the sample or at the vertex of the parabola through its
  neighbours;
- a value zero to machine precision against the output's largest (under
  MACHINE_ZERO of it: a pattern's null) matches whatever formula made it, while the
  rest of the output must still trace;
- a field map (HDF5): each row at a DFT monitor's frequency is |F|^2 or the ratio of
  two |F|^2 of that frequency, on the recorded digest's stride, up to a constant per row
  (a normalisation by that frequency's incident intensity); or the whole map is one 2D
  field's |F|^2 up to a constant.

A value matches within the precision it is written with (half a unit in its last
written digit) plus a relative 1e-6. An output that also repeats the paper's
digitized curve (the same x values and y equal within that precision) is made up
however it matches. Either way the check `traceable:<file>:<column>` fails, its detail
beginning "output not traceable to the simulation".
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

from reprolab import run_files
from reprolab.errors import InputFileError
from reprolab.physics import column_names
from reprolab.physics.check import Check
from reprolab.physics.record_checks import load_record
from reprolab.physics.record_store import RECORD_FILE, record_home

NOT_TRACEABLE = "output not traceable to the simulation"
REL_TOL = 1e-6
GRID_REL = 1e-5  # a row's frequency on a monitored one (x printed to 6+ digits)
MAX_ROWS = 200_000
MAX_SPECTRA = 24  # per simulation set: beyond, ratios of every pair grow too many
MAX_EXTREMA_SPECTRA = 2000  # derived spectra whose peak and dip a swept output may report
# A value this small against the output's largest is zero to machine precision (a null of
# a radiation pattern, P ~ 1e-36 beside 1e-20): the sum that made it cancelled, and any
# formula of the measured values gives it; it carries nothing to trace.
MACHINE_ZERO = 1e-12


def simulates(design: dict | None) -> bool:
    """The design time-steps a simulation: the plan's word where the checks step read
    it (`plan_simulates`: not a MATERIAL_VALIDATION stage), whatever the design says;
    else not `runs_simulation: false`, and not the material validation (stage 0, the
    plan's first stage), which may evaluate the material models alone whatever its
    design's FDTD parameters say."""
    if design and design.get("plan_simulates") is not None:
        return bool(design["plan_simulates"])
    if not design or design.get("runs_simulation") is False:
        return False
    return not str(design.get("stage_id", "")).startswith("stage0_")


def record_missing_check(design: dict | None) -> Check | None:
    """A design that runs a simulation must have its record from the launcher."""
    if not simulates(design):
        return None
    return Check(
        "built:record_present",
        "fail",
        "the run left no run-time record: the launcher received nothing from the "
        "simulation's rank 0 (no meep.Simulation ran, the script bypassed meep, or the "
        "record channel was closed); what Meep built and measured cannot be checked",
        0,
        "a record from the launcher whenever the design runs a simulation",
    )


def trace_checks(workdir: Path, design: dict | None, paper: dict | None = None) -> list[Check]:
    """One `traceable:<file>:<column>` check per figure output of a simulating design;
    `paper` maps (figure_id, curve_id) to the digitized (x, y) in the output's x unit."""
    if not simulates(design):
        return []
    groups = _record_groups(Path(workdir))
    if not any(groups):
        return []  # built:record_present already fails the run
    out = []
    for fo in design.get("figure_outputs", []):
        label = f"traceable:{fo['file']}:{fo.get('dataset') or fo['y_column']}"
        try:
            if fo.get("dataset"):
                verdict = _trace_map(Path(workdir) / fo["file"], fo, groups, design)
            else:
                digitized = (paper or {}).get((fo["figure_id"], fo["curve_id"]))
                verdict = _trace_csv(Path(workdir) / fo["file"], fo, groups, design, digitized)
        except (OSError, ValueError, KeyError, IndexError, InputFileError) as exc:
            verdict = (False, f"cannot read it: {type(exc).__name__}: {exc}", 0)
        ok, detail, n = verdict
        out.append(
            Check(
                label,
                "pass" if ok else "fail",
                detail if ok else f"{NOT_TRACEABLE}: {detail}",
                n,
                "every value a measured one or a ratio/sum of measured spectra, within "
                "its written precision; never the paper's digitized curve",
            )
        )
    return out


def _record_groups(workdir: Path) -> list[list[dict]]:
    """The simulations of each point of a sweep (in point order), else of the run."""
    home = record_home(workdir)
    points = sorted(home.glob(f"points/*/{RECORD_FILE}"))
    if not points:
        sims = load_record(workdir)
        return [sims] if sims else []
    groups = []
    for path in points:
        try:
            groups.append(json.loads(path.read_text(encoding="utf-8"))["simulations"])
        except (OSError, ValueError, KeyError):
            groups.append([])
    return groups


def _spectra(sims: list[dict]) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """(frequencies, values, simulation) of every measured spectrum, and per simulation
    and reading time: the net flux of all its flux monitors (faces whose signs the
    FluxRegion weights applied) and the outward flux of each closed box its faces form
    (`box_fluxes`: signs applied however the script applied them). Boxes and sums come
    first: they are what a cross section is made of."""
    sums, raw = [], []
    for si, s in enumerate(sims):
        by_time: dict = {}
        for m in s.get("measured", []):
            if m["kind"] in ("flux", "ldos") and m.get("freqs"):
                raw.append((_arr(m["freqs"]), _arr(m["values"]), si))
                if m["kind"] == "flux":
                    by_time.setdefault(m.get("sim_time"), {})[m["monitor"]] = raw[-1][:2]
            elif m["kind"] == "mode_coefficients" and m.get("freqs"):
                a = np.asarray(m["alpha_abs2"], dtype=float)
                if a.ndim == 3 and a.shape[1] == len(m["freqs"]):
                    for b, d in itertools.product(range(a.shape[0]), range(a.shape[2])):
                        raw.append((_arr(m["freqs"]), a[b, :, d], si))
        for same in by_time.values():
            spectra = list(same.values())
            if len(spectra) > 1 and all(len(f) == len(spectra[0][0]) for f, _ in spectra):
                boxes = box_fluxes(s, same)
                sums += [(f, v, si) for f, v in boxes]
                if not boxes:  # faces whose weights signed them, in no box recognised
                    sums.append((spectra[0][0], sum(v for _, v in spectra), si))
    return (sums + raw)[:MAX_SPECTRA]


def box_fluxes(sim: dict, readings: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """The outward flux of each closed box that single-face flux monitors read at one
    time form (two faces normal to each axis; in cylindrical coordinates the axis r = 0
    closes the box's inner side): each face's reading times its outward sign over its
    FluxRegion weight's sign, so a box is the same whether the script put weight=-1 on
    its lower faces or applied the signs in Python. Several boxes on the same faces
    (the scattered and the total fields) pair their faces in the order they were added."""
    cyl = bool(sim.get("cylindrical"))
    axes = [0, 2] if cyl else list(range(int(sim.get("dimensions") or 3)))
    monitors = sim.get("monitors", [])
    planes: dict = {}  # (normal axis, the other axes' extents) -> [(position, monitor, sign)]
    for k in sorted(readings):
        regions = monitors[k].get("regions", []) if k < len(monitors) else []
        if len(regions) != 1:
            continue
        c = [regions[0]["center"][a] or 0.0 for a in axes]
        z = [regions[0]["size"][a] or 0.0 for a in axes]
        flat = [i for i, v in enumerate(z) if v == 0]
        if len(flat) != 1:
            continue
        i = flat[0]
        span = tuple(
            (round(c[j] - z[j] / 2, 6), round(c[j] + z[j] / 2, 6))
            for j in range(len(axes))
            if j != i
        )
        weight = regions[0].get("weight") or 1.0
        planes.setdefault((i, span), []).append((round(c[i], 6), k, -1.0 if weight < 0 else 1.0))
    boxes: dict = {}  # box extents -> {(axis, side): [(monitor, outward sign)]}
    for (i, span), found in planes.items():
        at = sorted({p for p, _, _ in found})
        if len(at) == 1 and cyl and i == 0 and at[0] > 0:
            at = [0.0, at[0]]  # the r face alone: the box reaches the axis
        if len(at) != 2:
            continue
        extents = list(span)
        extents.insert(i, (at[0], at[1]))
        sides = boxes.setdefault(tuple(extents), {})
        for p, k, w in found:
            side = "hi" if p == at[1] else "lo"
            sides.setdefault((i, side), []).append((k, w * (1.0 if side == "hi" else -1.0)))
    needed = [(i, side) for i in range(len(axes)) for side in ("lo", "hi")]
    if cyl:
        needed.remove((0, "lo"))
    out = []
    for sides in boxes.values():
        copies = {len(sides.get(n, [])) for n in needed}
        if len(copies) != 1 or 0 in copies:
            continue
        for copy in range(copies.pop()):
            faces = [sides[n][copy] for n in needed]
            total = sum(sign * readings[k][1] for k, sign in faces)
            out.append((readings[faces[0][0]][0], total))
    return out


def _arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _derived(spectra):
    """Measured spectra, their ratios ±a/b and 1 − r1 − r2 (on identical frequencies;
    both ratios over the same spectrum of another simulation: R and T over the incident
    run's flux)."""
    ratios = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for fa, a, _ in spectra:
            yield fa, a
        pairs = itertools.permutations(enumerate(spectra), 2)
        for (_, (fa, a, sa)), (ib, (fb, b, sb)) in pairs:
            if len(fa) == len(fb) and np.allclose(fa, fb, rtol=1e-9):
                yield fa, a / b
                yield fa, -a / b
                if sa != sb:
                    ratios += [(fa, a / b, ib), (fa, -a / b, ib)]
        for (fa, a, da), (_, b, db) in itertools.combinations(ratios, 2):
            if da == db:
                yield fa, 1 - a - b


def _precision(texts: list[str]) -> np.ndarray:
    """Half a unit in the last written digit of each value."""
    out = []
    for t in texts:
        t = t.strip().lower()
        mant, _, exp = t.partition("e")
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        try:
            e = int(exp) if exp else 0
        except ValueError:
            e = 0
        out.append(0.5 * 10.0 ** (e - decimals))
    return np.array(out)


def _read_columns(path: Path, x: str, y: str):
    """x, y, y's written precision and x's relative one, of a CSV output (a regular file,
    bounded rows)."""
    rows = run_files.read_run_csv(path.parent, path.name)  # no link, within the caps
    if len(rows) > MAX_ROWS + 1:
        raise ValueError(f"{path.name} has over {MAX_ROWS} rows")
    header = [h.strip() for h in rows[0]]
    ix, iy = header.index(x), header.index(y)
    body = [r for r in rows[1:] if len(r) > max(ix, iy)]
    xs = np.array([float(r[ix]) for r in body])
    ys = np.array([float(r[iy]) for r in body])
    with np.errstate(divide="ignore", invalid="ignore"):
        x_rel = np.nan_to_num(_precision([r[ix] for r in body]) / np.abs(xs), nan=0.0)
    return xs, ys, _precision([r[iy] for r in body]), float(x_rel.max(initial=0.0))


def _trace_csv(path: Path, fo: dict, groups, design: dict, digitized) -> tuple[bool, str, int]:
    xs, ys, prec, x_rel = _read_columns(path, fo["x_column"], fo["y_column"])
    if not len(ys):
        return False, f"{path.name} has no rows", 0
    tol = prec + REL_TOL * np.abs(ys)
    copied = _copied(xs, ys, tol, digitized)
    if copied:
        return False, copied, len(ys)
    freqs = column_names.frequencies(fo["x_column"], list(xs), design.get("unit_length_um", 1.0))
    if freqs is not None and len(freqs) == len(ys) and len(groups) == 1:
        grid = max(GRID_REL, 1.01 * x_rel)  # a frequency read from a rounded x
        matched, how = _spectral(np.array(freqs), ys, tol, _derived(_spectra(groups[0])), grid)
    else:
        as_freqs = column_names.frequencies(
            fo["y_column"], list(ys), design.get("unit_length_um", 1.0)
        )
        matched, how = _values(ys, tol, groups, as_freqs)
    zero = np.abs(ys) <= MACHINE_ZERO * float(np.abs(ys).max())
    if zero.any() and not zero.all() and not matched[zero].all():
        matched |= zero
        how += f"; {int(zero.sum())} zero to machine precision"
    n = int(matched.sum())
    if n == len(ys):
        return True, f"all {n} values of {fo['y_column']} traced to the monitors ({how})", n
    first = int(np.argmin(matched))
    return (
        False,
        f"{len(ys) - n} of {len(ys)} values of {fo['y_column']} in {path.name} match no "
        f"measured value nor ratio of measured spectra (first: row {first + 1}, "
        f"{fo['x_column']} = {xs[first]:.6g}, {fo['y_column']} = {ys[first]:.6g})",
        n,
    )


def _copied(xs, ys, tol, digitized) -> str | None:
    """The paper's digitized curve repeated: the same x values and y within precision."""
    if not digitized:
        return None
    xp, yp = (np.asarray(v, dtype=float) for v in digitized)
    if len(xp) != len(xs) or not len(xp):
        return None
    order, porder = np.argsort(xs), np.argsort(xp)
    if not np.allclose(xs[order], xp[porder], rtol=1e-6, atol=1e-12):
        return None
    gap = np.abs(ys[order] - yp[porder])
    if np.all(gap <= np.maximum(tol[order], 1e-4 * max(np.ptp(yp), 1e-12))):
        return (
            f"it repeats the paper's digitized curve: the same {len(xs)} x values and y "
            f"within {float(gap.max()):.2g}, closer than any simulation comes"
        )
    return None


def _spectral(freqs, ys, tol, candidates, grid: float) -> tuple[np.ndarray, str]:
    """Rows matched by the best candidate (exactly or one constant times it)."""
    best, how = np.zeros(len(ys), bool), "none"
    for fs, vs in candidates:
        lo, hi = _bracket(fs, vs, freqs, grid)
        if lo is None:
            continue
        hit = (ys >= lo - tol) & (ys <= hi + tol)
        if hit.sum() > best.sum():
            best, how = hit, "a measured spectrum or a ratio of them"
        mid = (lo + hi) / 2
        ok = np.abs(mid) > 0
        if len(ys) >= 3 and ok.sum() >= 3:
            c = float(np.median(ys[ok] / mid[ok]))
            hit = (ys >= c * np.minimum(lo, hi) - tol) & (ys <= c * np.maximum(lo, hi) + tol)
            hit |= (ys <= c * np.minimum(lo, hi) + tol) & (ys >= c * np.maximum(lo, hi) - tol)
            if hit.sum() > best.sum():
                best, how = hit, f"{c:.6g} times a measured spectrum or ratio"
        if best.all():
            break
    return best, how


def _bracket(fs, vs, freqs, grid: float):
    """Per row: the measured value where the row sits on a monitored frequency, else the
    two around it (which hold the nearest, so an x rounded in print still matches);
    `grid` is how far outside the monitored band a rounded x may fall."""
    order = np.argsort(fs)
    fs, vs = fs[order], vs[order]
    if not len(fs) or freqs.min() < fs[0] * (1 - grid) or freqs.max() > fs[-1] * (1 + grid):
        return None, None
    if len(fs) == 1:
        v = np.full(len(freqs), vs[0])
        return v, v
    i = np.clip(np.searchsorted(fs, freqs), 1, len(fs) - 1)
    a, b = vs[i - 1], vs[i]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    near = np.where(np.abs(fs[i - 1] - freqs) < np.abs(fs[i] - freqs), i - 1, i)
    on = np.abs(fs[near] - freqs) <= GRID_REL * np.abs(freqs)
    return np.where(on, vs[near], lo), np.where(on, vs[near], hi)


def _values(ys, tol, groups, as_freqs=None) -> tuple[np.ndarray, str]:
    """Each value one of the measured numbers (of its own point where one row per point);
    a wavelength or frequency column (`as_freqs`, c/a) may also give the frequency of a
    spectrum's peak or dip (`_extremum_freqs`)."""
    pools, peaks = [], []
    for sims in groups:
        peaks.append(_extremum_freqs(sims) if as_freqs is not None else np.array([]))
        vals = [v for _, s in _derived(_spectra(sims)) for v in s]
        for s in sims:
            vals += [v for m in s.get("measured", []) if m["kind"] == "farfield" for v in m["abs2"]]
            for r in s.get("runs", []):
                for h in r.get("harminv", []):
                    for m in h.get("modes", []):
                        vals += [m.get("freq"), m.get("Q"), abs(m.get("decay") or 0)]
        pools.append(np.array([v for v in vals if v is not None and np.isfinite(v)]))
    per_point = len(groups) > 1 and len(groups) == len(ys)
    hit = np.zeros(len(ys), bool)
    for k, y in enumerate(ys):
        pool = pools[k] if per_point else np.concatenate(pools)
        hit[k] = bool(len(pool)) and bool(np.any(np.abs(pool - y) <= tol[k]))
        if not hit[k] and as_freqs is not None and np.isfinite(as_freqs[k]) and y:
            at = peaks[k] if per_point else np.concatenate(peaks)
            f_tol = abs(as_freqs[k]) * tol[k] / abs(y)  # the written precision, relative
            hit[k] = bool(np.any(np.abs(at - as_freqs[k]) <= f_tol))
    return hit, "per sweep point" if per_point else "a measured value"


def _extremum_freqs(sims: list[dict]) -> np.ndarray:
    """The frequencies of each measured or derived spectrum's highest and lowest value:
    the sample there and the vertex of the parabola through it and its neighbours (a
    peak wavelength reported against a swept parameter, read either way)."""
    out = []
    for f, v in itertools.islice(_derived(_spectra(sims)), MAX_EXTREMA_SPECTRA):
        ok = np.isfinite(v)
        f, v = f[ok], v[ok]
        if len(f) < 3:
            continue
        order = np.argsort(f)
        f, v = f[order], v[order]
        for i in (int(np.argmax(v)), int(np.argmin(v))):
            out.append(f[i])
            if 0 < i < len(f) - 1:
                out.append(_vertex(f[i - 1 : i + 2], v[i - 1 : i + 2]))
    return np.array([x for x in out if np.isfinite(x)])


def _vertex(f: np.ndarray, v: np.ndarray) -> float:
    """The abscissa of the parabola's vertex through three points."""
    d = (f[0] - f[1]) * (f[0] - f[2]) * (f[1] - f[2])
    a = (f[2] * (v[1] - v[0]) + f[1] * (v[0] - v[2]) + f[0] * (v[2] - v[1])) / d
    b = (f[2] ** 2 * (v[0] - v[1]) + f[1] ** 2 * (v[2] - v[0]) + f[0] ** 2 * (v[1] - v[2])) / d
    return float(-b / (2 * a)) if a else float(f[1])


def _trace_map(path: Path, fo: dict, groups, design: dict) -> tuple[bool, str, int]:
    """A field map's rows against the DFT digests of the same frequency."""
    import h5py

    # no link, no external storage or virtual dataset, each dataset within the caps
    with (
        run_files.open_run_file(path.parent, path.name, run_files.MAX_HDF5_BYTES) as fh,
        h5py.File(fh, "r") as h5,
    ):
        data = np.asarray(run_files.hdf5_dataset(h5, fo["dataset"], path), dtype=float)
        yv = np.asarray(run_files.hdf5_dataset(h5, fo["y_column"], path), dtype=float)
    if data.ndim != 2 or yv.size != data.shape[0]:
        raise ValueError(f"{fo['dataset']} is not a 2D map along {fo['y_column']}")
    freqs = column_names.frequencies(fo["y_column"], list(yv), design.get("unit_length_um", 1.0))
    if freqs is None or len(freqs) != len(yv):
        return False, f"{fo['y_column']} is neither a wavelength nor a frequency", 0
    digests = [m for sims in groups for s in sims for m in s.get("measured", [])]
    digests = [m for m in digests if m["kind"] == "dft_field" and m.get("freq")]
    if _whole_map(data, digests):
        return True, f"{fo['dataset']} is a DFT field's |F|^2 as measured", data.shape[0]
    rows = [_map_row(data[r], f, digests) for r, f in enumerate(freqs)]
    n = sum(c is not None for c in rows)
    if n == len(rows):
        return True, f"all {n} rows of {fo['dataset']} traced to the DFT fields", n
    first = next(r for r, c in enumerate(rows) if c is None)
    return (
        False,
        f"{len(rows) - n} of {len(rows)} rows of {fo['dataset']} match no DFT field's "
        f"|F|^2 (first: row {first + 1}, {fo['y_column']} = {yv[first]:.6g})",
        n,
    )


def _map_row(row: np.ndarray, freq: float, digests: list[dict]) -> float | None:
    """The constant c with row = c · |F|^2 (or a ratio of two) at this frequency."""
    same = [m for m in digests if abs(m["freq"] - freq) <= GRID_REL * freq]
    same = [m for m in same if len(m["shape"]) == 1 and m["shape"][0] == len(row)]
    if not same:
        return None
    arrays = [_arr(m["abs2"]) for m in same]
    with np.errstate(divide="ignore", invalid="ignore"):
        cands = arrays + [a / b for a, b in itertools.permutations(arrays, 2)]
    return _scale(row[:: same[0]["stride"]], cands)


def _scale(sampled: np.ndarray, cands: list[np.ndarray]) -> float | None:
    """c with sampled = c · one of the candidates (relative 1e-4), else None."""
    for cand in cands:
        if len(sampled) != len(cand):
            continue
        ok = np.isfinite(cand) & (np.abs(cand) > 0)
        if not ok.any():
            continue
        c = float(np.median(sampled[ok] / cand[ok]))
        atol = 1e-9 * float(np.abs(sampled).max())
        if np.allclose(sampled[ok], c * cand[ok], rtol=1e-4, atol=atol):
            return c
    return None


def _whole_map(data: np.ndarray, digests: list[dict]) -> bool:
    """A 2D map that is one 2D DFT field's |F|^2 (either orientation), up to a constant."""
    for m in digests:
        if len(m["shape"]) != 2:
            continue
        for d in (data, data.T):
            if list(d.shape) == m["shape"]:
                s = m["stride"]
                if _scale(d[::s, ::s].ravel(), [_arr(m["abs2"])]) is not None:
                    return True
    return False
