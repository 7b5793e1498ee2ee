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
level of the band it would be judged by) or by the 2x resolution rerun the pipeline's
convergence policy runs (`Case.res_doubled`: the alarm stands unless it converged), a
thin PML in a resonance by the PML-doubled rerun (`Case.pml_doubled`); a failure the
benchmark's own lower resolution caused is right where the pixels scale back over the
fail level. `alarm_reason` holds every failing check with its evidence (or "false
alarm"). `published`: the numbers Meep's own `python/tests` assert for an example's
configuration (`Case.published`; the file:line is checked in DIR where DIR has
python/tests), each against this run's value with the relative difference and what the
test runs differently. `--work DIR` keeps every run folder, `--rejudge` judges the
kept runs again without rerunning them. The
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
class Published:
    """A number Meep's own `python/tests` assert for this example's configuration:
    `source` is its file:line in the checkout (checked there, where the checkout has
    python/tests), `ours` where this run's value is: ("mode", run label) the record's
    Harminv mode of that k point / m nearest the number, or ("printed", regex) the first
    group of the example's output. `differs` names what the test's configuration does
    differently from the run judged ('' where nothing)."""

    what: str
    value: float
    source: str
    ours: tuple[str, str]
    differs: str = ""
    # a ratio of two published numbers (a spectrum normalised by the test's own
    # normalisation run): the denominator and its file:line; `sign` flips a flux read
    # against its face's direction (a reflection)
    per: tuple[float, str] | None = None
    sign: float = 1.0


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
    # numbers Meep's python/tests assert for the same example (Published): each compared
    # with this run's own value
    published: list[Published] = field(default_factory=list)
    no_published: str = ""  # why a python/tests number that looks like this case's is not
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
    # edits that double the judged run's resolution: a built:resolution_ppw failure gets
    # the 2x rerun the pipeline's convergence policy runs, and stands unless it converged
    res_doubled: list[tuple[str, str]] = field(default_factory=list)
    # edits for both sides of that comparison where the 2x run of the whole example costs
    # too much (a shortened k sweep: the same k points, each its own run)
    res_doubled_at: list[tuple[str, str]] = field(default_factory=list)
    # a figure's curve the example computes but writes to no file, written to probe.csv
    # (no output of the run's, so no check judges it) for the 2x rerun to compare
    probe: tuple[str, str, str, str] | None = None

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
        if self.probe:  # beside the outputs, not one of them: no check reads it
            x, y, xc, yc = self.probe
            src += WRITE.format(x=x, y=y, xc=xc, yc=yc).replace("'out.csv'", "'probe.csv'")
        return f"import sys as _sys\n_sys.argv = {['sim.py', *self.argv]!r}\n" + src

    def edits(self) -> list[str]:
        out = [f"{p} -> {r}" for p, r in self.subs]
        out.append(f"command line: {' '.join(self.argv) or '(none: the defaults)'}")
        if self.curve:
            out.append(f"appended: write ({self.curve[0]}, {self.curve[1]}) to out.csv")
        if self.probe:
            out.append(f"appended: write ({self.probe[0]}, {self.probe[1]}) to probe.csv")
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


def bend_published(what: str, flux: float, sign: float) -> Published:
    """test_bend_flux.py's bend run at f = 0.11919 (its 20th frequency) over its
    normalisation run's transmitted flux there, as bend-flux.py normalises."""
    return Published(
        f"{what} at f = 0.11919 (the bend's flux over the straight guide's)",
        flux,
        "python/tests/test_bend_flux.py:179",
        ("curve", repr(1 / 0.11919191919191931)),
        "its guides built as Prisms (the example's: a Block), the straight run's "
        "transmission monitor 0.5 a further in, both runs stopped when the energy "
        "decayed by 1e-3 (the example's: Ez at a point by 1e-3)",
        per=(0.0254987474079, "python/tests/test_bend_flux.py:128"),
        sign=sign,
    )


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
        published=[bend_published("T", 0.008646855439680507, 1.0)],
    ),
    Case(
        "bend_flux_R",
        "bend-flux.py",
        "transmission/reflection spectrum",
        "2D",
        curve=("wl", "Rs", "wavelength_um", "R"),
        declared=[{"name": "waveguide width", "value": 1.0}],
        conservation="open_radiating",
        published=[bend_published("R", -0.005614491919262783, -1.0)],
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
        res_doubled=[(r"^resolution = 12", "resolution = 24")],
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
        published=[
            Published(
                "Harminv frequency of the ring's mode",
                0.118101315147,
                "python/tests/test_ring.py:64",
                ("mode", ""),
            )
        ],
    ),
    Case(
        "ring_cyl",
        "ring-cyl.py",
        "Harminv modes",
        "cylindrical",
        subs=[(r"resolution = 20", "resolution = 10")],
        declared=[{"name": "ring width", "value": 1.0}],
        own_resolution=20,
        published=[
            Published(
                "Harminv frequency of the ring's m = 3 mode",
                0.1183512829,
                "python/tests/test_ring_cyl.py:54",
                ("mode", "m = 3"),
                "a 2 a PML (the example's: 32 a); the same 10/a this run uses",
            )
        ],
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
        # 2x resolution at 3 of its 21 k points (k = 0, 0.25, 0.5: each its own run)
        res_doubled=[(r"resolution=10", "resolution=20")],
        res_doubled_at=[(r"k_interp = 19", "k_interp = 1")],
        own_resolution=20,
    ),
    Case(
        "material_dispersion",
        "material-dispersion.py",
        "Harminv modes vs k (dispersive)",
        "1D",
        subs=[(r"^k_interp = 99", "k_interp = 19")],
        # 2x resolution at 3 of its 21 k points (k = 0.3, 1.25, 2.2: each its own run)
        res_doubled=[(r"^resolution = 20", "resolution = 40")],
        res_doubled_at=[(r"^k_interp = 19", "k_interp = 1")],
        no_published="test_material_dispersion.py asserts ω = k / 1.5 on the grid (0.19993 "
        "at k = 0.3): its material_function returns the Lorentzian terms without declaring "
        "them to the simulation, so they are not applied; this run's medium is dispersive "
        "(0.18039 at k = 0.3, ε(0) = 2.75)",
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
        # slow, not big: its cavity rings to t = 9918 (198k steps, 25 s plain), and the
        # recorder's energy samples (one a period, each as costly as 54-270 steps here)
        # make that 3 min on a quiet machine, over 900 s beside three other runs
        timeout_s=2400,
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
        # 100 far-field points instead of 500 along its 20° cone (the figure's sampling);
        # 3 periods each side instead of 10: the finite grating it checks the periodic
        # near-to-far against is 7 periods (72 a) tall instead of 21 (212 a)
        subs=[
            (RES, "resolution = 15"),
            (r"^ff_npts = 500", "ff_npts = 100"),
            (r"^nperiods = 10", "nperiods = 3"),
            # its figure's pcolormesh passes one value per cell corner: the installed
            # matplotlib refuses that with flat shading (the example crashes after its runs)
            (r'shading="flat"', 'shading="nearest"'),
        ],
        # its figure's right panel, the far field at λ = 0.5 µm against the angle: the
        # 2x rerun compares it, both sides with a 1-period finite grating (the curve is
        # the periodic near-to-far's; the finite one only feeds its printed error)
        probe=("angles", "rel_enh[:, idx_slice]", "angle_deg", "rel_enh"),
        res_doubled=[(r"^resolution = 15", "resolution = 30")],
        res_doubled_at=[(r"^num_cells = 2 \* nperiods \+ 1", "num_cells = 1")],
        declared=[{"name": "grating height", "value": 0.5}],
        own_resolution=25,
        # its source has a period of 0.48 time units, 14 steps at 15/a: the recorder's
        # energy sample once a period costs more than those steps
        timeout_s=2400,
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
        published=[
            Published(
                f"transmitted flux at {harmonic} for χ(3) = 0.01",
                value,
                "python/tests/test_3rd_harm_1d.py:53",
                ("printed", r"harmonics:, 0\.0100*\d*, 1\.0, " + group),
                "resolution 20 (the example's: 25): the example's own function run at 20/a "
                "gives 221.909 and 1.75296 (measured), within 6e-5 of the test: the 3ω flux "
                "moves with the grid's phase mismatch over the 100 a medium",
            )
            for harmonic, value, group in (
                ("ω", 221.89548712071553, r"([-+\d.eE]+), "),
                ("3ω", 1.752960413399477, r"[-+\d.eE]+, ([-+\d.eE]+)"),
            )
        ],
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
        # the dipole on the axis only (its one m = 1 simulation): each of the three
        # off-axis positions needs its own series of m, about 45 simulations for 3.5 µm
        # (25 s each beside three other runs at 20/µm)
        subs=[
            (r"^RESOLUTION_UM = 50", "RESOLUTION_UM = 20"),
            (r"dipole_rpos_um = \[3\.5, 6\.7, 9\.5\]", "dipole_rpos_um = []"),
        ],
        own_resolution=50,
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
        return judged_row(case, folder, seconds, timed_out=False, src=src)
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
    return judged_row(case, folder, seconds, timed_out, src)


def judged_row(
    case: Case, folder: Path, seconds: float, timed_out: bool, src: Path | None = None
) -> dict:
    failed = judge(case, folder, timed_out)
    res_rerun = None
    if any(c["name"] == "built:resolution_ppw" for c in failed) and case.res_doubled:
        res_rerun = res_doubled_run(case, folder)
        excused, note = conv.excuse_resolution(failed, {"variants": [res_rerun]})
        failed = [c for c in excused if c["status"] == "fail"]
        if any(c["name"] == "built:resolution_ppw" for c in failed):
            why = "measured: " + (f"{note}; " if note else "") + unconverged(res_rerun)
            case = Case(**{**case.__dict__, "right": case.right | {"built:resolution_ppw": why}})
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
    right_alarms = [
        f"{c['name']}: {c['detail']} (right: the benchmark lowered the resolution from "
        f"the example's {case.own_resolution:g}, where it passes)"
        for c in justified
    ] + [f"{c['name']}: {c['detail']} (right: {case.right[c['name']]})" for c in argued]
    row = {
        "case": case.name,
        "example": f"python/examples/{case.file}",
        "kind": case.kind,
        "dims": case.dims,
        "edits": case.edits(),
        "wall_seconds": seconds,
        "verdict": "pass" if not correct else "fail",  # right alarms aside
        "false_alarm": bool(correct),
        # every failing check: a false alarm's detail, a right one's with its evidence
        "alarm_reason": "; ".join(
            [f"{c['name']}: {c['detail']} (false alarm)" for c in correct] + right_alarms
        ),
        "right_alarms": right_alarms,
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
    if res_rerun:
        row["resolution_doubled_run"] = {
            "edits": [f"{p} -> {r}" for p, r in case.res_doubled_at + case.res_doubled],
            "both_at": [f"{p} -> {r}" for p, r in case.res_doubled_at],
            "verdict": conv.verdict(res_rerun["quantities"]),
            "quantities": [
                {k: q.get(k) for k in ("name", "value_n", "value_2n", "change", "limit", "status")}
                for q in conv.judged(res_rerun["quantities"])
            ],
        }
    if exact:
        row["exact_comparison"] = exact
    row["published"] = [published_comparison(p, folder, src) for p in case.published]
    if case.no_published:
        row["no_published"] = case.no_published
    return row


def res_doubled_run(case: Case, folder: Path) -> dict:
    """The pipeline's resolution rerun (2x) of the judged run: its curves and Harminv
    modes against the run's, as the convergence step compares them; both sides with
    `Case.res_doubled_at` where that is set."""
    there = variant_run(case, folder, ".res2x", case.res_doubled_at + case.res_doubled)
    base = (
        variant_run(case, folder, ".res1x", case.res_doubled_at) if case.res_doubled_at else folder
    )
    outputs = case.design()["figure_outputs"]
    if case.probe:
        x, y = case.probe[2:]
        outputs = [
            *outputs,
            {
                "figure_id": "probe",
                "curve_id": y,
                "file": "probe.csv",
                "x_column": x,
                "y_column": y,
            },
        ]
    quantities = conv.compare_folders(outputs, base, there)
    ran = (there / "exit_code").is_file() and (there / "exit_code").read_text().strip() == "0"
    return {"id": conv.RESOLUTION, "ran": ran, "quantities": quantities}


def unconverged(rerun: dict) -> str:
    """What moved beyond its limit at 2x resolution (or why nothing was compared)."""
    if not rerun["ran"]:
        return "the 2x resolution rerun did not finish"
    bad = [q for q in conv.judged(rerun["quantities"]) if q["status"] == "fail"]
    if not bad:
        return "the 2x resolution rerun compared nothing"
    q = headline(bad)
    moved = f"{q['value_n']:.5g} -> {q['value_2n']:.5g}, " if q.get("value_2n") else ""
    return (
        f"at 2x resolution {len(bad)} of {len(conv.judged(rerun['quantities']))} quantities "
        f"moved beyond their limit, among them {q['name']} ({moved}{q['change']:.3g}; "
        f"limit {q['limit']})"
    )


def headline(bad: list[dict]) -> dict:
    """The failed quantity that says most plainly that the run moved: a curve's change
    after the best shift (no feature pairing to go wrong), else the lowest Harminv mode's
    frequency (the band least open to a mismatched pair), else the largest change."""
    curve = [q for q in bad if q["name"].endswith("pointwise max change after the shift")]
    freqs = sorted(
        (q for q in bad if q["name"].endswith(" frequency") and q.get("value_2n") is not None),
        key=lambda q: q["value_n"],
    )
    return (curve or freqs or [max(bad, key=lambda q: q["change"])])[0]


def published_comparison(pub: Published, folder: Path, src: Path | None) -> dict:
    """One published number against this run's own value; the number is checked at its
    file:line in the checkout where the checkout has python/tests."""
    checked = None
    for value, source in [(pub.value, pub.source), *([pub.per] if pub.per else [])]:
        path, line = source.rsplit(":", 1)
        if not (src and (src / path).is_file()):
            continue
        text = (src / path).read_text().splitlines()[int(line) - 1]
        checked = any(
            abs(float(n) - value) <= 1e-12 * max(1.0, abs(value))
            for n in re.findall(r"-?\d+\.\d*(?:e-?\d+)?", text)
        )
        if not checked:
            raise ValueError(f"published {value} is not on {source}: {text.strip()!r}")
    published = pub.sign * pub.value / (pub.per[0] if pub.per else 1.0)
    how, spec = pub.ours
    ours = None
    if how == "mode":
        modes = conv.record_modes(record_checks.load_record(folder))
        same = [m for m in modes if m.get("label", "") == spec]
        near = min(same, key=lambda m: abs(m["freq"] - pub.value), default=None)
        ours = near["freq"] if near else None
    elif how == "printed":
        out = folder / "stdout.txt"
        got = re.search(spec, out.read_text()) if out.is_file() else None
        ours = float(got.group(1)) if got else None
    elif how == "curve":  # the figure's value at that x (the run's own sampling)
        out, x = folder / "out.csv", float(spec)
        data = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2) if out.is_file() else None
        i = int(np.argmin(np.abs(data[:, 0] - x))) if data is not None else 0
        near = data is not None and abs(data[i, 0] - x) <= 1e-6 * abs(x)
        ours = float(data[i, 1]) if near else None
    else:
        raise ValueError(f"{pub.what}: ours {how!r}; valid: mode, printed, curve")
    rel = abs(ours - published) / abs(published) if ours is not None else None
    return {
        "what": pub.what,
        "value": published,
        "source": pub.source + (f" / {pub.per[1]}" if pub.per else ""),
        "source_checked": checked,
        "ours": ours,
        "rel_diff": None if rel is None else round(rel, 6),
        "configuration_differs": pub.differs or "no",
    }


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
    rows = {r["case"]: with_every_alarm(not_run_if_it_did_not(r)) for r in previous}
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


def with_every_alarm(row: dict) -> dict:
    """A kept row written when `alarm_reason` held the false alarms only: the right
    alarms' evidence joins it, as run_case writes it now (and `published`, empty)."""
    published = row.get("published", [])  # kept rows from before it: none; last
    row = {k: v for k, v in row.items() if k != "published"} | {"published": published}
    reason, right = row.get("alarm_reason") or "", row.get("right_alarms") or []
    if row.get("verdict") == "not_run" or not right or right[0] in reason:
        return row
    return row | {"alarm_reason": "; ".join([reason] * bool(reason) + right)}


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
        "with_published_numbers": sum(bool(r.get("published")) for r in ran),
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


def published_lines(rows: list[dict]) -> list[str]:
    """The published numbers against ours, and the cases that have none."""
    have = [r for r in rows if r.get("published")]
    out = ["", "## Against the numbers Meep's python/tests publish", ""]
    out += ["| case | what | published | source | ours | rel. diff | configuration differs |"]
    out += ["|---|---|---|---|---|---|---|"]
    for r in have:
        for p in r["published"]:
            out.append(
                f"| {r['case']} | {p['what']} | {p['value']:.10g} | {p['source']} | "
                f"{'-' if p['ours'] is None else format(p['ours'], '.10g')} | "
                f"{'-' if p['rel_diff'] is None else format(p['rel_diff'], '.3g')} | "
                f"{p['configuration_differs']} |"
            )
    none = [r["case"] for r in rows if not r.get("published")]
    out += ["", f"No published number for the run's configuration: {', '.join(none)}."]
    out += [f"- **{r['case']}**: {r['no_published']}" for r in rows if r.get("no_published")]
    return out


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
        unexplained = r["false_alarm"] or r["verdict"] == "not_run"
        for text in [r["alarm_reason"]] * bool(unexplained) + r["right_alarms"]:
            lines.append(f"- **{r['case']}**: {text}")
    lines += published_lines(result["cases"])
    extra = [
        r
        for r in result["cases"]
        if r.get("exact_comparison") or r.get("longer_run") or r.get("resolution_doubled_run")
    ]
    if extra:
        lines += ["", "## Measured against the example's own truth", ""]
        for r in extra:
            if r.get("exact_comparison"):
                e = r["exact_comparison"]
                lines.append(
                    f"- **{r['case']}**: {e['what']}: {e['error']} (SUCCESS: {e['limit']})"
                )
            if r.get("resolution_doubled_run"):
                g = r["resolution_doubled_run"]
                bad = [q for q in g["quantities"] if q["status"] == "fail"]
                q = headline(bad) if bad else None
                lines.append(
                    f"- **{r['case']}** at 2x resolution ({'; '.join(g['edits'])}): "
                    f"{g['verdict']}"
                    + (f", {q['name']} moved {q['change']:.3g} (limit {q['limit']})" if q else "")
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
