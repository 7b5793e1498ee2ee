"""Typed readers of the pipeline's own artifacts: the plan, the applied prompt
adaptations, one stage of the plan, JSON-lines logs, the code that ran."""

from __future__ import annotations

import json
from pathlib import Path

from agents.planner import PlannerOutput, PlanStage
from agents.prompt_adaptor import PromptModification
from reprolab.errors import StageBlockedError
from reprolab.fileio import read_json


def plan_stage(plan: PlannerOutput, stage_id: str) -> PlanStage:
    for stage in plan.stages:
        if stage.stage_id == stage_id:
            return stage
    valid = ", ".join(s.stage_id for s in plan.stages)
    raise StageBlockedError(f"stage '{stage_id}' is not in the plan (valid: {valid})")


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def code_that_ran(record: dict, code_json: str | Path) -> Path:
    """The code artifact of the final run (a regenerated one after a repair)."""
    return Path(record.get("code_artifact") or code_json)


def load_adaptations(path: str | Path) -> list[PromptModification]:
    return [PromptModification.model_validate(m) for m in read_json(path)["applied"]]


def load_plan(path: str | Path) -> PlannerOutput:
    return PlannerOutput.model_validate(read_json(path)["output"])


def plan_rerun_note(paper_id: str, plan_path: Path) -> str | None:
    """What a dry run says when a paper's plan is to be redone: the stages after it
    are decided once it has run, so it names those that may rerun (None when there
    is no plan yet, as on a first run)."""
    if not plan_path.is_file():
        return None
    try:
        stages = [s["stage_id"] for s in json.loads(plan_path.read_text())["output"]["stages"]]
    except (OSError, ValueError, KeyError, TypeError):
        stages = []
    return (
        f"[reprolab] dry run: the plan of paper '{paper_id}' is redone first (an input "
        "of it changed); what follows it is decided once it has run. A stage whose plan "
        "entry or prompt adaptations come out changed reruns from its design, with its "
        "simulations and the stages that depend on it; the others are kept. Stages now: "
        f"{', '.join(stages) or '(unreadable plan)'}."
    )
