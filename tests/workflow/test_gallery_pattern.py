"""The radiation-pattern example (dipole_array_pattern_2026: three in-phase line
currents 2λ/3 apart, the analytic array factor as the paper's pattern and as its
reference curve, on a polar figure in dB) through the real pipeline offline: real
Snakemake, real Meep (a closed near-to-far box, the far field at 1000 a every degree),
the replay recordings.

The correct run is SUCCESS: every lobe and null matched on the whole turn (the main
lobe at 0°), compared in dB, shifts relative to a full turn; it agrees with the paper's
data and its reference; the far field's power over the turn balances the power through
the near box; no check raises a false alarm. Wrong on purpose, reusing the
run: the paper's pattern rotated by 10° (only the comparison is run again, on a copy of
the finished stage) is not SUCCESS and its report says the reproduction agrees with the
paper's reference, not its data; a design whose far field is taken at 2 wavelengths
fails `built:far_field_is_far` on the run's own record.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics import record_checks
from reprolab.report import markdown
from reprolab.steps.compare import compare_stage
from tests.support.builders import copy_paper
from tests.support.pipeline import run_to_report

REPO = Path(__file__).parents[2]
PAPER = "dipole_array_pattern_2026"
EXAMPLE = REPO / "examples" / "papers" / PAPER
STAGE = "stage1_pattern"

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def pattern_run(tmp_path_factory) -> Path:
    return run_to_report(
        tmp_path_factory.mktemp("pattern"), EXAMPLE, PAPER, "radiation pattern paper"
    )


def stage_dir(wd: Path) -> Path:
    return wd / "outputs" / PAPER / "stages" / STAGE


def test_pattern_is_reproduced_on_the_whole_turn(pattern_run):
    stage = stage_dir(pattern_run)
    assert read_json(stage / "verdict.json")["status"] == "completed_success"
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "SUCCESS"
    (curve,) = fig["curves"]
    assert curve["compared_as"] == "db"
    # on the circle: -180° and 180° are one angle, the seam is no edge
    peaks = {round(f["x_paper"]) % 360 for f in curve["features"] if f["kind"] == "peak"}
    assert {0, 180, 49, 311} <= peaks  # the main lobe at 0°, the back lobe, the side lobes
    assert {f["shift_basis"] for f in curve["features"]} == {"turn"}
    assert curve["metrics"]["feature_shift_rel"] < 0.01
    (ref,) = curve["references"]
    assert ref["agrees_with"] == "both" and ref["paper_agrees_with_reference"] is True
    checks = read_json(stage / "checks.json")
    assert checks["verdict"] == "pass"
    by_name = {c["name"]: c for c in checks["checks"]}
    for name in (
        "built:near_surface_encloses_sources",
        "built:far_field_is_far",
        "built:near_far_power_balance",
    ):
        assert by_name[name]["status"] == "pass", by_name[name]
    # the far field over the whole turn carries the power through the near box: 3.9 %
    assert by_name["built:near_far_power_balance"]["value"] == pytest.approx(0.039, abs=0.005)
    assert by_name["traceable:pattern.csv:power"]["status"] == "pass"
    report = (pattern_run / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "relative to a full turn" in report and "agrees with the paper's data and its" in report
    assert (pattern_run / fig["overlay"]).stat().st_size > 10_000  # relative to the run


def test_pattern_rotated_by_ten_degrees_is_not_success(pattern_run, tmp_path):
    paper_dir = tmp_path / "paper"
    copy_paper(paper_dir, EXAMPLE)
    csv = paper_dir / "data" / "fig1_pattern.csv"
    head, *rows = csv.read_text().splitlines()
    moved = []
    for row in rows:
        angle, value = row.split(",")
        moved.append(f"{(float(angle) + 10 + 180) % 360 - 180:g},{value}")
    csv.write_text("\n".join([head, *moved]) + "\n")
    run = SimpleNamespace(paper=Paper(paper_dir))
    stage = tmp_path / STAGE
    shutil.copytree(stage_dir(pattern_run), stage)
    compare_stage(run, stage / "design.json", stage / "checks.json", stage / "c.json")
    (fig,) = read_json(stage / "c.json")["figures"]
    assert fig["classification"] != "SUCCESS"
    (curve,) = fig["curves"]
    assert curve["classes"]["feature_shift_rel"] != "SUCCESS"
    assert curve["metrics"]["feature_shift_rel"] == pytest.approx(10 / 360, rel=0.1)
    (ref,) = curve["references"]
    assert ref["agrees_with"] == "paper reference"
    assert ref["paper_agrees_with_reference"] is False
    text = "\n".join(markdown.figure_section("fig1", "pattern", STAGE, fig, [], ""))
    assert "agrees with the paper's reference, not its data" in text


def test_far_field_at_two_wavelengths_fails(pattern_run):
    sims = record_checks.load_record(stage_dir(pattern_run) / "run")
    design = read_json(stage_dir(pattern_run) / "design.json")["output"]
    near = copy.deepcopy(design)
    near["near_to_far"]["far_field_radius"] = 2.0
    found = {c.name: c for c in record_checks.record_checks(sims, near)}
    check = found["built:far_field_is_far"]
    assert check.status == "fail" and "2 wavelengths" in check.detail
    right = {c.name: c for c in record_checks.record_checks(sims, design)}
    assert right["built:far_field_is_far"].status == "pass"


def test_example_declares_its_reference_and_polar_figure():
    meta = yaml.safe_load((EXAMPLE / "metadata.yaml").read_text())
    (fig,) = meta["figures"]
    assert fig["polar"] == {"normalise": "max", "db": True}
    assert [c.get("reference", False) for c in fig["curves"]] == [False, True]
