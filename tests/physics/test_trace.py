"""Outputs traced to what the monitors measured (reprolab.physics.trace), on records and
outputs written by hand: each derived quantity a script may report passes, and each
made-up one (numbers Meep never measured, the paper's own curve) fails by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from reprolab.physics import checks, trace
from reprolab.physics.record_store import Assembler, key_line, record_path, signed_line

FREQS = np.linspace(1.1, 2.2, 30)
INC = 1.0 + 0.3 * np.sin(3 * FREQS)
TRAN = 0.6 * INC * (1 + 0.2 * np.cos(7 * FREQS))
REFL = -(INC - TRAN) * 0.9  # a little absorption
DESIGN = {
    "stage_id": "stage1_x",
    "unit_length_um": 1.0,
    "figure_outputs": [
        {
            "figure_id": "f",
            "curve_id": "c",
            "file": "s.csv",
            "x_column": "wavelength_um",
            "y_column": "Y",
        }
    ],
}


FIELDS = {
    "dimensions": 1,
    "resolution": 10,
    "cell": [0, 0, 10],
    "sources": [],
    "monitors": [],
    "geometry": [],
    "boundary_layers": [],
    "boundaries": {},
    "symmetries": [],
    "default_material": {},
}
"""A simulation's fields as the recorder sends them (each kind the launcher requires)."""


def flux(monitor: int, values, t: float = 100.0, freqs=FREQS) -> dict:
    return {
        "kind": "flux",
        "monitor": monitor,
        "sim_time": t,
        "freqs": list(freqs),
        "values": list(values),
    }


def sims(measured_norm, measured_struct) -> list[dict]:
    base = {"sources": [], "monitors": [], "runs": [{"harminv": []}]}
    return [
        {**base, "_id": 1, "index": 0, "measured": measured_norm},
        {**base, "_id": 2, "index": 1, "measured": measured_struct},
    ]


def write_record(workdir, simulations) -> None:
    path = record_path(workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "simulations": simulations}))


def write_csv(workdir, xs, ys, fmt="%.8g", name="s.csv", x="wavelength_um") -> None:
    np.savetxt(
        workdir / name,
        np.column_stack([xs, ys]),
        delimiter=",",
        header=f"{x},Y",
        comments="",
        fmt=fmt,
    )


