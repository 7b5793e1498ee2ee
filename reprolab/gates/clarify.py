"""Questions an agent raised through its output model, asked as one gate per round.

Code decides which are worth asking (high impact, or the agent's confidence in
its proposed answer below `ASK_BELOW_CONFIDENCE`); the others keep the agent's
proposed answer and are logged. A paper's questions of one round are batched
into one gate: approve keeps every proposed answer, edit gives answers
(`{"answers": {"Q1": "..."}}`), and the answers reach the agent's next call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, TypeVar

from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.gates import consent, protocol

KIND = protocol.GateKind.CLARIFICATION
ASK_BELOW_CONFIDENCE = 0.6


def worth_asking(questions: list[dict], answered: set[str]) -> list[dict]:
    return [
        q
        for q in questions
        if q["question"] not in answered
        and (q["impact"] == "high" or q["confidence"] < ASK_BELOW_CONFIDENCE)
    ]


MAX_ROUNDS = 3  # question rounds per agent output before its last answer stands


class AskingArtifact(Protocol):
    """What settling questions reads of an agent's artifact (`reprolab.artifacts`
    sits above the gates, so its model is described here, not imported)."""

    output: Any  # the agent's output model, with its `questions`
    provenance: dict[str, Any]
    user_answers: list[dict]


A = TypeVar("A", bound=AskingArtifact)


def settle(run, scope: str, agent: str, artifact: A, ask_again, answers: list[dict]) -> A:
    """The agent's final artifact once its questions worth a gate are answered.

    `ask_again(attempt)` calls the agent again (it reads `answers`, which this extends
    in place, into its context); questions not worth a gate keep the proposed answer
    and are logged. Each round is one gate for all of that round's questions."""
    for n in range(1, MAX_ROUNDS + 1):
        questions = [q.model_dump(mode="json") for q in artifact.output.questions]
        asked = worth_asking(questions, {a["question"] for a in answers})
        not_asked(run, agent, [q for q in questions if q not in asked])
        if not asked:
            break
        answers += ask(run, scope, agent, asked, n)
        artifact = ask_again(artifact.provenance["attempt"] + 1)
    artifact.user_answers = list(answers)
    return artifact


def ask(run, scope: str, agent: str, questions: list[dict], n: int) -> list[dict]:
    """[{question, answer, by}] for this round's questions, or stop at the gate.
    `scope`: "paper" (the planner) or the stage the asking agent works on."""
    gate_id = f"{KIND}.{scope}" + (f".{n}" if n > 1 else "")
    about = [
        {k: q[k] for k in ("question_id", "question", "options", "proposed")} for q in questions
    ]
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=KIND,
        paper_id=run.paper_id,
        stage_id=None if scope == "paper" else scope,
        sha256=protocol.content_sha256(about),
        question=f"The {agent} asks {len(questions)} question(s): "
        + " ".join(f"[{q['question_id']}] {q['question']}" for q in questions),
        options=[
            "approve: keep the proposed answers ("
            + "; ".join(f"{q['question_id']}: {q['proposed']}" for q in questions)
            + ")",
            'edit: your answers as {"answers": {"Q1": "..."}} (`reprolab edit PAPER GATE '
            "--file answers.json`); unanswered ones keep the proposed answer",
        ],
        actions=["approve", "edit"],
        payload={"agent": agent, "questions": questions},
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": protocol.content_sha256(about)},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    given = (decision.revised_data or {}).get("answers", {}) if decision.action == "edit" else {}
    if not isinstance(given, dict) or set(given) - {q["question_id"] for q in questions}:
        raise GateError(
            f"{checkpoint.answer_file}: field 'revised_data.answers' must map question ids "
            f"({[q['question_id'] for q in questions]}) to answers"
        )
    answers = [
        {
            "question": q["question"],
            "answer": str(given.get(q["question_id"], q["proposed"])),
            "by": "user" if q["question_id"] in given else "proposed (approved by the user)",
        }
        for q in questions
    ]
    consent.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        "; ".join(f"{a['question']} -> {a['answer']}" for a in answers)[:2000],
        KIND,
        context={"agent": agent, "questions": questions},
        options=[o.split(":")[0] for o in checkpoint.options],
    )
    return answers


def not_asked(run, agent: str, questions: list[dict]) -> None:
    for q in questions:
        log_event(
            run.out_dir,
            KIND,
            f"{agent} {q['question_id']} not asked (impact {q['impact']}, confidence "
            f"{q['confidence']}): proposed answer kept: {q['proposed']}",
        )


def answers_path(out_dir: Path) -> Path:
    return Path(out_dir) / "clarifications.json"
