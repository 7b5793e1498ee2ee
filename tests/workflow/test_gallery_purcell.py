"""The Purcell-factor example (purcell_mirrors_2026: an Ez line source at the mid-plane
between two perfect mirrors L apart, F against L/λ on a log axis; the paper's points
by the method of images, its reference curve the mode sum, both analytic) through the
real pipeline offline: real Snakemake, real Meep (dft_ldos between metal plates and in
vacuum, 24 px/a, and the convergence evidence every LDOS stage gets), the replay
recordings.

The correct run is SUCCESS within 1 % everywhere on the log axis, agrees with the
paper's data and its mode sum, and raises no check above pass. Wrong on purpose,
reusing the finished stage (a copy of it; Meep reruns only the changed script):

- the reference run in a medium of index 1.5: `built:purcell_normalisation` fails
  and so does the stage. The comparison alone does not see it: in 2D the LDOS of an Ez
  line current, ωμ|I|²/8, does not depend on the medium's index, so the wrong ratio is
  within 2.5 % of the right one (grid dispersion only) and compares as SUCCESS;
- no reference run, the raw LDOS reported as F: the check fails (no homogeneous run)
  and the comparison is FAILURE on its own (the 2D vacuum LDOS grows with frequency);
- the weak half (F < 1) of the real curve 50 % high: FAILURE on the log axis, where
  the difference is ln 1.5 = 0.41 wherever it is off, however small F is there
  (synthetic curves over three decades: tests/physics/test_positions.py).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from reprolab.artifacts import load_plan
from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics import record_checks
from reprolab.report import markdown
from reprolab.settings import paper_run
from reprolab.steps.checks import run_checks
from reprolab.steps.compare import compare_stage
from reprolab.steps.verdict import stage_status
from tests.support.pipeline import run_to_report

REPO = Path(__file__).parents[2]
PAPER = "purcell_mirrors_2026"
EXAMPLE = REPO / "examples" / "papers" / PAPER
STAGE = "stage1_purcell"
# Changes to the script that ran; each must match once (the test fails if it does not).
WRONG = {
    "reference_in_n_1_5": (
        "sim = mp.Simulation(cell_size=cell, resolution=RES, geometry=geometry,",
        "sim = mp.Simulation(cell_size=cell, resolution=RES, geometry=geometry, "
        "default_material=mp.Medium(index=1.0 if plates else 1.5),",
    ),
    "raw_ldos": (
        "plates, vacuum = ldos(True), ldos(False)",
        "plates = ldos(True)\nvacuum = np.ones_like(plates)  # no reference run",
    ),
}

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def purcell_run(tmp_path_factory) -> Path:
    return run_to_report(tmp_path_factory.mktemp("purcell"), EXAMPLE, PAPER, "Purcell factor paper")


def stage_dir(wd: Path) -> Path:
    return wd / "outputs" / PAPER / "stages" / STAGE


def _stage_copy(wd: Path, dest: Path) -> Path:
    """The finished stage copied to `dest` (paths in its artifacts stay relative to
    the run's folder, which the checks and comparison below do not follow)."""
    shutil.copytree(stage_dir(wd), dest, ignore=shutil.ignore_patterns("convergence_2x"))
    return dest


@pytest.fixture(scope="module")
def wrong_runs(purcell_run, tmp_path_factory) -> dict[str, Path]:
    """Each wrong script run by real Meep in a copy of the stage (one Python process),
    then checked and compared as the pipeline does."""
    base = tmp_path_factory.mktemp("wrong")
    script = (stage_dir(purcell_run) / "simulation.py").read_text()
    stages = {}
    for name, (old, new) in WRONG.items():
        assert script.count(old) == 1, f"{name}: the script no longer has {old!r}"
        stage = _stage_copy(purcell_run, base / name)
        shutil.rmtree(stage / "run")
        shutil.rmtree(stage / "run.record")
        (stage / "run").mkdir()
        (stage / "run" / "sim.py").write_text(script.replace(old, new))
        stages[name] = stage
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.planted.driver",
            *(str(s / "run") for s in stages.values()),
        ],
        check=True,
        timeout=300,
        cwd=REPO,
    )
    config = yaml.safe_load((purcell_run / "config.yaml").read_text())
    for stage in stages.values():
        code = (stage / "run" / "exit_code").read_text()
        assert code == "0", (stage / "run" / "stderr.txt").read_text()[-3000:]
        shutil.copy(stage / "run" / "sim.py", stage / "run" / "simulation.py")
        for out in ("checks.json", "comparison.json"):
            (stage / out).unlink()
        # artifacts name their files relative to the run's folder (the lint reads the
        # code that was reviewed; the record is the wrong script's)
        with contextlib.chdir(purcell_run):
            run = paper_run(config, PAPER)
            run_checks(
                run,
                stage / "result.json",
                stage / "code.json",
                stage / "design.json",
                stage / "checks.json",
            )
            compare_stage(
                run, stage / "design.json", stage / "checks.json", stage / "comparison.json"
            )
    return stages


