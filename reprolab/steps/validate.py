"""The run-validation step: ExecutionValidator and PhysicsSanity read the run after
the deterministic checks; they can make a verdict stricter, never laxer."""

from __future__ import annotations

from pathlib import Path

from agents import execution_validator, physics_sanity
from agents.execution_validator import ExecutionValidatorOutput
from agents.physics_sanity import PhysicsSanityOutput
from agents.runner import call_agent
from reprolab import run_files
from reprolab.artifacts import (
    AgentArtifact,
    RunValidation,
    as_agent_artifact,
    load_adaptations,
    load_checks,
    load_code,
    load_plan,
    load_result,
    plan_stage,
    write_validation,
)
from reprolab.errors import InputFileError
from reprolab.events import log_event
from reprolab.physics import checks as checks_mod
from reprolab.steps.blocking import passed_on_block

VERDICT_ORDER = ("pass", "warning", "fail")


def data_file_summaries(run_dir: Path, names: list[str]) -> list[dict]:
    """Column ranges of each output CSV: what the physics agent may see of the data."""
    summaries = []
    for name in names:
        if not name.endswith(".csv") or run_files.size_of(run_dir, name) is None:
            continue
        try:
            cols = checks_mod.read_output_csv(run_dir, name)
        except (OSError, ValueError, KeyError, IndexError, InputFileError) as exc:
            summaries.append({"file": name, "error": str(exc)})
            continue
        summaries.append(
            {
                "file": name,
                "rows": len(next(iter(cols.values()), [])),
                "columns": {
                    c: {"min": min(v), "max": max(v), "first": v[0], "last": v[-1]}
                    for c, v in cols.items()
                    if v
                },
            }
        )
    return summaries


def combined_verdict(checks_verdict: str, agent_verdicts: list[str]) -> str:
    """The strictest of the code's verdict and the agents' (an agent cannot relax it)."""
    code = {"pass": "pass", "warn": "warning", "warning": "warning", "fail": "fail"}[checks_verdict]
    return max([code, *agent_verdicts], key=VERDICT_ORDER.index)


def validate_run(
    run, result_path, checks_path, code_json, design_path, plan_path, adaptations_path, out
) -> None:
    if passed_on_block(run, out, result_path):
        return
    ran, checks = load_result(result_path), load_checks(checks_path)
    code = load_code(ran.code_that_ran(code_json)).output
    stage_id = checks.stage_id
    stage = plan_stage(load_plan(plan_path), stage_id)
    adaptations = load_adaptations(adaptations_path)
    execution = as_agent_artifact(
        AgentArtifact[ExecutionValidatorOutput],
        call_agent(
            execution_validator.AGENT,
            stage_id=stage_id,
            attempt=1,
            context=execution_validator.context(
                {**ran.to_json(), "stage_id": stage_id}, code.expected_outputs, checks.checks
            ),
            session=run.agents,
            adaptations=adaptations,
        ),
    )
    physics = as_agent_artifact(
        AgentArtifact[PhysicsSanityOutput],
        call_agent(
            physics_sanity.AGENT,
            stage_id=stage_id,
            attempt=1,
            context=physics_sanity.context(
                stage.model_dump(),
                run.paper.meta.domain,
                code.code,
                data_file_summaries(Path(result_path).parent / "run", code.expected_outputs),
                checks.checks,
            ),
            session=run.agents,
            adaptations=adaptations,
        ),
    )
    agent_verdicts = [execution.output.verdict, physics.output.verdict]
    verdict = combined_verdict(checks.verdict, agent_verdicts)
    if checks.verdict == "fail" and "fail" not in agent_verdicts:
        log_event(
            run.out_dir,
            "validation",
            f"{stage_id}: agents said {agent_verdicts} but deterministic checks failed; "
            "the failure stands",
        )
    write_validation(
        out,
        RunValidation(
            stage_id=stage_id,
            verdict=verdict,
            checks_verdict=checks.verdict,
            recoverable=execution.output.recoverable,
            fix_hint=execution.output.fix_hint,
            backtrack_suggestion=physics.output_json()["backtrack_suggestion"],
            execution=execution,
            physics=physics,
        ),
    )
    log_event(run.out_dir, "validation", f"{stage_id}: run validation {verdict}")