@pytest.fixture
def run(tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir()
    write_record(workdir, sims([flux(1, INC)], [flux(1, TRAN), flux(0, REFL)]))
    return workdir


def status(workdir, design=DESIGN, paper=None) -> tuple[str, str]:
    (c,) = trace.trace_checks(workdir, design, paper)
    assert c.name == "traceable:s.csv:Y"
    return c.status, c.detail


@pytest.mark.parametrize(
    ("what", "ys"),
    [
        ("T", TRAN / INC),
        ("R", -REFL / INC),
        ("A = 1 - R - T", 1 - (-REFL / INC) - TRAN / INC),
        ("cross section (a constant times a ratio)", 2.7 * TRAN / INC),
        ("raw flux", TRAN),
    ],
)
def test_derived_spectra_are_traced(run, what, ys):
    write_csv(run, 1 / FREQS, ys)
    assert status(run) == ("pass", status(run)[1]), what


def test_values_written_to_four_decimals_are_traced(run):
    write_csv(run, 1 / FREQS, TRAN / INC, fmt="%.4f")
    assert status(run)[0] == "pass"


def test_frequency_column_and_interpolated_rows(run):
    """x in c/a; rows between monitored frequencies may lie anywhere between the two."""
    design = {**DESIGN, "figure_outputs": [{**DESIGN["figure_outputs"][0], "x_column": "freq"}]}
    mid = (FREQS[:-1] + FREQS[1:]) / 2
    t = TRAN / INC
    write_csv(run, mid, (t[:-1] + t[1:]) / 2, x="freq")
    assert status(run, design)[0] == "pass"
    write_csv(run, mid, (t[:-1] + t[1:]) / 2 + 0.05, x="freq")
    assert status(run, design)[0] == "fail"


def test_made_up_values_fail_by_name(run):
    """A smooth curve near the real one (an analytic formula, a hand-typed spectrum)."""
    write_csv(run, 1 / FREQS, TRAN / INC + 0.003)
    state, detail = status(run)
    assert state == "fail" and detail.startswith(trace.NOT_TRACEABLE)
    assert "of 30 values of Y in s.csv match no measured value" in detail


def test_one_changed_value_fails(run):
    ys = TRAN / INC
    ys[11] += 0.01
    write_csv(run, 1 / FREQS, ys)
    state, detail = status(run)
    assert state == "fail" and "1 of 30" in detail and "row 12" in detail


def test_paper_curve_repeated_fails_even_where_it_matches(run):
    """The paper's digitized curve (same grid, same values) is refused although its
    values are the measured ones: no simulation repeats a digitization exactly."""
    xs, ys = 1 / FREQS, TRAN / INC
    write_csv(run, xs, ys, fmt="%.6f")
    paper = {("f", "c"): (list(xs), list(np.round(ys, 6)))}
    state, detail = status(run, paper=paper)
    assert state == "fail" and "repeats the paper's digitized curve" in detail
    near = {("f", "c"): (list(xs), list(ys + 0.01))}  # a real simulation's distance
    assert status(run, paper=near)[0] == "pass"


def test_sweep_rows_are_traced_to_their_own_point(tmp_path):
    run = tmp_path / "run"
    (run / "points").mkdir(parents=True)
    values = []
    for i in range(3):
        point = run / "points" / f"p{i:03d}"
        point.mkdir()
        inc, tran = 2.0, 0.5 + 0.1 * i
        write_record(point, sims([flux(1, [inc], freqs=[1.5])], [flux(1, [tran], freqs=[1.5])]))
        values.append(tran / inc)
    design = {**DESIGN, "figure_outputs": [{**DESIGN["figure_outputs"][0], "x_column": "n"}]}
    write_csv(run, [1, 2, 3], values, fmt="%.6f", x="n")
    assert status(run, design)[0] == "pass"
    write_csv(run, [1, 2, 3], values[::-1], fmt="%.6f", x="n")  # each row another point's
    assert status(run, design)[0] == "fail"


def test_field_map_traced_to_the_dft_digest(tmp_path):
    h5py = pytest.importorskip("h5py")
    run = tmp_path / "run"
    run.mkdir()
    z = np.linspace(-1, 1, 50)
    fs = [1.2, 1.6]
    inc = [np.full(50, 2.0) for _ in fs]
    struct = [np.exp(-(z**2) * f) + 0.1 for f in fs]

    def dft(arr, f, k):
        return {"kind": "dft_field", "monitor": 0, "sim_time": 1.0, "component": 0,
                "freq_index": k, "freq": f, "shape": [50], "stride": 1,
                "sampled_shape": [50], "abs2": list(arr), "sum_abs2": float(arr.sum())}  # fmt: skip

    write_record(
        run,
        sims(
            [dft(a, f, k) for k, (a, f) in enumerate(zip(inc, fs, strict=True))],
            [dft(a, f, k) for k, (a, f) in enumerate(zip(struct, fs, strict=True))],
        ),
    )
    fo = {"figure_id": "f", "curve_id": "m", "file": "m.h5", "x_column": "z_um",
          "y_column": "wavelength_um", "dataset": "E2"}  # fmt: skip
    design = {**DESIGN, "figure_outputs": [fo]}
    for data, want in (
        (np.array(struct) / np.array(inc), "pass"),
        (np.outer([1.0, 2.0], 1 + z**2), "fail"),
    ):
        with h5py.File(run / "m.h5", "w") as h5:
            h5["z_um"], h5["wavelength_um"], h5["E2"] = z, 1 / np.array(fs), data
        (c,) = trace.trace_checks(run, design)
        assert (c.name, c.status) == ("traceable:m.h5:E2", want), c.detail


def test_no_record_fails_when_the_design_simulates(tmp_path):
    """The record's absence is a failing check, never a silent skip; a forged record in
    the run folder does not count."""
    run = tmp_path / "run"
    run.mkdir()
    write_csv(run, 1 / FREQS, TRAN / INC)
    (run / "as_built.json").write_text(json.dumps({"version": 1, "simulations": sims([], [])}))
    record = {"exit_code": 0, "timed_out": False, "stdout_tail": "", "stderr_tail": "",
              "output_files": [{"name": "s.csv", "bytes": 10}]}  # fmt: skip
    result = checks.run_checks(record, run, ["s.csv"], True, design=DESIGN)
    by_name = {c["name"]: c for c in result["checks"]}
    assert by_name["built:record_present"]["status"] == "fail"
    assert result["verdict"] == "fail"
    stage0 = checks.run_checks(
        record, run, ["s.csv"], True, design={**DESIGN, "runs_simulation": False}
    )
    assert "built:record_present" not in {c["name"] for c in stage0["checks"]}
    # the material validation evaluates the models alone, whatever FDTD parameters it names
    material = {**DESIGN, "stage_id": "stage0_material_validation", "resolution": 100}
    materials = checks.run_checks(record, run, ["s.csv"], True, design=material)
    assert not any(c["name"].startswith(("built:", "traceable:")) for c in materials["checks"])


def test_assembler_keeps_each_folder_to_itself(tmp_path):
    a, b = tmp_path / "run" / "points" / "p000", tmp_path / "run" / "points" / "p001"
    asm = Assembler([str(a), str(b)])
    key = b"k" * 32
    run = {"event": "run", "sim": 1, "fields": FIELDS, "runs": [{"x": 1}]}
    asm.feed(key_line(key))
    for event in (
        {"event": "begin", "workdir": str(b)},
        run,
        {"event": "measured", "sim": 1, "values": [flux(0, [1.0], freqs=[1.0])]},
        {"event": "measured", "sim": 7, "values": [flux(0, [9.0], freqs=[1.0])]},  # never ran
        {"event": "begin", "workdir": str(tmp_path / "elsewhere")},
        run,  # ignored: not a folder of this job
    ):
        asm.feed(signed_line(key, event))
    asm.feed(signed_line(key, {"event": "begin", "workdir": str(b)}))
    asm.feed(b"{not json")
    asm.feed(b"x" * (17 * 1024 * 1024))
    written = asm.write()
    assert written == [record_path(a), record_path(b)]
    # a begin for a folder not of this job is refused for every folder of the job
    other = json.loads(record_path(a).read_text())
    assert other["simulations"] == [] and other["channel_refused"][0].startswith("begin for")
    rec = json.loads(record_path(b).read_text())
    (sim,) = rec["simulations"]
    assert sim["resolution"] == 10 and sim["runs"] == [{"x": 1}] and len(sim["measured"]) == 1
    assert len(rec["channel_refused"]) == 4, rec["channel_refused"]
