"""The convergence step end to end: real Snakemake reruns one stage at twice the
resolution (real Meep), the stage's verdict judges the result, and the report renders it.

Only stage1_single_slab's verdict is targeted with `checks.convergence: true` (a 1D slab,
seconds at 2x); the Bragg stages at 2x would take minutes. The default policy (auto) on
the whole example is read from the session's offline run: no stage needs a rerun, and
none is pretended.
"""

import json
import math
import os

import numpy as np
import pytest

from reprolab.physics import thresholds as th
from reprolab.physics.record_checks import load_record
from reprolab.report import html as report_html
from reprolab.report import markdown
from tests.support.pipeline import EXAMPLE, PAPER, snakemake, write_config

pytestmark = pytest.mark.pipeline
STAGE = "stage1_single_slab"


@pytest.fixture(scope="module")
def converged(tmp_path_factory):
    wd = tmp_path_factory.mktemp("convergence")
    write_config(wd, checks={"convergence": True, "convergence_method": "refine_2x"})
    target = f"outputs/{PAPER}/stages/{STAGE}/verdict.json"
    run = snakemake(wd, target)
    assert run.returncode == 0, run.stderr[-3000:]
    return wd


def test_stage_rerun_at_twice_the_resolution(converged):
    sd = converged / "outputs" / PAPER / "stages" / STAGE
    conv = json.loads((sd / "convergence.json").read_text())
    assert conv["stage_id"] == STAGE and conv["policy"] == "always", conv
    assert conv["status"] == "converged" and not conv["note"], conv
    assert [v["id"] for v in conv["variants"]] == ["resolution_2x"]  # no Harminv: no PML rerun
    # the rerun really ran at 2x (Meep says so in its log) into its own folder
    rerun = json.loads((sd / "convergence_2x" / "result.json").read_text())
    assert rerun["exit_code"] == 0
    assert conv["extra_meep_seconds"] == pytest.approx(rerun["runtime_seconds"])
    design = json.loads((sd / "design.json").read_text())["output"]
    res = design["resolution"]
    assert f"with resolution {res}\n" in (sd / "run" / "stdout.txt").read_text()
    assert f"with resolution {2 * res}\n" in (sd / "convergence_2x/run/stdout.txt").read_text()
    # T and R pointwise on the paper's digitized x grid, then the Fabry-Perot features
    points = [q for q in conv["quantities"] if q["name"].endswith("pointwise max change")]
    assert len(points) == 2, points
    for point, curve in zip(points, ("T", "R"), strict=True):
        paper_rows = len((EXAMPLE / f"data/fig2_{curve}.csv").read_text().splitlines()) - 1
        assert 0.9 * paper_rows <= point["points"] <= paper_rows
        assert point["status"] == "pass" and point["change"] < th.CONVERGENCE_POINTWISE.warn
    qs = [q for q in conv["quantities"] if q["value_n"] is not None]
    assert len(qs) >= 4, qs
    for q in qs:
        expected = abs(q["value_2n"] - q["value_n"]) / th.CONVERGENCE_RICHARDSON_DIVISOR
        assert math.isclose(q["error_estimate"], expected, rel_tol=1e-9)
        assert q["status"] == "pass", q
    positions = [q for q in qs if q["name"].endswith("position")]
    heights = [q for q in qs if q["name"].endswith("height")]
    # 800 px/a in a 1D slab: positions and heights well inside their limits
    assert positions and max(q["change"] for q in positions) < th.CONVERGENCE_POSITION.warn
    assert heights and max(q["change"] for q in heights) < th.CONVERGENCE_HEIGHT.warn
    verdict = json.loads((sd / "verdict.json").read_text())
    assert verdict["status"] == "completed_success", verdict


def test_a_rerun_that_moved_fails_the_verdict(converged, tmp_path):
    """Attack: the same convergence.json with one curve moved beyond its limit; the
    verdict rule reruns (its input changed) and fails the stage, naming the rerun."""
    import shutil

    wd = tmp_path / "moved"
    shutil.copytree(converged, wd, symlinks=True)
    path = wd / "outputs" / PAPER / "stages" / STAGE / "convergence.json"
    conv = json.loads(path.read_text())
    # the judged pointwise row (the unshifted one is reported only)
    point = next(q for q in conv["quantities"] if q["name"].endswith("after the shift"))
    point.update(change=0.2, relative=0.2, status="fail")
    conv["variants"][0]["quantities"] = conv["quantities"]
    conv["status"] = "not_converged"
    path.write_text(json.dumps(conv))
    os.utime(path)
    run = snakemake(wd, f"outputs/{PAPER}/stages/{STAGE}/verdict.json")
    assert run.returncode == 0, run.stderr[-3000:]
    verdict = json.loads((path.parent / "verdict.json").read_text())
    assert verdict["status"] == "completed_failed", verdict
    assert "convergence:resolution_2x" in verdict["reason"]


