"""Two failures in a row force a replan only along a dependency: the later failed stage
must depend (directly or not) on the one that failed just before it."""

from __future__ import annotations

import os
from types import SimpleNamespace

from reprolab.artifacts import Verdict, write_verdict
from reprolab.steps import verdict as verdict_step


def plan_of(**deps):
    stages = [SimpleNamespace(stage_id=s, dependencies=d, stage_type="x") for s, d in deps.items()]
    return SimpleNamespace(stages=stages)


def failed_before(out_dir, stage_id, when):
    path = out_dir / "stages" / stage_id / "verdict.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_verdict(path, Verdict(stage_id=stage_id, status="completed_failed", reason="checks"))
    os.utime(path, ns=(when, when))


def acted(tmp_path, monkeypatch, plan, stage_id):
    replans = []

    def fake_replan(run, stage, reason, said=None):
        replans.append(stage.stage_id)
        return "ok_continue"

    monkeypatch.setattr(verdict_step, "replan", fake_replan)
    run = SimpleNamespace(out_dir=tmp_path)
    stage = next(s for s in plan.stages if s.stage_id == stage_id)
    out = verdict_step.act_on_supervisor(
        run, plan, stage, "completed_failed", "checks failed", {"verdict": "ok_continue"}
    )
    return out, replans


def test_unrelated_consecutive_failures_do_not_replan(tmp_path, monkeypatch):
    plan = plan_of(stage0=[], stage1_a=["stage0"], stage2_b=["stage0"])
    failed_before(tmp_path, "stage1_a", 1_000)
    out, replans = acted(tmp_path, monkeypatch, plan, "stage2_b")
    assert replans == [] and out["verdict"] == "ok_continue"


def test_a_failure_after_the_failed_stage_it_depends_on_replans(tmp_path, monkeypatch):
    plan = plan_of(stage0=[], stage1_a=["stage0"], stage2_b=["stage1_a"], stage3_c=["stage2_b"])
    failed_before(tmp_path, "stage1_a", 1_000)
    _, replans = acted(tmp_path, monkeypatch, plan, "stage2_b")
    assert replans == ["stage2_b"]
    # indirectly too: stage3_c depends on stage1_a through stage2_b
    failed_before(tmp_path, "stage1_a", 2_000)
    assert (
        verdict_step.failed_dependency(tmp_path, plan, plan.stages[3], "completed_failed")
        == "stage1_a"
    )


def test_only_the_latest_verdict_counts(tmp_path):
    """A dependency that failed earlier, followed by an unrelated success, is no longer
    'consecutive'."""
    plan = plan_of(stage0=[], stage1_a=["stage0"], stage2_b=["stage1_a"], stage3_c=["stage0"])
    failed_before(tmp_path, "stage1_a", 1_000)
    path = tmp_path / "stages" / "stage3_c" / "verdict.json"
    path.parent.mkdir(parents=True)
    write_verdict(path, Verdict(stage_id="stage3_c", status="completed_success"))
    os.utime(path, ns=(2_000, 2_000))
    assert (
        verdict_step.failed_dependency(tmp_path, plan, plan.stages[2], "completed_failed") is None
    )
    assert (
        verdict_step.failed_dependency(tmp_path, plan, plan.stages[2], "completed_success") is None
    )
