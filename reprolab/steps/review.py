"""The author ⇄ reviewer loop every agent-written artifact goes through (plan,
design, code), with the revision_limit gate at its end."""

from __future__ import annotations

from pathlib import Path

from agents.runner import OUTPUT_MODELS, call_agent
from reprolab.artifacts import (
    AgentArtifact,
    CodeArtifact,
    DesignArtifact,
    PlanArtifact,
    ReviewArtifact,
    as_agent_artifact,
    load_agent_artifact,
    write_agent_artifact,
    write_review,
)
from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import validate_as
from reprolab.gates import consent, protocol
from reprolab.settings import PaperRun
from reprolab.steps import duplicates

ARTIFACTS: dict[str, type[AgentArtifact]] = {
    "planner": PlanArtifact,
    "simulation_designer": DesignArtifact,
    "code_generator": CodeArtifact,
}


def agent_artifact(author: str) -> type[AgentArtifact]:
    """The artifact model of an author's output."""
    return ARTIFACTS.get(author) or AgentArtifact[OUTPUT_MODELS[author]]


def reviewed_loop(
    *,
    run: PaperRun,
    stage_id: str,
    stage_dir: Path,
    adaptations: list,
    author: str,
    reviewer: str,
    limit: int,
    author_context,
    reviewer_context,
    code_problems,
    name: str,
    feedback: str | None = None,
    first_attempt: int = 1,
    gate_name: str | None = None,
) -> AgentArtifact:
    """Author → code checks → reviewer, `limit` attempts per round, all kept on disk.

    Each attempt is the author's artifact (`agent_artifact`): `author_context` gets the
    feedback, `reviewer_context` the artifact, `code_problems` its output model.

    At the limit an ask_user gate opens on the last attempt: approve takes it as it
    is, edit replaces it (validated like an agent's output), reject starts another
    round with the user's note as feedback. Rerunning after an answer replays the
    earlier attempts from the agent cache (no new calls) up to the gate.
    """
    model = agent_artifact(author)
    review_model = ReviewArtifact[OUTPUT_MODELS[reviewer]]
    ask = {"stage_id": stage_id, "session": run.agents, "adaptations": adaptations}

    def write(attempt: int, feedback: str | None) -> AgentArtifact:
        ctx = author_context(feedback)
        return as_agent_artifact(model, call_agent(author, attempt=attempt, context=ctx, **ask))

    attempt, round_no = first_attempt - 1, 1
    while True:
        for _ in range(limit):
            attempt += 1
            artifact = write(attempt, feedback)
            same = duplicates.earlier_same(stage_dir, name, artifact.output, attempt)
            if same is not None:  # never submitted twice: re-asked once, saying so
                note = duplicates.refuse(run, stage_id, stage_dir, name, artifact, attempt, same)
                feedback = "\n\n".join(f for f in (feedback, note) if f)
                attempt += 1
                artifact = write(attempt, feedback)
                same = duplicates.earlier_same(stage_dir, name, artifact.output, attempt)
                if same is not None:  # again the same: a person decides, nothing is run
                    duplicates.refuse(run, stage_id, stage_dir, name, artifact, attempt, same)
                    artifact = load_agent_artifact(same, model)
                    break
            write_agent_artifact(stage_dir / f"{name}.r{attempt}.json", artifact)
            problems = code_problems(artifact.output)
            context = reviewer_context(artifact)
            review = call_agent(reviewer, attempt=attempt, context=context, **ask)
            review = as_agent_artifact(review_model, review)
            review.code_problems = problems
            write_review(stage_dir / f"{name}_review.r{attempt}.json", review)
            if review.output.verdict == "approve" and not problems:
                log_event(run.out_dir, name, f"{stage_id}: {name} approved at attempt {attempt}")
                return artifact
            feedback = "\n".join(
                [review.output.feedback] + [f"- (checked in code) {p}" for p in problems]
            ).strip()
            log_event(run.out_dir, name, f"{stage_id}: {name} attempt {attempt} revised")
        decided = revision_limit_gate(
            run, stage_id, stage_dir, name, author, artifact, attempt, round_no, feedback, gate_name
        )
        if decided is not None:
            problems = code_problems(decided.output)
            if problems:
                raise GateError(
                    f"{decided.provenance['decision_file']}: the {name} you accepted fails the "
                    "checks made on every attempt:\n"
                    + "\n".join(f"  - {p}" for p in problems)
                    + "\nFix field 'revised_data' and run again."
                )
            return decided
        feedback = f"The user rejected attempt {attempt}: {feedback}"
        round_no += 1


def revision_limit_gate(
    run: PaperRun,
    stage_id,
    stage_dir,
    name,
    author,
    artifact,
    attempt,
    round_no,
    feedback,
    gate_name=None,
) -> AgentArtifact | None:
    """Ask the user about the last attempt (an artifact of the author's model, which the
    one returned has too); None means rejected (another round)."""
    gate_id = f"{stage_id}.{gate_name or name}_limit" + (f".{round_no}" if round_no > 1 else "")
    sha = protocol.content_sha256(artifact.output_json())
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=protocol.GateKind.REVISION_LIMIT,
        paper_id=run.paper_id,
        stage_id=stage_id,
        sha256=sha,
        question=(
            f"The {name} of {stage_id} still needs revision after {attempt} attempts. "
            f"approve: use attempt {attempt} as it is; edit: give your own version in "
            f"'revised_data'; reject: {attempt} more attempts with your note as feedback."
        ),
        options=["approve", "edit", "reject"],
        payload={
            "last_attempt": str(stage_dir / f"{name}.r{attempt}.json"),
            "last_review": str(stage_dir / f"{name}_review.r{attempt}.json"),
            "feedback": feedback,
        },
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": sha, "note": ""},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    answer = checkpoint.answer_file
    if decision.action == "reject":
        consent.log_interaction(
            run.out_dir,
            checkpoint.question,
            decision,
            f"{name} rejected; another round",
            kind=protocol.GateKind.REVISION_LIMIT,
        )
        if not decision.note.strip():
            raise GateError(f"{answer}: a reject needs a 'note' (it is the agent's feedback)")
        return None
    if decision.action == "edit":
        if decision.revised_data is None:
            raise GateError(f"{answer}: action 'edit' needs field 'revised_data'")
        output = validate_as(
            OUTPUT_MODELS[author], decision.revised_data, f"{answer} (field 'revised_data')"
        )
        provenance = {"agent": author, "source": "user_edit", "stage_id": stage_id}
        provenance.update(attempt=attempt, edited_from_sha256=sha)
        provenance.update(decision_file=answer, note=decision.note)
        result = type(artifact)(output=output.model_dump(mode="json"), provenance=provenance)
        impact = f"{name} replaced by the user's edit"
    else:
        result = artifact.model_copy(deep=True)
        result.user_decision = {"decision_file": answer, "note": decision.note}
        result.provenance = {**result.provenance, "decision_file": answer}
        impact = f"{name} attempt {attempt} accepted by the user"
    consent.log_interaction(
        run.out_dir, checkpoint.question, decision, impact, kind=protocol.GateKind.REVISION_LIMIT
    )
    log_event(run.out_dir, "gate", f"{stage_id}: {impact}")
    return result
