"""SupervisorAgent: the big-picture verdict after each stage."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from agents.common import AgentModel, StageId
from agents.results_analyzer import Claim
from reprolab.fileio import atomic_write_json

AGENT = "supervisor"

Verdict = Literal[
    "ok_continue",
    "change_priority",
    "replan_needed",
    "backtrack_to_stage",
    "ask_user",
    "all_complete",
    "should_stop",
]


class SupervisorOutput(AgentModel):
    stage_id: StageId
    verdict: Verdict
    """What happens next; after stage 0 it is always ask_user (the material gate)."""
    feedback: str
    """Reasoning and recommendations."""
    backtrack_target: StageId | None = None
    """Stage to go back to, with verdict backtrack_to_stage."""
    priority: list[StageId] = []
    """With change_priority: the stages to run next, first first. Code accepts only
    stages not yet run whose dependencies are met; the others keep the plan's order."""
    classification: Literal["SUCCESS", "PARTIAL", "FAILURE"] | None = None
    """The stage's outcome as your feedback describes it: it must be the code's
    (`current_stage_summary.status`: completed_success, completed_partial,
    completed_failed); the report strikes feedback that says otherwise."""
    claims: list[Claim] = []
    """Every comparison number the feedback cites, as the ResultsAnalyzer's claims
    (figure, curve, quantity, value as written, unit, relation): code checks each against
    the same computed quantity; a number without a claim is printed as unchecked."""


def context(
    plan_summary: dict,
    current_stage_summary: dict,
    analysis: dict,
    progress: list,
    *,
    figure_comparisons: list[dict],
    revision_counts: dict,
    backtrack_suggestions: list[dict],
    user_interactions: list[dict],
    answers_seen: Path | None = None,
) -> dict:
    """Summaries only: no paper text, raw code or raw data (the least context that serves).

    Progress holds the plan's earlier stages only: a later stage's verdict (left from
    an earlier run) is not an input of this stage, and would change its prompt."""
    order = list(plan_summary.get("stages") or [])
    current = current_stage_summary.get("stage_id")
    if current in order:
        earlier = set(order[: order.index(current)])
        progress = [p for p in progress if not isinstance(p, dict) or p.get("stage_id") in earlier]
    ctx = {
        "plan_summary": plan_summary,
        "progress": progress,
        "current_stage_summary": current_stage_summary,
        "figure_comparisons": figure_comparisons,
        "analysis": analysis,
        "systematic_discrepancies": analysis.get("discrepancies", []),
        "revision_counts": revision_counts,
        # PhysicsSanity's, the ResultsAnalyzer's and the CodeReviewer's, each with its source
        "backtrack_suggestions": backtrack_suggestions,
    }
    return ctx | {"user_interactions": answers_before(ctx, user_interactions, answers_seen)}


def answers_before(inputs: dict, interactions: list[dict], seen_file: Path | None) -> list[dict]:
    """The user's answers given before this call's inputs were made, without the log's
    timestamps, ids and hashes: an answer given after the verdict (the material
    checkpoint after stage 0, another stage's gates) is not an input of it.

    `seen_file` keeps how many answers the call saw, with the hash of its other
    inputs: while they are unchanged a rerun sees the same answers; when they change
    (the stage was redone) it sees every answer given so far."""
    sha = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()
    seen = len(interactions)
    if seen_file is not None:
        kept = json.loads(seen_file.read_text()) if seen_file.is_file() else {}
        if kept.get("inputs_sha256") == sha:
            seen = min(kept.get("answers_seen", seen), seen)
        else:
            atomic_write_json(seen_file, {"inputs_sha256": sha, "answers_seen": seen})
    return [answer_summary(entry) for entry in interactions[:seen]]


def answer_summary(entry: dict) -> dict:
    """What was asked and answered, and its effect: no timestamp, id, nonce or hash."""
    response = entry.get("user_response") or {}
    answer = {k: response[k] for k in ("action", "verdict", "option", "note") if response.get(k)}
    if response.get("auto"):
        answer["auto"] = True
    return {
        "interaction_type": entry.get("interaction_type"),
        "question": entry.get("question"),
        "answer": answer,
        "impact": entry.get("impact"),
    }
