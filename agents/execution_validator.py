"""ExecutionValidatorAgent: did the simulation run correctly (technically)?

The single point of failure interpretation: it reads the raw run record (exit
code, log tails, files) that code already checked, and says whether a failure is
recoverable by regenerating code or needs a user. It cannot pass a run that the
deterministic checks failed.
"""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId

AGENT = "execution_validator"


class ExecutionValidatorOutput(AgentModel):
    stage_id: StageId
    """The stage whose run was validated."""
    verdict: Literal["pass", "warning", "fail"]
    """pass: ran cleanly; warning: ran, with something a human should read; fail: did not."""
    recoverable: bool = False
    """With fail: regenerating the code with `fix_hint` is likely to fix it."""
    diagnosis: str
    """What happened, citing the exit code, log lines and files."""
    fix_hint: str = ""
    """With fail: what the code generator should change."""
    issues: list[str] = []
    """Each problem found, one sentence each."""


def context(record: dict, expected_outputs: list[str], execution_checks: list[dict]) -> dict:
    """Only the run's technical record: no code, paper, figures or design. No wall-clock
    seconds either: they differ on every run, so the same run would be paid for again
    (a time-out is named by `failure`)."""
    return {
        "stage_id": record.get("stage_id"),
        "exit_code": record.get("exit_code"),
        "stdout": record.get("stdout_tail", ""),
        "stderr": record.get("stderr_tail", ""),
        "output_files": [f["name"] for f in record.get("output_files", [])],
        "expected_outputs": expected_outputs,
        "failure": record.get("failure"),
        "deterministic_checks": execution_checks,
    }
