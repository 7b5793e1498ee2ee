"""The example paper through real Snakemake, real submitit jobs and real Meep runs.

One temporary working directory walks the whole user story from a PDF: `reprolab
new-paper` makes the paper folder from the example's PDF (confirmed and checked as a
person would), the example's recordings replay it, the material gate blocks, a stale
approval is refused, a valid approval resumes, the report holds every figure, and a
rerun does nothing.
"""

import json
from pathlib import Path

import pytest
import yaml

from tests.support.paper_pdf import example_from_its_pdf
from tests.support.pipeline import EXAMPLE, PAPER, snakemake

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = tmp_path_factory.mktemp("run")
    paper_dir = example_from_its_pdf(wd / "papers")
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(paper_dir), "recordings": str(EXAMPLE / "recordings")}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": []},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    return wd


@pytest.fixture(scope="module")
def first_run(workdir):
    return snakemake(workdir)


def out(workdir: Path) -> Path:
    return workdir / "outputs" / PAPER


def test_material_gate_blocks_only_after_stage0(workdir, first_run):
    assert first_run.returncode != 0
    assert "WAITING FOR YOU: material checkpoint" in first_run.stderr
    o = out(workdir)
    verdict = json.loads((o / "stages/stage0_material_validation/verdict.json").read_text())
    assert verdict["status"] == "completed_success"
    assert verdict["supervisor_verdict"] == "ask_user"
    request = json.loads((o / "gates/material_checkpoint.request.json").read_text())
    assert len(request["sha256"]) == 64
    assert request["options"] == ["approve", "change_database", "change_material", "need_help"]
    assert any(m["plot"] for m in request["payload"]["materials"])
    assert not (o / "validated_materials.json").exists()
    assert not (o / "stages/stage1_single_slab").exists()


def test_stale_approval_refused_and_nothing_lost(workdir, first_run):
    o = out(workdir)
    before = sorted(p.name for p in (o / "stages/stage0_material_validation").iterdir())
    decision = o / "gates/material_checkpoint.json"
    decision.write_text(json.dumps({"action": "approve", "verdict": "approve", "sha256": "0" * 64}))
    run = snakemake(workdir)
    assert run.returncode != 0
    assert "0" * 64 in run.stderr and "sha256" in run.stderr
    assert sorted(p.name for p in (o / "stages/stage0_material_validation").iterdir()) == before
    decision.write_text('{"action": "approve", "sha256": ')  # malformed JSON
    run = snakemake(workdir)
    assert run.returncode != 0 and "material_checkpoint.json" in run.stderr
    assert "not valid JSON" in run.stderr


def test_approval_resumes_and_report_has_every_figure(workdir, first_run):
    o = out(workdir)
    request = json.loads((o / "gates/material_checkpoint.request.json").read_text())
    (o / "gates/material_checkpoint.json").write_text(json.dumps(request["answer_example"]))
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    report = (o / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    for section in (
        "1. Executive Summary",
        "2. Simulation Assumptions",
        "3. Figure-by-Figure",
        "4. Summary Table",
        "5. Systematic Discrepancies",
        "6. Conclusions",
    ):
        assert section in report
    for fig in ("fig1", "fig2", "fig3", "fig4"):
        assert f"### {fig}:" in report
        assert (o / "report_assets" / f"{fig}_paper.png").is_file()
    assert "AUTO-APPROVED" not in report
    for stage in (
        "stage0_material_validation",
        "stage1_single_slab",
        "stage2_bragg_mirror",
        "stage3_pairs_sweep",
    ):
        sd = o / "stages" / stage
        result = json.loads((sd / "result.json").read_text())
        assert result["exit_code"] == 0 and result["executor"] == "local"
        checks = json.loads((sd / "checks.json").read_text())
        assert checks["verdict"] == "pass", checks
        comparison = json.loads((sd / "comparison.json").read_text())
        for fig in comparison["figures"]:
            assert fig["classification"] == "SUCCESS", fig
            assert (workdir / fig["overlay"]).is_file()  # paths are workdir-relative
            for curve in fig["curves"]:
                assert curve["metrics"]["rms_rel"] < 0.03
    # Energy conservation was checked on the lossless stacks, with its number.
    checks = json.loads((o / "stages/stage2_bragg_mirror/checks.json").read_text())
    energy = [c for c in checks["checks"] if c["name"].startswith("energy_conservation")]
    assert energy and energy[0]["value"] < 1e-2
    interactions = (o / "user_interactions.jsonl").read_text().splitlines()
    assert json.loads(interactions[-1])["user_response"]["action"] == "approve"
    # The design revision in the recordings is kept on disk beside the approved one.
    assert (o / "stages/stage1_single_slab/design.r1.json").is_file()
    assert (o / "stages/stage1_single_slab/design_review.r2.json").is_file()


def test_report_every_figure_readable_offline(workdir, first_run):
    """What a report must show: per target figure the paper's figure, the reproduction, the
    overlay, the numbers and the classification, in an HTML page that needs no network."""
    import re

    o = out(workdir)
    md = (o / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    page = (o / f"REPRODUCTION_REPORT_{PAPER}.html").read_text()
    assert not re.search(r"https?://|<script|<link|@import", page)
    srcs = re.findall(r'<img alt="([^"]*)" src="([^"]*)"', page)
    assert srcs and all(src.startswith("data:image/png;base64,") for _, src in srcs)
    alts = {alt for alt, _ in srcs}
    figures = [
        f
        for c in sorted((o / "stages").glob("*/comparison.json"))
        for f in json.loads(c.read_text())["figures"]
    ]
    assert sorted(f["figure_id"] for f in figures) == ["fig1", "fig2", "fig3", "fig4"]
    for f in figures:
        fid = f["figure_id"]
        assert {f"{fid} in the paper", f"{fid} reproduced", f"{fid} overlay"} <= alts, fid
        section = md.split(f"### {fid}:")[1].split("\n### ")[0]
        assert f"classification **{f['classification']}**" in section
        for curve in f["curves"]:
            assert re.search(
                rf"^\| {curve['curve_id']} \| [0-9.e-]+ \| [0-9.e-]+ \|", section, re.M
            )


def test_second_run_does_nothing(workdir, first_run):
    run = snakemake(workdir)
    assert run.returncode == 0
    assert "Nothing to be done" in run.stdout + run.stderr