def test_report_shows_the_comparison(converged):
    """The report's convergence section as the report rule writes it, from that file."""
    out = converged / "outputs" / PAPER
    md = "\n".join(markdown.convergence_section(out))
    conv = json.loads((out / "stages" / STAGE / "convergence.json").read_text())
    assert "## Convergence (resolution and, for resonances, PML varied)" in md
    for q in conv["quantities"]:
        value = "–" if q["value_n"] is None else f"{q['value_n']:.6g}"
        rerun = "–" if q["value_2n"] is None else f"{q['value_2n']:.6g}"
        row = f"| resolution_2x | {q['name']} | {value} → {rerun} | "
        status = f"reported ({q['status']}), not judged" if q.get("reported") else q["status"]
        assert row + f"{q['change']:.3g} ({q['limit']}) | {status} |" in md
    assert f"**`{STAGE}`**: converged: checks.convergence is true; " in md
    page = report_html.markdown_to_html(md, out, "convergence")
    assert f"{conv['quantities'][0]['change']:.3g}" in page


def test_default_policy_on_the_example(offline_example_run):
    """checks.convergence: auto (the default): every simulation stage of the example is
    resolved far above the warn level and runs no Harminv, so none is rerun, and each
    convergence.json says why (no rerun folder, no pretended numbers)."""
    stages = offline_example_run / "outputs" / PAPER / "stages"
    seen = 0
    for sd in sorted(stages.iterdir()):
        if sd.name.startswith("stage0"):
            assert not (sd / "convergence.json").exists()
            continue
        conv = json.loads((sd / "convergence.json").read_text())
        checks = json.loads((sd / "checks.json").read_text())["checks"]
        ppw = next(c for c in checks if c["name"] == "built:resolution_ppw")
        assert ppw["value"] >= th.PPW_AS_BUILT.warn
        assert conv["policy"] == "auto" and conv["status"] == "not_needed", conv
        assert conv["quantities"] == [] and conv["extra_meep_seconds"] == 0
        assert f"as built {ppw['value']:.4g} pixels per wavelength (>= 15)" in conv["reason"]
        assert not (sd / "convergence_2x").exists() and not (sd / "convergence_pml2x").exists()
        seen += 1
    assert seen == 3


@pytest.mark.parametrize(("change", "status"), [(0.001, "pass"), (0.03, "warn"), (0.15, "fail")])
def test_pointwise_change_between_resolutions_fails(change, status):
    """A curve that moves by 0.15 between N and 2N (what under-resolution did in the
    probe) fails; the old feature-only comparison could at most warn."""
    from reprolab.physics.convergence import pointwise

    x = np.linspace(0.4, 0.9, 101)
    y = 0.5 + 0.4 * np.sin(20 * x)
    q = pointwise("fig/T", x, y, x, y + change * np.max(np.abs(y)) * np.cos(20 * x) ** 2)
    assert q["status"] == status
    assert q["relative"] == pytest.approx(change, rel=0.05)


@pytest.fixture(scope="module")
def coarse(tmp_path_factory):
    wd = tmp_path_factory.mktemp("coarse")
    write_config(wd, checks={"convergence": True, "convergence_method": "coarse"})
    run = snakemake(wd, f"outputs/{PAPER}/stages/{STAGE}/verdict.json")
    assert run.returncode == 0, run.stderr[-3000:]
    return wd


def test_stage_verified_by_two_coarser_runs(coarse):
    """checks.convergence_method: coarse: the stage really reruns at the configured 0.75x
    and 0.55x of its resolution, each moved to whole pixels of its cell, each quantity
    gets its Richardson error estimate and observed order, the verdict judges it and the
    report shows the estimate."""
    sd = coarse / "outputs" / PAPER / "stages" / STAGE
    conv = json.loads((sd / "convergence.json").read_text())
    assert [v["id"] for v in conv["variants"]] == ["resolution_coarse"], conv
    assert conv["scale"] == [0.75, 0.55] and conv["status"] == "converged", conv
    assert conv["method"] == "coarse"
    var = conv["variants"][0]
    res = json.loads((sd / "design.json").read_text())["output"]["resolution"]
    cells = [s["cell"] for s in load_record(sd / "run")]
    for nominal, s in zip((0.75, 0.55), var["scales"], strict=True):
        assert abs(s - nominal) <= 0.05
        for cell in cells:  # every side whole pixels at the rerun's resolution
            for side in (c for c in cell if c):
                assert s * res * side == pytest.approx(round(s * res * side), abs=1e-6)
        rerun = json.loads((sd / f"convergence_{nominal:g}x" / "result.json").read_text())
        assert rerun["exit_code"] == 0 and rerun["scale_env"] == {
            "REPROLAB_RESOLUTION_SCALE": f"{s:.10g}"
        }
        log = (sd / f"convergence_{nominal:g}x" / "run" / "stdout.txt").read_text()
        assert f"with resolution {s * res:g}" in log
    qs = conv["quantities"]
    assert any(q["name"].endswith("pointwise max change") for q in qs)
    for q in qs:
        assert q["variant"] == "resolution_coarse" and len(q["values_coarse"]) == 2
        assert q["error_estimate"] == q["change"] and q["status"] != "fail", q
    assert conv["extra_meep_seconds"] == pytest.approx(conv["variants"][0]["runtime_seconds"])
    runs = conv["variants"][0]["runs"]  # predicted (pixels x steps) beside actual seconds
    assert [r["scale"] for r in runs] == var["scales"]
    assert all(r["predicted_seconds"] > 0 and r["runtime_seconds"] > 0 for r in runs)
    verdict = json.loads((sd / "verdict.json").read_text())
    assert verdict["status"] == "completed_success", verdict
    md = "\n".join(markdown.convergence_section(coarse / "outputs" / PAPER))
    q = qs[0]
    assert f"| resolution_coarse | {q['name']} | " in md
    assert f"error bound {q['error_estimate']:.3g}" in md and f"{var['scales'][1]:g}x: " in md


