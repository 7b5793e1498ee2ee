"""Correct Meep code nobody on this project wrote: Meep's own `python/examples`, run
through the run-time record, every run-time check, the trace and the bounds, with a
planted variant of each case.

`.venv/bin/python benchmarks/third_party.py --meep-src DIR [--only NAME ...]`: DIR is a
checkout of NanoComp/meep (its `python/examples`; the commit is read from DIR/.commit
or `git -C DIR rev-parse HEAD`, and named in the results). The examples' code stays
Meep's and out of this repository; the case list, the edits the benchmark applies and
the results are ours. Each case says its edits (`edits`): the resolution (and run
length) scaled down for a shared 2-core machine, and, where the example computes a
figure's curve, two lines appended that write that curve to `out.csv` (where outputs
are written; the values are the example's own variables). Each case runs in its own
folder under a temporary directory with the recorder installed as the sandbox's entry
point installs it (tests.support.planted.driver), and is judged by
`reprolab.physics.checks.run_checks` with a design that declares only what the example
states (its output, its geometry's dimensions).

The planted variant of each case, judged on the same record: the figure output made up
from the example's curve (each value moved by 2 % of its range, as a digitization or
a hand-typed table would be), which the trace must refuse; a case without a figure
output plants a declared dimension 10 % off, which `built:geometry_as_declared` must
refuse.

Writes benchmarks/results/third_party.json (and a table, third_party.md): per case
`case`, `kind`, `dims`, `verdict` (pass | fail), `false_alarm`, `alarm_reason` (the
failing checks of a correct run, each with its detail), `planted_caught` (and by which
check), `edits`, and `right_alarms`: failing checks that are right, each with its
evidence. The evidence is measured where the benchmark can measure it: a run-length
alarm by the same example run longer (`Case.longer`: its curve must move by more than
the check's fail level), an under-resolution alarm by the exact answer the example
computes itself (`Case.exact`: the Mie series through PyMieScatt, beyond the SUCCESS
level of the band it would be judged by), a thin PML in a resonance by the PML-doubled
rerun the pipeline's convergence policy runs (`Case.pml_doubled`); a failure the
benchmark's own lower resolution caused is right where the pixels scale back over the
fail level; a few are argued per case in `Case.right`. `--work DIR` keeps every run
folder, `--rejudge` judges the kept runs again without rerunning them. The
mie_scattering and differential_cross_section examples import PyMieScatt (`pip install
PyMieScatt==1.8.1.1`, a dependency of Meep's examples, not of ReproLab).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
OUT = REPO / "benchmarks" / "results" / "third_party.json"

from reprolab.physics import checks, record_checks  # noqa: E402
from reprolab.physics import convergence as conv  # noqa: E402
from reprolab.physics import thresholds as th  # noqa: E402

WRITE = (
    "\nimport numpy as _np\n"
    "if mp.am_master():\n"
    "    _np.savetxt('out.csv', _np.column_stack([_np.asarray({x}, dtype=float), "
    "_np.asarray({y}, dtype=float)]), delimiter=',', header='{xc},{yc}', comments='', "
    "fmt='%.10g')\n"
)


@dataclass
class Case:
    name: str
    file: str
    kind: str
    dims: str  # "1D", "2D", "3D", "cylindrical"
    subs: list[tuple[str, str]] = field(default_factory=list)  # regex edits
    curve: tuple[str, str, str, str] | None = None  # x expr, y expr, x column, y column
    declared: list[dict] = field(default_factory=list)
    unit_length_um: float = 1.0
    conservation: str | None = None
    published: dict | None = None  # {"value": v, "expr": name, "source": where}
    timeout_s: int = 900  # a shared 2-core machine runs a case 2-5x slower than a quiet one
    own_resolution: float | None = None  # the example's, where an edit lowers it
    argv: list[str] = field(default_factory=list)  # the example's command line
    right: dict[str, str] = field(default_factory=dict)  # check -> why its failure is right
    # edits that run the example longer (to fields decayed far below its own stop): where
    # a decay check fails, the curve of that run says whether the example's had settled
    longer: list[tuple[str, str]] = field(default_factory=list)
    write_after: str | None = None  # the line after which the curve is written
    # edits for both sides of the longer-run comparison where running the case itself
    # longer costs too much (a 3D example: both at a coarser resolution)
    longer_at: list[tuple[str, str]] = field(default_factory=list)
    # edits that double the PML: a resonance that fails built:pml_thickness gets the
    # PML-doubled rerun the pipeline's convergence policy gives every Harminv stage
    pml_doubled: list[tuple[str, str]] = field(default_factory=list)
    # the exact answer the example computes itself: ("curve", y expression over the
    # curve's x) or ("printed", a regex of its output with the run's and the exact value)
    exact: tuple[str, str] | None = None

    def script(self, src: str) -> str:
        for pattern, repl in self.subs:
            src, n = re.subn(pattern, repl, src, flags=re.MULTILINE)
            if not n:
                raise ValueError(f"{self.name}: edit {pattern!r} matched nothing")
        if self.curve:
            x, y, xc, yc = self.curve
            write = WRITE.format(x=x, y=y, xc=xc, yc=yc)
            if self.exact and self.exact[0] == "curve":  # beside the output, not in it
                write += WRITE.format(x=x, y=self.exact[1], xc=xc, yc="exact").replace(
                    "'out.csv'", "'exact.csv'"
                )
            if self.write_after:  # inside the function whose variables the curve is
                line = re.search(self.write_after, src, flags=re.MULTILINE)
                if not line:
                    raise ValueError(f"{self.name}: {self.write_after!r} matched nothing")
                pad = re.match(r"\s*", line.group()).group()
                body = textwrap.indent(write.strip("\n"), pad)
                src = src[: line.end()] + "\n" + body + src[line.end() :]
            else:
                src += write
        return f"import sys as _sys\n_sys.argv = {['sim.py', *self.argv]!r}\n" + src

    def edits(self) -> list[str]:
        out = [f"{p} -> {r}" for p, r in self.subs]
        out.append(f"command line: {' '.join(self.argv) or '(none: the defaults)'}")
        if self.curve:
            out.append(f"appended: write ({self.curve[0]}, {self.curve[1]}) to out.csv")
        return out

    def design(self) -> dict:
        d = {
            "stage_id": f"stage1_{self.name}",
            "unit_length_um": self.unit_length_um,
            "figure_outputs": [],
            "output_specifications": [],
            "declared_dimensions": self.declared,
        }
        if self.conservation:
            d["conservation"] = self.conservation
        if self.dims == "cylindrical":
            d["coordinates"] = "cylindrical"  # what the example states: dimensions=CYLINDRICAL
        if self.curve:
            _, _, xc, yc = self.curve
            d["figure_outputs"] = [
                {
                    "figure_id": "f",
                    "curve_id": "c",
                    "file": "out.csv",
                    "x_column": xc,
                    "y_column": yc,
                }  # fmt: skip
            ]
            d["output_specifications"] = [{"file": "out.csv", "columns": [xc, yc]}]
        return d


RES = r"^resolution = \d+.*$"
CASES = [
    Case(
        "bend_flux_T",
        "bend-flux.py",
        "transmission/reflection spectrum",
        "2D",
        curve=("wl", "Ts", "wavelength_um", "T"),
        declared=[{"name": "waveguide width", "value": 1.0}],
        conservation="open_radiating",
    ),
    Case(
        "bend_flux_R",
        "bend-flux.py",
        "transmission/reflection spectrum",
        "2D",
        curve=("wl", "Rs", "wavelength_um", "R"),
        declared=[{"name": "waveguide width", "value": 1.0}],
        conservation="open_radiating",
    ),
    Case(
        "bend_flux_loss",
        "bend-flux.py",
        "transmission/reflection spectrum",
        "2D",
        curve=("wl", "1 - _np.asarray(Rs) - _np.asarray(Ts)", "wavelength_um", "loss"),
        declared=[{"name": "waveguide width", "value": 1.0}],
        conservation="open_radiating",
    ),
    Case(
        "refl_quartz",
        "refl-quartz.py",
        "dispersive medium reflectance",
        "1D",
        subs=[(RES, "resolution = 100")],
        curve=("wvls", "R_meep", "wavelength_um", "R"),
        own_resolution=200,
    ),
    Case(
        "cylinder_cross_section",
        "cylinder_cross_section.py",
        "scattering cross section",
        "cylindrical",
        subs=[(RES, "resolution = 12")],
        curve=("freqs", "scatt_cross_section", "freq", "sigma_sca"),
        longer=[(r"until_after_sources=100\)", "until_after_sources=800)")],
        declared=[{"name": "cylinder radius", "value": 0.7}],
        right={
            "built:resolution_ppw": "the example's own 25/a gives 5.5 pixels per "
            "wavelength in its n = 2 cylinder at the top of its band (2πr/λ = 10), under "
            "the 8 that Meep's introduction asks in the highest index: the example trades "
            "accuracy there for speed"
        },
        own_resolution=25,
    ),
    Case(
        "mie_scattering",
        "mie_scattering.py",
        "scattering cross section",
        "3D",
        subs=[(RES, "resolution = 10")],
        curve=("freqs", "scatt_eff_meep", "freq", "Q_sca"),
        declared=[{"name": "sphere radius", "value": 1.0}],
        timeout_s=2400,  # 683 s on a quiet machine, 1200 s beside three other runs
        own_resolution=25,
        # its stop, 100 after the sources, against 400: both at 6/a (400 at 10/a would
        # take an hour here)
        longer=[(r"until_after_sources=100\)", "until_after_sources=400)")],
        longer_at=[(r"^resolution = 10", "resolution = 6")],
        exact=("curve", "scatt_eff_theory"),
    ),
    Case(
        "metal_cavity_ldos",
        "metal-cavity-ldos.py",
        "LDOS",
        "2D",
        subs=[(r"^    resolution = 50", "    resolution = 20")],
        curve=("ws", "ldos_2", "w", "ldos"),
        own_resolution=50,
    ),
    Case(
        "ring",
        "ring.py",
        "Harminv modes",
        "2D",
        declared=[{"name": "inner radius", "value": 1.0}, {"name": "outer radius", "value": 2.0}],
    ),
    Case(
        "ring_cyl",
        "ring-cyl.py",
        "Harminv modes",
        "cylindrical",
        subs=[(r"resolution = 20", "resolution = 10")],
        declared=[{"name": "ring width", "value": 1.0}],
        own_resolution=20,
    ),
    Case(
        "holey_wvg_cavity",
        "holey-wvg-cavity.py",
        "transmission through a cavity",  # the example's default: its flux spectrum
        "2D",
        subs=[(r"resolution=20", "resolution=10")],
        curve=("mp.get_flux_freqs(trans)", "mp.get_fluxes(trans)", "freq", "flux"),
        write_after=r"^\s*sim\.display_fluxes\(trans\).*$",
        longer=[(r"dpml - 0\.5\), 1e-3", "dpml - 0.5), 1e-8")],
        declared=[
            {"name": "waveguide width", "value": 1.2},
            {"name": "hole radius", "value": 0.36},
        ],
        own_resolution=20,
    ),
    Case(
        "holey_wvg_bands",
        "holey-wvg-bands.py",
        "band structure (k points)",
        "2D",
        subs=[(r"resolution=20", "resolution=10")],
        declared=[
            {"name": "waveguide width", "value": 1.2},
            {"name": "hole radius", "value": 0.36},
        ],
        right={
            "built:resolution_ppw": "the example's own 20/a gives 5.5 pixels per "
            "wavelength in its ε = 13 waveguide at the top of the source's band (f = 1), "
            "under the 8 Meep's introduction asks in the highest index: its upper bands "
            "are the least accurate"
        },
        own_resolution=20,
    ),
    Case(
        "material_dispersion",
        "material-dispersion.py",
        "Harminv modes vs k (dispersive)",
        "1D",
        subs=[(r"^k_interp = 99", "k_interp = 19")],
        right={
            "built:resolution_ppw": "at the example's own 20/a, 4.4 pixels per wavelength "
            "in the medium at f = 2: the Yee grid's own dispersion moves ω(k) by about "
            "(kΔx)²(1 − S²)/24 = (2π/4.4)² × 0.75 / 24 = 6 % (Courant S = 0.5) at the top "
            "of its k range"
        },
    ),
    Case(
        "straight_waveguide",
        "straight-waveguide.py",
        "field (no monitor)",
        "2D",
        declared=[{"name": "waveguide width", "value": 1.0}],
    ),
    Case(
        "bent_waveguide",
        "bent-waveguide.py",
        "field (no monitor)",
        "2D",
        declared=[{"name": "waveguide width", "value": 1.0}],
    ),
    Case(
        "absorbed_power_density",
        "absorbed_power_density.py",
        "absorbed power (DFT fields)",
        "2D",
        subs=[(RES, "resolution = 50")],  # at 25 the SiO2 model goes unstable (NaN)
        declared=[{"name": "cylinder radius", "value": 1.0}],
        own_resolution=100,
    ),
    Case(
        "cavity_farfield",
        "cavity-farfield.py",
        "near-to-far field",
        "2D",
        # padding 8 a instead of 32 a between the holes and the PML: a quarter of the
        # cell for a shared machine (the far-field line, 2N + d - 1 long, is unchanged)
        subs=[(RES, "resolution = 10"), (r"^dpad = 32", "dpad = 8")],
        timeout_s=900,
        declared=[
            {"name": "waveguide width", "value": 1.2},
            {"name": "hole radius", "value": 0.36},
        ],
        own_resolution=20,
    ),
    Case(
        "differential_cross_section",
        "differential_cross_section.py",
        "near-to-far scattering",
        "3D",
        subs=[(r"^resolution = 20", "resolution = 8")],
        declared=[{"name": "sphere radius", "value": 1.0}],
        timeout_s=2400,
        own_resolution=20,
        # its stop, 100 after the sources, against 400: both at 5/a
        longer=[(r"until_after_sources=100\)", "until_after_sources=400)")],
        longer_at=[(r"^resolution = 8", "resolution = 5")],
        exact=("printed", r"scatt:, ([-+\d.eE]+) \(meep\), ([-+\d.eE]+) \(theory\)"),
    ),
    Case(
        "faraday_rotation",
        "faraday-rotation.py",
        "gyrotropic medium (field)",
        "1D",
    ),
    Case(
        "pw_source",
        "pw-source.py",
        "plane-wave source (field)",
        "2D",
    ),
    Case(
        "chirped_pulse",
        "chirped_pulse.py",
        "chirped pulse (field)",
        "2D",
        subs=[(RES, "resolution = 20")],
        own_resolution=40,
    ),
    Case(
        "finite_grating",
        "finite_grating.py",
        "near-to-far field (grating)",
        "2D",
        subs=[(RES, "resolution = 20")],
        declared=[{"name": "grating height", "value": 0.5}],
        own_resolution=50,
    ),
    Case(
        "binary_grating_n2f",
        "binary_grating_n2f.py",
        "near-to-far field (grating orders)",
        "2D",
        # 100 far-field points instead of 500 along its 20° cone (the figure's sampling)
        subs=[(RES, "resolution = 15"), (r"^ff_npts = 500", "ff_npts = 100")],
        declared=[{"name": "grating height", "value": 0.5}],
        own_resolution=25,
        timeout_s=900,
    ),
    Case(
        "ring_mode_overlap",
        "ring-mode-overlap.py",
        "Harminv modes and overlaps",
        "2D",
        subs=[(RES, "resolution = 10")],
        pml_doubled=[(r"^dpml = 2 ", "dpml = 4 ")],
        declared=[{"name": "inner radius", "value": 1.0}, {"name": "ring width", "value": 1.0}],
        own_resolution=20,
    ),
    Case(
        "solve_cw",
        "solve-cw.py",
        "frequency-domain solver",
        "2D",
        subs=[(RES, "resolution = 10")],
        declared=[{"name": "inner radius", "value": 1.0}],
        own_resolution=20,
    ),
    Case(
        "third_harmonic_1d",
        "3rd-harm-1d.py",
        "nonlinear (chi3) spectrum",
        "1D",
        timeout_s=900,  # 35 runs (4 spectra, 31 harmonic amplitudes): 254 s on a quiet machine
    ),
    Case(
        "phase_in_material",
        "phase_in_material.py",
        "geometry change (field)",
        "2D",
    ),
    Case(
        "cherenkov_radiation",
        "cherenkov-radiation.py",
        "moving source (field)",
        "2D",
        # no PNG frames: Meep's output_png needs h5topng, which this machine lacks
        subs=[(r"^\s*mp\.at_every\(2, mp\.output_png\(.*\)\),\n", "")],
    ),
    Case(
        "point_dipole_cyl",
        "point_dipole_cyl.py",
        "dipole flux (LDOS)",
        "cylindrical",
        # one dipole position (3.5 µm) of the three: each needs its own series of m
        subs=[
            (r"^RESOLUTION_UM = 50", "RESOLUTION_UM = 20"),
            (r"dipole_rpos_um = \[3\.5, 6\.7, 9\.5\]", "dipole_rpos_um = [3.5]"),
        ],
        own_resolution=50,
        timeout_s=900,
    ),
    Case(
        "antenna_radiation",
        "antenna-radiation.py",
        "near-to-far radiation pattern",
        "2D",
        # the installed Meep's get_farfield takes no Green's-function tolerance argument
        subs=[
            (r"^RESOLUTION_UM = 50", "RESOLUTION_UM = 20"),
            (r"^\s*GREENCYL_TOL,\n", ""),
        ],
        own_resolution=50,
    ),
    Case(
        "absorber_1d",
        "absorber-1d.py",
        "absorber boundary (field)",
        "1D",
    ),
    Case(
        "dipole_in_vacuum_1d",
        "dipole_in_vacuum_1D.py",
        "dipole flux (1D)",
        "1D",
        # 6 x 8 directions of the dipole instead of 30 x 50: one simulation each
        subs=[(r"^NUM_POLAR = 30", "NUM_POLAR = 6"), (r"^NUM_AZIMUTH = 50", "NUM_AZIMUTH = 8")],
        argv=["x"],
    ),
]


def commit_of(src: Path) -> str:
    marker = src / ".commit"
    if marker.is_file():
        return marker.read_text().strip()
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def run_case(case: Case, src: Path, folder: Path, rejudge: bool = False) -> dict:
    """Runs the case in `folder` and judges it; with `rejudge`, a folder that holds a
    finished run (kept by --work) is judged again as it is."""
    if rejudge and (folder / "exit_code").is_file():
        seconds = float((folder / "wall_seconds").read_text())
        return judged_row(case, folder, seconds, timed_out=False)
    for old in (folder, *folder.parent.glob(folder.name + ".*")):
        shutil.rmtree(old, ignore_errors=True)
    code = case.script((src / "python" / "examples" / case.file).read_text())
    folder.mkdir(parents=True)
    (folder / "sim.py").write_text(code)
    start = time.monotonic()
    try:
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                sys.executable,
                "-m",
                "tests.support.planted.driver",
                str(folder),
            ],  # fmt: skip
            cwd=REPO,
            env={**os.environ, "MPLBACKEND": "Agg"},
            timeout=case.timeout_s,
            capture_output=True,
        )
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    seconds = round(time.monotonic() - start, 1)
    return judged_row(case, folder, seconds, timed_out)


def judged_row(case: Case, folder: Path, seconds: float, timed_out: bool) -> dict:
    failed = judge(case, folder, timed_out)
    pml_rerun = None
    if any(c["name"] == "built:pml_thickness" for c in failed) and case.pml_doubled:
        pml_rerun = pml_doubled_run(case, folder)
        excused, _ = conv.excuse_pml(failed, {"variants": [pml_rerun]})
        failed = [c for c in excused if c["status"] == "fail"]
    settled = None
    if any(c["name"] in DECAY_CHECKS for c in failed) and case.longer and not timed_out:
        settled = longer_run(case, folder)
        if settled and settled["moved"] > th.SPECTRUM_UNSETTLED.fail:
            why = (
                f"run longer ({'; '.join(f'{p} -> {r}' for p, r in case.longer)}"
                + (
                    f"; both runs with {'; '.join(settled['both_at'])}"
                    if settled["both_at"]
                    else ""
                )
                + "), the example's own curve moves "
                f"by {settled['moved']:.3g} of its largest value (at x = {settled['at']:.4g}), "
                f"over the {th.SPECTRUM_UNSETTLED.fail:g} the check fails at"
            )
            case = Case(**{**case.__dict__, "right": case.right | dict.fromkeys(DECAY_CHECKS, why)})
    exact = exact_comparison(case, folder)
    if exact and exact["off"]:
        why = (
            f"the run's own result is off the exact answer the example computes by "
            f"{exact['error']}, beyond the SUCCESS level {exact['limit']}"
        )
        case = Case(**{**case.__dict__, "right": case.right | {"built:resolution_ppw": why}})
    correct = [c for c in failed if not reduced_by_us(case, c) and c["name"] not in case.right]
    justified = [c for c in failed if reduced_by_us(case, c)]
    argued = [c for c in failed if c["name"] in case.right and not reduced_by_us(case, c)]
    row = {
        "case": case.name,
        "example": f"python/examples/{case.file}",
        "kind": case.kind,
        "dims": case.dims,
        "edits": case.edits(),
        "wall_seconds": seconds,
        "verdict": "pass" if not correct else "fail",  # right alarms aside
        "false_alarm": bool(correct),
        "alarm_reason": "; ".join(f"{c['name']}: {c['detail']}" for c in correct),
        "right_alarms": [
            f"{c['name']}: {c['detail']} (right: the benchmark lowered the resolution from "
            f"the example's {case.own_resolution:g}, where it passes)"
            for c in justified
        ]
        + [f"{c['name']}: {c['detail']} (right: {case.right[c['name']]})" for c in argued],
        "verdict_at_reduced_resolution": "pass" if not failed else "fail",
    }
    exit_path = folder / "exit_code"
    crashed = not exit_path.is_file() or exit_path.read_text().strip() != "0"
    if timed_out or crashed:  # the example did not run here: no judgement to count
        err = (folder / "stderr.txt").read_text() if (folder / "stderr.txt").is_file() else ""
        last = err.strip().splitlines()[-1] if err.strip() else ""
        why = f"timed out after {case.timeout_s} s" if timed_out else f"crashed: {last}"
        row.update(verdict="not_run", false_alarm=None, alarm_reason=why)
        row.update(planted=None, planted_caught=None, planted_caught_by=[])
        return row
    row.update(planted(case, folder))
    if settled:
        row["longer_run"] = settled
    if pml_rerun:
        row["pml_doubled_run"] = {
            "edits": [f"{p} -> {r}" for p, r in case.pml_doubled],
            "verdict": conv.verdict(pml_rerun["quantities"]),
            "quantities": [
                {k: q.get(k) for k in ("name", "value_n", "value_2n", "change", "status")}
                for q in pml_rerun["quantities"]
            ],
        }
    if exact:
        row["exact_comparison"] = exact
    if case.published:
        row["published"] = case.published
    return row


DECAY_CHECKS = ("built:field_decay", "field_decay")


def exact_comparison(case: Case, folder: Path) -> dict | None:
    """The run's result against the exact answer the example computes itself (Mie
    series through PyMieScatt): a curve by its largest and RMS difference relative to
    the exact curve's largest value, a printed number relative to the exact one; `off`
    where that is beyond the SUCCESS level of the band a paper's figure or key value
    would be judged by."""
    if not case.exact:
        return None
    how, spec = case.exact
    if how == "curve":
        try:
            run = np.loadtxt(folder / "out.csv", delimiter=",", skiprows=1, ndmin=2)[:, 1]
            exact = np.loadtxt(folder / "exact.csv", delimiter=",", skiprows=1, ndmin=2)[:, 1]
        except OSError:
            return None
        scale = float(np.max(np.abs(exact)))
        worst = float(np.max(np.abs(run - exact)) / scale)
        rms = float(np.sqrt(np.mean((run - exact) ** 2)) / scale)
        bands = {b.metric: b.acceptable for b in th.DISCREPANCY_THRESHOLDS}
        return {
            "what": f"{case.curve[1]} against {spec}",
            "max_abs_rel": round(worst, 4),
            "rms_rel": round(rms, 4),
            "error": f"{worst:.3g} at most (rms {rms:.3g})",
            "limit": f"max_abs_rel {bands['max_abs_rel']:g}, rms_rel {bands['rms_rel']:g}",
            "off": worst > bands["max_abs_rel"] or rms > bands["rms_rel"],
        }
    out = folder / "stdout.txt"
    got = re.search(spec, out.read_text()) if out.is_file() else None
    if not got:
        return None
    value, exact = float(got.group(1)), float(got.group(2))
    rel = abs(value - exact) / abs(exact)
    return {
        "what": "printed value against the printed exact value",
        "run": value,
        "exact": exact,
        "rel": round(rel, 4),
        "error": f"{rel:.3g} (relative)",
        "limit": f"key_value_rel {th.KEY_VALUE.acceptable:g}",
        "off": rel > th.KEY_VALUE.acceptable,
    }


def variant_run(case: Case, folder: Path, suffix: str, edits: list) -> Path:
    """The case's script (its edits applied) with `edits` on top, run beside `folder`
    (kept: a rejudge reuses it)."""
    there = folder.parent / (folder.name + suffix)
    if not (there / "exit_code").is_file():
        for old in (there, there.parent / (there.name + ".record")):
            shutil.rmtree(old, ignore_errors=True)
        there.mkdir(parents=True)
        code = (folder / "sim.py").read_text()
        for pattern, repl in edits:
            code, n = re.subn(pattern, repl, code, flags=re.MULTILINE)
            if not n:
                raise ValueError(f"{case.name}: edit {pattern!r} matched nothing")
        (there / "sim.py").write_text(code)
        subprocess.run(
            ["nice", "-n", "10", sys.executable, "-m", "tests.support.planted.driver", str(there)],
            cwd=REPO,
            env={**os.environ, "MPLBACKEND": "Agg"},
            timeout=4 * case.timeout_s,
            capture_output=True,
        )
    return there


def pml_doubled_run(case: Case, folder: Path) -> dict:
    """The pipeline's PML-doubled rerun of a resonance: its modes against the run's
    (reprolab.physics.convergence, as the convergence step compares them)."""
    there = variant_run(case, folder, ".pml2x", case.pml_doubled)
    modes = [conv.record_modes(record_checks.load_record(f)) for f in (folder, there)]
    quantities = conv.mode_quantities(*modes, conv.PML)
    return {"id": conv.PML, "ran": bool(modes[1]), "quantities": quantities}


def longer_run(case: Case, folder: Path) -> dict | None:
    """The case run longer (`Case.longer`) beside `folder`, and how far its curve moves
    from the example's: the largest difference relative to the longer run's largest
    value. None where either run wrote no curve."""
    longer = variant_run(case, folder, ".longer", case.longer_at + case.longer)
    base = variant_run(case, folder, ".shorter", case.longer_at) if case.longer_at else folder
    if not case.curve and case.exact and case.exact[0] == "printed":  # a printed result
        got = [re.search(case.exact[1], (f / "stdout.txt").read_text()) for f in (base, longer)]
        if not all(got):
            return None
        mine, theirs = (np.array([[0.0, float(g.group(1))]]) for g in got)
    else:
        try:
            mine = np.loadtxt(base / "out.csv", delimiter=",", skiprows=1, ndmin=2)
            theirs = np.loadtxt(longer / "out.csv", delimiter=",", skiprows=1, ndmin=2)
        except OSError:
            return None
    gap = np.abs(mine[:, 1] - theirs[:, 1])
    i = int(np.argmax(gap))
    return {
        "edits": [f"{p} -> {r}" for p, r in case.longer_at + case.longer],
        "both_at": [f"{p} -> {r}" for p, r in case.longer_at],
        "moved": float(gap[i] / np.max(np.abs(theirs[:, 1]))),
        "at": float(mine[i, 0]),
    }


def judge(case: Case, folder: Path, timed_out: bool) -> list[dict]:
    """The failing checks of one run."""
    exit_path = folder / "exit_code"
    record = {
        "exit_code": int(exit_path.read_text()) if exit_path.is_file() else 1,
        "timed_out": timed_out,
        "timeout_s": case.timeout_s,
        "stdout_tail": "",
        "stderr_tail": (folder / "stderr.txt").read_text()[-2000:]
        if (folder / "stderr.txt").is_file()
        else "",
        "output_files": [{"name": p.name, "bytes": p.stat().st_size} for p in folder.glob("*.csv")],
    }
    design = case.design()
    outputs = [o["file"] for o in design["output_specifications"]]
    result = checks.run_checks(record, folder, outputs, True, design=design)
    return [c for c in result["checks"] if c["status"] == "fail"]


def reduced_by_us(case: Case, check: dict) -> bool:
    """A failure the benchmark's own lower resolution caused: the pixels per wavelength
    or the PML's pixels it measured pass once scaled back to the example's own
    resolution (the thickness in wavelengths, which no resolution changes, passing)."""
    low = lowered(case)
    if not case.own_resolution or not low:
        return False
    scale = case.own_resolution / low
    if check["name"] == "built:resolution_ppw":
        got = re.search(r"([\d.]+) pixels per wavelength", check["detail"])
        return bool(got) and float(got.group(1)) * scale >= th.PPW_AS_BUILT.fail
    if check["name"] == "built:pml_thickness":
        got = re.search(r"= ([\d.]+) pixels = ([\d.]+) wavelengths", check["detail"])
        if not got:
            return False
        pixels, wavelengths = float(got.group(1)), float(got.group(2))
        return pixels * scale >= th.PML_MIN_PIXELS and wavelengths >= th.PML_RESONANCE_WAVELENGTHS
    return False


def lowered(case: Case) -> float | None:
    """The resolution an edit sets, where one does."""
    for pattern, repl in case.subs:
        if "resolution" in pattern.lower():
            got = re.search(r"[\d.]+", repl)
            return float(got.group()) if got else None
    return None


def planted(case: Case, folder: Path) -> dict:
    """The same record with the output made up (2 % of its range moved per value), or a
    declared dimension 10 % off where the case writes no curve."""
    wrong = folder.parent / (folder.name + ".planted")
    copied_record = wrong.parent / (wrong.name + ".record")
    for old in (wrong, copied_record):
        shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(folder, wrong)
    record = folder.parent / (folder.name + ".record")
    if record.exists():
        shutil.copytree(record, copied_record)
    if case.curve and (wrong / "out.csv").is_file():
        data = np.loadtxt(wrong / "out.csv", delimiter=",", skiprows=1, ndmin=2)
        rng = np.random.default_rng(7)
        spread = float(np.ptp(data[:, 1])) or 1.0
        data[:, 1] += 0.02 * spread * rng.choice([-1.0, 1.0], size=len(data))
        header = ",".join(case.curve[2:])
        np.savetxt(wrong / "out.csv", data, delimiter=",", header=header, comments="", fmt="%.10g")
        what, name = "output made up (each value moved by 2 % of its range)", "traceable:"
        failed = judge(case, wrong, False)
    else:
        moved = [dict(d, value=d["value"] * 1.1) for d in case.declared]
        moved = moved or [{"name": "film thickness", "value": 0.123}]  # nothing built
        what, name = (
            "declared dimension 10 % off (or one never built)",
            "built:geometry_as_declared",
        )
        failed = judge(Case(**{**case.__dict__, "declared": moved}), wrong, False)
    by = [c["name"] for c in failed if c["name"].startswith(name)]
    return {"planted": what, "planted_caught": bool(by), "planted_caught_by": by}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meep-src", required=True, type=Path, help="a checkout of NanoComp/meep")
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--work", type=Path, help="keep each case's run folder here")
    ap.add_argument(
        "--rejudge", action="store_true", help="judge the runs kept in --work again, unrun"
    )
    args = ap.parse_args()
    src = args.meep_src.resolve()
    if not (src / "python" / "examples").is_dir():
        sys.exit(f"--meep-src {src}: no python/examples folder; valid: a NanoComp/meep checkout")
    cases = [c for c in CASES if not args.only or c.name in args.only]
    previous = json.loads(args.out.read_text())["cases"] if args.out.is_file() else []
    rows = {r["case"]: not_run_if_it_did_not(r) for r in previous}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        for case in cases:
            row = run_case(case, src, work / case.name, args.rejudge)
            print(f"{case.name}: {row['verdict']} planted_caught={row['planted_caught']} "
                  f"({row['wall_seconds']} s) {row['alarm_reason'][:300]}", flush=True)  # fmt: skip
            rows[case.name] = row
            write(args.out, src, rows)  # after each case: a long run keeps what it did
    print(json.dumps(write(args.out, src, rows)))


def not_run_if_it_did_not(row: dict) -> dict:
    """A kept row whose example timed out or crashed (an exit_code failure) is not_run,
    as run_case writes it now."""
    reason = row.get("alarm_reason") or ""
    if row.get("verdict") != "fail" or not reason.startswith("exit_code:"):
        return row
    why = reason.split(";")[0].removeprefix("exit_code: ")
    return row | {"verdict": "not_run", "false_alarm": None, "alarm_reason": why,
                  "planted": None, "planted_caught": None, "planted_caught_by": []}  # fmt: skip


def write(out: Path, src: Path, rows: dict) -> dict:
    """benchmarks/results/third_party.json (atomically); its summary."""
    ordered = [rows[c.name] for c in CASES if c.name in rows]
    ran = [r for r in ordered if r["verdict"] != "not_run"]
    summary = {
        "cases": len(ordered),
        "ran": len(ran),
        "not_run": [f"{r['case']}: {r['alarm_reason']}" for r in ordered if r not in ran],
        "kinds_ran": len({r["kind"] for r in ran}),
        "3d_or_cylindrical_ran": sum(r["dims"] in ("3D", "cylindrical") for r in ran),
        "false_alarms": sum(bool(r["false_alarm"]) for r in ran),
        "planted_caught": sum(bool(r["planted_caught"]) for r in ran),
    }
    result = {
        "meep_commit": commit_of(src),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": "shared 2-core machine, runs under nice",
        "summary": summary,
        "cases": ordered,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    for path, text in (
        (out, json.dumps(result, indent=1) + "\n"),
        (out.with_suffix(".md"), markdown(result)),
    ):
        tmp_out = path.with_suffix(path.suffix + ".tmp")
        tmp_out.write_text(text)
        tmp_out.replace(path)
    return summary


def markdown(result: dict) -> str:
    """The results as a table: one row per case, then each alarm's reason."""
    s = result["summary"]
    lines = [
        "# Third-party corpus: Meep's own examples through every check",
        "",
        f"Meep commit {result['meep_commit']}, {result['date']}, {result['machine']}. "
        f"Written by `benchmarks/third_party.py`; the numbers per case are in "
        f"`third_party.json`.",
        "",
        f"{s['cases']} cases, {s['ran']} ran ({s['kinds_ran']} kinds, "
        f"{s['3d_or_cylindrical_ran']} 3D or cylindrical); false alarms: "
        f"{s['false_alarms']}; planted variants caught: {s['planted_caught']} of {s['ran']}.",
        "",
        "| case | kind | dims | verdict | false alarm | right alarms | planted caught by | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["cases"]:
        right = sorted({a.split(":", 2)[0] + ":" + a.split(":", 2)[1] for a in r["right_alarms"]})
        lines.append(
            f"| {r['case']} | {r['kind']} | {r['dims']} | {r['verdict']} | {r['false_alarm']} | "
            f"{', '.join(right) or '-'} | {', '.join(r.get('planted_caught_by') or []) or '-'} "
            f"| {r['wall_seconds']} |"
        )
    lines += ["", "## Why each alarm fired", ""]
    for r in result["cases"]:
        for text in [r["alarm_reason"]] * bool(r["alarm_reason"]) + r["right_alarms"]:
            lines.append(f"- **{r['case']}**: {text}")
    extra = [r for r in result["cases"] if r.get("exact_comparison") or r.get("longer_run")]
    if extra:
        lines += ["", "## Measured against the example's own truth", ""]
        for r in extra:
            if r.get("exact_comparison"):
                e = r["exact_comparison"]
                lines.append(
                    f"- **{r['case']}**: {e['what']}: {e['error']} (SUCCESS: {e['limit']})"
                )
            if r.get("longer_run"):
                g = r["longer_run"]
                lines.append(
                    f"- **{r['case']}** run longer ({'; '.join(g['edits'])}): its curve "
                    f"moves {g['moved']:.3g} of its largest value (at x = {g['at']:.4g})"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
