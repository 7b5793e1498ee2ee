"""Quick-check mode through real Snakemake and real Meep: stage 0 and the first
simulation stage at half resolution, the diagnostic plots and debug_summary.json."""

import json

import pytest

from tests.support.pipeline import PAPER, snakemake, write_config

pytestmark = pytest.mark.pipeline
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def debug_run(tmp_path_factory):
    wd = tmp_path_factory.mktemp("debug")
    write_config(
        wd, debug={"enabled": True, "resolution_factor": 0.5, "max_stage_runtime_minutes": 2}
    )
    run = snakemake(wd)
    assert run.returncode == 0, run.stderr[-3000:]
    return wd


def test_quick_check_writes_summary_and_plots(debug_run):
    out = debug_run / "outputs" / "debug" / PAPER
    summary = json.loads((out / "debug_summary.json").read_text())
    assert set(summary["plots"]) == {
        "geometry_check",
        "material_check",
        "source_spectrum",
        "monitor_positions",
    }
    for path in summary["plots"].values():  # workdir-relative, like every path in outputs
        data = (debug_run / path).read_bytes()
        assert (debug_run / path).parent == out and data.startswith(PNG) and len(data) > 5000
    assert summary["stage1_minimal"]["simulation_ran"] is True
    assert summary["stage0_material_validation"]["status"] == "pass"
    # the geometry is what Meep built, at half the design's resolution
    design = json.loads((out / "stages/stage1_single_slab/design.json").read_text())["output"]
    geo = summary["geometry_check"]
    assert geo["structures_created"] == 1 and geo["structure_types"] == ["block"]
    assert geo["resolution_built"] == design["resolution"] * 0.5
    assert geo["dimensions_match_design"] is True
    # only stage 0 and stage 1 ran; no report, nothing under the full run's tree
    assert sorted(p.name for p in (out / "stages").iterdir()) == [
        "stage0_material_validation",
        "stage1_single_slab",
    ]
    assert not list(out.glob("REPRODUCTION_REPORT_*"))
    assert not (debug_run / "outputs" / PAPER).exists()


def test_quick_check_caps_the_run_and_logs_what_happened(debug_run):
    out = debug_run / "outputs" / "debug" / PAPER
    summary = json.loads((out / "debug_summary.json").read_text())
    # the plan gives stage 1 five minutes; the quick check's cap (2) is what the job got
    limits = summary["stage1_minimal"]["quick_check_limits"]
    assert limits and "capped at 2 min" in limits[0]
    result = json.loads((out / "stages/stage1_single_slab/result.json").read_text())
    assert result["timeout_s"] <= 120
    log = (debug_run / summary["debug_log"]).read_text()
    assert (debug_run / summary["debug_log"]) == out / "debug_log.txt"
    for expected in ("# events", "stage1_single_slab: simulate.log", "run/stdout.txt"):
        assert expected in log, expected