def test_report_shows_the_error_beside_the_figure_numbers(coarse):
    """The figure's section lists each reproduced number with its estimated error; a
    stage without convergence evidence adds nothing."""
    from reprolab.report import discretisation

    sd = coarse / "outputs" / PAPER / "stages" / STAGE
    conv = json.loads((sd / "convergence.json").read_text())
    fig = conv["quantities"][0]["name"].split("/")[0]
    md = "\n".join(discretisation.error_lines(fig, sd))
    rows = discretisation.figure_rows(fig, conv)
    assert rows
    for q in rows:
        assert f"| {q['name'][len(fig) + 1 :]} | " in md
        assert f"| {q['error_estimate']:.3g} | " in md
    assert discretisation.error_lines(fig, sd / "run") == []


def test_a_rerun_stopped_by_its_limit_is_no_evidence(converged, tmp_path, monkeypatch):
    """The 2x rerun gets a limit from its own size (the run's time times what 2x costs,
    with sizing's margin); stopped at it, it is 'no evidence' in one line (no log, no
    traceback): a warning the stage's reason carries, never a pass."""
    import shutil
    from types import SimpleNamespace

    from reprolab.artifacts import load_design, load_result
    from reprolab.jobs import stage_run
    from reprolab.jobs.failures import failure
    from reprolab.jobs.sizing import TIME_MARGIN
    from reprolab.physics import convergence as conv_mod
    from reprolab.steps import convergence

    src = converged / "outputs" / PAPER / "stages" / STAGE
    sd = tmp_path / STAGE
    shutil.copytree(src, sd, symlinks=True)
    shutil.rmtree(sd / "convergence_2x")
    asked = {}
    log = "Traceback (most recent call last):\n  File 'simulation.py'\nKeyboardInterrupt\n"

    def stopped(design, budget_minutes, sim_cfg, script, folder):
        asked["budget_min"] = budget_minutes
        return {
            "exit_code": -9,
            "runtime_seconds": budget_minutes * 60,
            "timeout_s": budget_minutes * 60,
            "failure": failure("timeout", "stopped after its limit", log),
        }

    monkeypatch.setattr(stage_run, "run_stage", stopped)
    design = load_design(sd / "design.json").output
    run = SimpleNamespace(config={}, paper_id=PAPER, out_dir=tmp_path)
    plan = converged / "outputs" / PAPER / "plan.json"
    var = convergence.run_variant(run, conv_mod.RESOLUTION, design, sd / "simulation.py", plan, sd)
    base = load_result(sd / "result.json").to_json()
    charged = (base.get("time_limit") or {}).get("charged_s") or base["runtime_seconds"]
    own_size = charged * 2 ** (design.dimensions + 1) * TIME_MARGIN / 60
    assert asked["budget_min"] >= own_size
    assert var["no_evidence"] == "timeout" and not var["quantities"] and not var["ran"]
    assert "\n" not in var["note"] and "Traceback" not in var["note"]
    assert var["note"].startswith("no evidence: the resolution_2x rerun was stopped")
    conv = {"status": conv_mod.NO_EVIDENCE, "variants": [var], "quantities": []}
    checks, note = conv_mod.with_convergence({"checks": [], "verdict": "pass"}, conv)
    assert checks["verdict"] == "warn" and checks["convergence"] == "no_evidence"
    assert note.startswith("convergence: no evidence") and "Traceback" not in note
    result = {"variants": [], "quantities": [], "extra_meep_seconds": 0.0, "scale": 2}
    monkeypatch.setattr(convergence, "run_variants", lambda names, *a: [var])
    convergence.resolution_evidence(
        result, [conv_mod.RESOLUTION], (run, design, sd / "simulation.py", plan, sd)
    )
    assert result["status"] == conv_mod.NO_EVIDENCE, result
