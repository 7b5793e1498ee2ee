"""`reprolab status` tells the truth about a paper: failed steps
with their error line, and no stage shown completed while a stage it depends on
is invalidated."""

import json
import os

import yaml

from reprolab.cli import control
from tests.conftest import EXAMPLE


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def plan_with(stages: list[dict]) -> dict:
    """The example's recorded plan with these stages (their other fields its first's)."""
    plan = yaml.safe_load((EXAMPLE / "recordings/paper/planner.a1.yaml").read_text())["output"]
    plan["stages"] = [{**plan["stages"][0], **s} for s in stages]
    return {"output": plan}


def test_status_shows_failed_steps_and_stages_behind_an_invalidated_one(tmp_path):
    out = tmp_path / "p"
    stages = [
        {"stage_id": "stage0_m", "dependencies": []},
        {"stage_id": "stage1_s", "dependencies": ["stage0_m"]},
        {"stage_id": "stage2_a", "dependencies": ["stage1_s"]},
        {"stage_id": "stage3_w", "dependencies": ["stage0_m"]},
    ]
    write(out / "plan.json", plan_with(stages))
    for s in stages:
        v = {"stage_id": s["stage_id"], "status": "completed_success", "reason": "ok"}
        write(out / "stages" / s["stage_id"] / "verdict.json", v)
    inv = out / "stages/stage1_s/invalidation.json"
    write(inv, {"records": [{"reason": "wrong thickness"}]})
    later = os.stat(inv).st_mtime + 10
    os.utime(inv, (later, later))
    write(out / "stages/stage2_a/logs/design.log", "[reprolab] the design step failed: boom\n")
    lines = control.stage_lines(out, [s["stage_id"] for s in stages])
    assert "invalidated (reruns on the next run): wrong thickness" in lines[1]
    assert "out of date: waits for invalidated stage1_s" in lines[2]
    assert "completed_success" in lines[0] and "completed_success" in lines[3]
    [failed] = control.report_lines(out)
    assert failed == "  FAILED: stages/stage2_a/logs/design.log: the design step failed: boom"


def test_run_names_the_debug_summary_and_a_partial_report(tmp_path, monkeypatch, capsys):
    import yaml

    import reprolab.cli as cli
    from tests.support.pipeline import EXAMPLE

    monkeypatch.chdir(tmp_path)
    (tmp_path / "Snakefile").write_text("")
    monkeypatch.setattr(cli, "snakemake_command", lambda *a: ["true"])
    config = {"papers": [{"paper_dir": str(EXAMPLE)}], "debug": {"enabled": True}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    out = tmp_path / "outputs" / "silica_bragg_2026"
    write(out / "debug_summary.json", {})
    cli.run_pipeline("c.yaml", 1, [])
    assert f"debug summary: {out / 'debug_summary.json'}" in capsys.readouterr().out
    config["debug"]["enabled"] = False
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    write(out / "REPRODUCTION_REPORT_silica_bragg_2026.md", "# old")
    write(out / "REPRODUCTION_REPORT_silica_bragg_2026.PARTIAL.md", "# PARTIAL REPORT")
    later = os.stat(out / "REPRODUCTION_REPORT_silica_bragg_2026.md").st_mtime + 5
    os.utime(out / "REPRODUCTION_REPORT_silica_bragg_2026.PARTIAL.md", (later, later))
    cli.run_pipeline("c.yaml", 1, [])
    text = capsys.readouterr().out
    assert "PARTIAL report (did not finish)" in text and "is from an earlier run" in text
    assert "reprolab: report:" not in text  # the older full report is never shown as current


def test_the_report_says_what_was_left_out_of_an_agents_context(tmp_path):
    from reprolab.report import partial

    out = tmp_path / "p"
    note = (
        "methods_only: paper_text sections left out or shortened: 2. Results (10 of 20 characters)"
    )
    prov = {"agent": "planner", "stage_id": "paper", "context_left_out": [note]}
    write(out / "plan.json", {"output": {}, "provenance": prov})
    write(out / "gates" / "x.request.json", {"provenance": prov})  # not an agent artifact
    assert partial.context_section(out) == [
        "## Context left out of agent prompts",
        "",
        f"- planner (paper): {note}",
        "",
    ]
