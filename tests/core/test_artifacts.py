"""The typed readers and writers of the files one step hands to the next
(reprolab.artifacts): one model each, the JSON shape kept on a read and a write, and
a malformed file named with the field that is wrong."""

import json
import math
from pathlib import Path

import pytest
import yaml

from agents.code_reviewer import CodeReviewerOutput
from reprolab import artifacts
from reprolab.errors import InputFileError

REC = Path(__file__).resolve().parents[2] / "examples/papers/silica_bragg_2026/recordings"
STAGE = "stage3_pairs_sweep"


def recorded(agent: str, stage: str = STAGE) -> dict:
    """An agent's recorded answer as the runner's envelope holds it."""
    path = REC / ("paper" if stage == "paper" else stage) / f"{agent}.a1.yaml"
    return {
        "output": yaml.safe_load(path.read_text())["output"],
        "provenance": {"agent": agent, "attempt": 1},
    }


def envelope(agent: str, **extra) -> dict:
    return {**recorded(agent), **extra}


CHECKS = {"stage_id": STAGE, "verdict": "pass", "checks": [{"name": "exit_code", "value": 0}]}
COMPARISON = {"stage_id": STAGE, "checks_verdict": "pass", "figures": [], "thresholds": []}
RESULT = {"stage_id": STAGE, "job_id": "123", "exit_code": 0, "runtime_seconds": 3, "points": []}


def validation() -> dict:
    return {
        "stage_id": STAGE,
        "verdict": "pass",
        "checks_verdict": "pass",
        "recoverable": False,
        "fix_hint": "",
        "backtrack_suggestion": None,
        "execution": recorded("execution_validator"),
        "physics": recorded("physics_sanity"),
    }


def verdict() -> dict:
    return {
        "stage_id": STAGE,
        "status": "completed_success",
        "reason": "fig4: SUCCESS",
        "supervisor_verdict": "ok_continue",
        "supervisor": recorded("supervisor"),
        "supervisor_check": {"status": "consistent", "details": []},
        "backtrack_suggestions": [],
        "user_note": None,
    }


# (reader, writer, a valid file's JSON, a field to break and a wrong value for it)
CASES = {
    "plan": (
        artifacts.load_plan,
        None,
        lambda: recorded("planner", "paper"),
        ("output", "stages"),
        "no list",
    ),
    "design": (
        artifacts.load_design,
        artifacts.write_design,
        lambda: envelope("simulation_designer", materials=[{"material_id": "silica"}]),
        ("output", "resolution"),
        "fine",
    ),
    "code": (
        artifacts.load_code,
        artifacts.write_code,
        lambda: recorded("code_generator"),
        ("output", "code"),
        None,
    ),
    "analysis": (
        artifacts.load_analysis,
        artifacts.write_analysis,
        lambda: envelope("results_analyzer", comparison_check={"verdict": "approve"}),
        ("output", "per_figure"),
        "none",
    ),
    "result": (
        artifacts.load_result,
        artifacts.write_result,
        lambda: dict(RESULT),
        ("exit_code",),
        "zero",
    ),
    "checks": (
        artifacts.load_checks,
        artifacts.write_checks,
        lambda: json.loads(json.dumps(CHECKS)),
        ("checks",),
        "all passed",
    ),
    "comparison": (
        artifacts.load_comparison,
        artifacts.write_comparison,
        lambda: json.loads(json.dumps(COMPARISON)),
        ("figures",),
        "fig4",
    ),
    "validation": (
        artifacts.load_validation,
        artifacts.write_validation,
        validation,
        ("execution", "output", "verdict"),
        "fine",
    ),
    "verdict": (
        artifacts.load_verdict,
        artifacts.write_verdict,
        verdict,
        ("status",),
        None,
    ),
}


