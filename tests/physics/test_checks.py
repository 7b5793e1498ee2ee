from pathlib import Path

from reprolab.physics.checks import run_checks


def write_csv(path: Path, header: str, rows: list[tuple]) -> None:
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")


def record_for(workdir: Path, exit_code=0, stderr="") -> dict:
    files = [{"name": p.name, "bytes": p.stat().st_size, "sha256": "x"} for p in workdir.iterdir()]
    return {
        "exit_code": exit_code,
        "timed_out": False,
        "timeout_s": 60,
        "stdout_tail": "",
        "stderr_tail": stderr,
        "output_files": files,
    }


def statuses(result):
    return {c["name"].split(":")[0]: c["status"] for c in result["checks"]}


def test_correct_lossless_spectrum_passes(tmp_path):
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, 0.6, 0.4), (0.6, 0.9, 0.1)])
    result = run_checks(record_for(tmp_path), tmp_path, ["s.csv"], lossless=True)
    assert result["verdict"] == "pass", result


def test_energy_not_conserved_fails(tmp_path):
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, 0.6, 0.3), (0.6, 0.9, 0.1)])
    result = run_checks(record_for(tmp_path), tmp_path, ["s.csv"], lossless=True)
    assert statuses(result)["energy_conservation"] == "fail"
    assert result["verdict"] == "fail"


def test_lossy_allows_absorption_but_not_gain(tmp_path):
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, 0.5, 0.3)])
    assert (
        run_checks(record_for(tmp_path), tmp_path, ["s.csv"], lossless=False)["verdict"] == "pass"
    )
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, 0.8, 0.3)])
    result = run_checks(record_for(tmp_path), tmp_path, ["s.csv"], lossless=False)
    assert statuses(result)["absorption_nonnegative"] == "fail"


def test_unnormalised_transmission_out_of_bounds(tmp_path):
    # A run stopped too early gave T = 117 (docs/checks.md, measured table row 2).
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, 117.0, -1.0)])
    result = run_checks(record_for(tmp_path), tmp_path, ["s.csv"], lossless=True)
    assert statuses(result)["bounds_T"] == "fail"
    assert statuses(result)["bounds_R"] == "fail"


def test_nan_missing_output_and_exit_code(tmp_path):
    write_csv(tmp_path / "s.csv", "wavelength_um,T,R", [(0.5, "nan", 0.1)])
    rec = record_for(tmp_path, exit_code=1, stderr="meep: fields are NaN or Inf")
    result = run_checks(rec, tmp_path, ["s.csv", "missing.csv"], lossless=True)
    st = statuses(result)
    assert st["exit_code"] == "fail"
    assert st["meep_nan"] == "fail"
    assert st["finite"] == "fail"
    assert st["output_present"] == "fail"  # the last one recorded is missing.csv