def _checks(stage: Path) -> dict:
    return {c["name"]: c for c in read_json(stage / "checks.json")["checks"]}


def _status(wd: Path, stage: Path) -> tuple[str, str]:
    """The stage's status and reason as the verdict step decides them."""
    plan = load_plan(wd / "outputs" / PAPER / "plan.json")
    (planned,) = [s for s in plan.stages if s.stage_id == STAGE]
    return stage_status(
        planned, read_json(stage / "checks.json"), read_json(stage / "comparison.json")
    )


def _compare_csv(purcell_run, tmp_path, csv_text: str) -> Path:
    """A copy of the stage compared again with `csv_text` as its purcell.csv (its
    checks as they passed)."""
    stage = _stage_copy(purcell_run, tmp_path / STAGE)
    (stage / "run" / "purcell.csv").write_text(csv_text)
    run = SimpleNamespace(paper=Paper(EXAMPLE))
    compare_stage(run, stage / "design.json", stage / "checks.json", stage / "comparison.json")
    return stage


def test_purcell_is_reproduced_on_the_log_axis(purcell_run):
    stage = stage_dir(purcell_run)
    assert read_json(stage / "verdict.json")["status"] == "completed_success"
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "SUCCESS"
    (curve,) = fig["curves"]
    assert curve["compared_as"] == "log"
    assert curve["metrics"]["max_abs_rel"] < 0.01  # every point within 1 %
    (key,) = curve["key_values"]
    assert key["class"] == "SUCCESS" and key["sim"] == pytest.approx(0.7351, rel=0.005)
    (ref,) = curve["references"]
    assert ref["agrees_with"] == "both" and ref["paper_agrees_with_reference"] is True
    checks = read_json(stage / "checks.json")
    assert checks["verdict"] == "pass"
    noisy = [c for c in checks["checks"] if c["status"] != "pass"]
    assert not noisy, noisy  # no false alarm on the correct run
    by_name = _checks(stage)
    assert "homogeneous simulation 1 (n = 1" in by_name["built:purcell_normalisation"]["detail"]
    assert by_name["built:emitter_resolution"]["value"] == pytest.approx(12.0)  # 0.5 a at 24/a
    assert by_name["traceable:purcell.csv:purcell"]["status"] == "pass"
    convergence = read_json(stage / "convergence.json")
    assert convergence["status"] == "converged" and "LDOS stage" in convergence["reason"]
    report = (purcell_run / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "y compared in log space" in report
    assert "agrees with the paper's data and its reference" in report
    assert (purcell_run / fig["overlay"]).stat().st_size > 10_000  # relative to the run


def test_the_ldos_of_both_runs_is_in_the_record(purcell_run):
    sims = record_checks.load_record(stage_dir(purcell_run) / "run")
    plates, vacuum = sims
    for s in sims:
        freqs = s["ldos"]["freqs"]
        assert len(freqs) == 19
        assert freqs[0] == pytest.approx(0.55) and freqs[-1] == pytest.approx(1.45)
        (measured,) = [m for m in s["measured"] if m["kind"] == "ldos"]
        assert len(measured["values"]) == 19 and min(measured["values"]) > 0
    assert len(plates["geometry"]) == 2 and not vacuum["geometry"]
    assert plates["resolution"] == vacuum["resolution"] == 24
    # F is the ratio of the two recorded spectra, as purcell.csv reports it
    f = np.array(plates["measured"][0]["values"]) / np.array(vacuum["measured"][0]["values"])
    data = np.genfromtxt(stage_dir(purcell_run) / "run" / "purcell.csv", delimiter=",", names=True)
    assert np.allclose(data["purcell"], f, rtol=1e-6)


def test_reference_in_another_medium_fails_the_normalisation(wrong_runs, purcell_run):
    stage = wrong_runs["reference_in_n_1_5"]
    check = _checks(stage)["built:purcell_normalisation"]
    assert check["status"] == "fail"
    assert check["detail"] == "reference simulation 1 is in n = 1.5, not 1"
    status, reason = _status(purcell_run, stage)
    assert status == "completed_failed"
    # and the grid: 24/a is 11 pixels per wavelength in n = 1.5 (fails under 12), and the
    # reference's n = 1.5 medium is none the material gate approved
    assert reason == (
        "checks failed: built:resolution_ppw, built:purcell_normalisation, "
        "built:materials_as_approved"
    )
    # The comparison alone passes it: the 2D Ez LDOS does not depend on the index.
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "SUCCESS"
    assert 0.005 < fig["curves"][0]["metrics"]["max_abs_rel"] < 0.03


def test_raw_ldos_without_a_reference_fails_check_and_comparison(wrong_runs, purcell_run):
    stage = wrong_runs["raw_ldos"]
    check = _checks(stage)["built:purcell_normalisation"]
    assert check["status"] == "fail"
    assert "1 LDOS run(s) with a structure and 0 in a homogeneous medium" in check["detail"]
    status, reason = _status(purcell_run, stage)
    assert status == "completed_failed" and "built:purcell_normalisation" in reason
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "FAILURE"
    (curve,) = fig["curves"]
    assert curve["metrics"]["max_abs_rel"] > 0.3  # ln F_paper / LDOS: up to ln(1/0.55)
    (ref,) = curve["references"]
    assert ref["agrees_with"] == "neither"


def _weak_half_high(purcell_run) -> str:
    head, *rows = (stage_dir(purcell_run) / "run" / "purcell.csv").read_text().splitlines()
    out = [head]
    for row in rows:
        f, a, b, p = (float(v) for v in row.split(","))
        out.append(f"{f:.8g},{a:.8g},{b:.8g},{p * 1.5 if p < 1 else p:.8g}")
    return "\n".join(out) + "\n"


def test_weak_half_fifty_percent_high_is_not_success_on_the_log_axis(purcell_run, tmp_path):
    stage = _compare_csv(purcell_run, tmp_path, _weak_half_high(purcell_run))
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "FAILURE"
    assert _status(purcell_run, stage) == ("completed_failed", "fig1: FAILURE")
    (curve,) = fig["curves"]
    assert curve["compared_as"] == "log"
    assert curve["metrics"]["max_abs_rel"] == pytest.approx(np.log(1.5), abs=0.01)
    assert curve["classes"]["rms_rel"] == curve["classes"]["max_abs_rel"] == "FAILURE"
    text = "\n".join(markdown.figure_section("fig1", "purcell", STAGE, fig, [], ""))
    assert "FAILURE" in text and "y compared in log space" in text


def test_example_declares_a_log_axis_and_its_reference():
    meta = yaml.safe_load((EXAMPLE / "metadata.yaml").read_text())
    (fig,) = meta["figures"]
    assert fig["y_axes"]["left"]["scale"] == "log"
    assert fig["x_axis"]["quantity"] == "length_ratio"
    assert [c.get("reference", False) for c in fig["curves"]] == [False, True]


def test_paper_data_is_what_its_script_computes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_purcell", EXAMPLE / "make_paper_data.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    x, modes = np.loadtxt(EXAMPLE / "data" / "fig1_mode_sum.csv", delimiter=",", skiprows=1).T
    x_images, images = np.loadtxt(EXAMPLE / "data" / "fig1_images.csv", delimiter=",", skiprows=1).T
    assert np.array_equal(x, x_images)
    # each file is its formula to the 4 decimals written; the two agree within 1.1e-4
    assert np.allclose(modes, [script.mode_sum(v) for v in x], rtol=0, atol=5e-5)
    assert np.allclose(images, [script.image_sum(v) for v in x], rtol=0, atol=5e-5)
    assert np.allclose(images, modes, rtol=1.2e-4, atol=0)
    assert script.mode_sum(1.0) == pytest.approx(2 / np.pi / np.sqrt(0.75))
    assert script.image_sum(1.0) == pytest.approx(script.mode_sum(1.0), rel=1e-4)