def _set(data: dict, where: tuple, value) -> dict:
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return data


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_malformed_file_names_the_file_and_the_field(tmp_path, name):
    load, _, valid, where, wrong = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(_set(valid(), where, wrong)))
    with pytest.raises(InputFileError) as err:
        load(path)
    assert str(path) in str(err.value)
    assert f"field '{'.'.join(where)}" in str(err.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_missing_or_unparsable_file_is_named(tmp_path, name):
    load = CASES[name][0]
    with pytest.raises(InputFileError, match="does not exist"):
        load(tmp_path / "absent.json")
    (tmp_path / "cut.json").write_text('{"output": {')
    with pytest.raises(InputFileError, match="cut.json: is not valid JSON"):
        load(tmp_path / "cut.json")


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][1]))
def test_a_file_read_and_written_again_keeps_its_json(tmp_path, name):
    load, write, valid, _, _ = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(valid()))
    write(tmp_path / "again.json", load(path))
    assert json.loads((tmp_path / "again.json").read_text()) == valid()


def test_fields_absent_from_a_file_are_not_added_on_the_way_back(tmp_path):
    """An older file without a field its model now has keeps its shape."""
    art = recorded("simulation_designer")
    for field in ("questions", "symmetric_outputs"):
        art["output"].pop(field, None)
    (tmp_path / "design.json").write_text(json.dumps(art))
    design = artifacts.load_design(tmp_path / "design.json")
    assert design.output.questions == [] and design.output_json() == art["output"]
    artifacts.write_design(tmp_path / "again.json", design)
    assert json.loads((tmp_path / "again.json").read_text()) == art


def test_what_a_step_sets_is_written_and_nan_stays_nan(tmp_path):
    design = artifacts.load_design(_write(tmp_path, recorded("simulation_designer")))
    design.materials = [{"material_id": "silica"}]
    artifacts.write_design(tmp_path / "design.json", design)
    assert json.loads((tmp_path / "design.json").read_text())["materials"] == design.materials
    checks = artifacts.Checks(stage_id=STAGE, verdict="warn", checks=[{"value": math.nan}])
    artifacts.write_checks(tmp_path / "checks.json", checks)
    assert "NaN" in (tmp_path / "checks.json").read_text()


def test_the_agent_artifacts_refuse_a_blocked_file_the_others_carry_it(tmp_path):
    blocked = {"stage_id": STAGE, "blocked": {"reason": "dependency stage2 failed"}}
    path = _write(tmp_path, blocked)
    for load in (artifacts.load_design, artifacts.load_code, artifacts.load_analysis):
        with pytest.raises(InputFileError, match="is a blocked artifact .dependency stage2"):
            load(path)
    assert artifacts.load_result(path).blocked.reason == "dependency stage2 failed"
    checks = artifacts.load_checks(
        _write(tmp_path, {**blocked, "verdict": "blocked", "checks": []})
    )
    assert checks.blocked and checks.verdict == "blocked"
    comparison = artifacts.load_comparison(_write(tmp_path, {**blocked, "figures": []}))
    assert comparison.blocked and comparison.figures == []


def test_the_result_names_the_code_that_ran(tmp_path):
    plain = artifacts.RunResult(stage_id=STAGE)
    assert plain.code_that_ran("code.json") == Path("code.json")
    repaired = artifacts.RunResult(stage_id=STAGE, code_artifact="code.fix1.json")
    assert repaired.code_that_ran("code.json") == Path("code.fix1.json")


def test_a_review_is_read_with_its_reviewer_s_model(tmp_path):
    path = _write(tmp_path, envelope("code_reviewer", code_problems=["no sweep value"]))
    review = artifacts.load_review(path, CodeReviewerOutput)
    assert isinstance(review.output, CodeReviewerOutput)
    assert review.code_problems == ["no sweep value"]


def test_plan_stage_ids_in_order_and_none_without_a_plan(tmp_path):
    assert artifacts.plan_stage_ids(tmp_path / "plan.json") == []
    plan = recorded("planner", "paper")
    path = _write(tmp_path, plan)
    assert artifacts.plan_stage_ids(path) == [s["stage_id"] for s in plan["output"]["stages"]]


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / f"in{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return path
