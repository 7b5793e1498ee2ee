"""ExecutionValidatorAgent: did the simulation run correctly (technically)?

The single point of failure interpretation: it reads the raw run record (exit
code, log tails, files) that code already checked, and says whether a failure is
recoverable by regenerating code or needs a user. It cannot pass a run that the
deterministic checks failed.
"""

from __future__ import annotations

import re
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


WALL_CLOCK_LINE = re.compile(r"^on time step \d+ \(time=[^)]*\), [\d.e+-]+ s/step$")
"""Meep's progress line, printed every few seconds of wall time: how many appear varies."""
WALL_CLOCK_VALUE = re.compile(r"((?:time for \w+|Elapsed run time) = )[\d.e+-]+( s)")
KEEP_CHARS = 3000


def without_wall_clock(tail: str) -> str:
    """A log tail without what the wall clock put in it (Meep's progress lines and
    timings), cut to whole lines: the same run gives the same prompt."""
    lines = [
        WALL_CLOCK_VALUE.sub(r"\1<t>\2", line)
        for line in tail.splitlines()
        if not WALL_CLOCK_LINE.match(line.strip())
    ]
    kept: list[str] = []
    for line in reversed(lines[1:] if len(lines) > 1 else lines):  # the first may be cut
        if sum(len(x) + 1 for x in kept) + len(line) > KEEP_CHARS:
            break
        kept.insert(0, line)
    return "\n".join(kept)


def context(record: dict, expected_outputs: list[str], execution_checks: list[dict]) -> dict:
    """Only the run's technical record: no code, paper, figures or design. No wall-clock
    seconds either: they differ on every run, so the same run would be paid for again
    (a time-out is named by `failure`)."""
    return {
        "stage_id": record.get("stage_id"),
        "exit_code": record.get("exit_code"),
        "stdout": without_wall_clock(record.get("stdout_tail", "")),
        "stderr": without_wall_clock(record.get("stderr_tail", "")),
        "output_files": [f["name"] for f in record.get("output_files", [])],
        "expected_outputs": expected_outputs,
        "failure": record.get("failure"),
        "deterministic_checks": execution_checks,
    }
