"""A prompt that overflows the context window: one answerable gate, and what its answer does.

The gate offers the options of `context_window.OVERFLOW_OPTIONS`; the answer
(`reprolab answer PAPER GATE OPTION`) is carried out on the next run: a part of
the paper left out (recorded in provenance, said in the report), a model with a
larger window for this agent, or the paper stopped with a PARTIAL report. When
an answered option still does not fit, the next gate of the same call asks again.
The same agent's later attempts (after its reviewer's feedback) keep the answer.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from agents import context_window
from agents.providers import AgentRequest
from reprolab.errors import GateError
from reprolab.fileio import atomic_write_json, read_model
from reprolab.gates import consent, protocol

KIND = protocol.GateKind.CONTEXT_OVERFLOW
STOPPED_FILE = "stopped.json"
"""Written when a user answers `stop`: the paper ends here, with a PARTIAL report."""


class PaperStopped(GateError):
    """The user chose to stop this paper."""


def gate_id(request: AgentRequest, n: int) -> str:
    base = "context." + request.call_id.split("/", 1)[1].replace("/", ".")
    return base if n == 1 else f"{base}.r{n}"


def context_sha256(context: dict) -> str:
    return protocol.content_sha256(json.loads(json.dumps(context, default=str)))


@dataclass
class Choices:
    recovery: str = ""
    """The last answered recovery (a key of context_window.ASKED)."""
    model: dict = field(default_factory=dict)
    """{"model", "context_window_tokens"} of an answered larger_model."""
    stop: protocol.Decision | None = None
    gates: list[str] = field(default_factory=list)
    """The answered gates, in order (for provenance)."""
    next_n: int = 1


def answered(out_dir: Path, request: AgentRequest, sha: str) -> Choices:
    """The answers to this call's overflow gates that ask about this same context; for a
    call with no gate of its own, the answer given to the same agent's latest earlier
    attempt (its reviewer's feedback made a new prompt, not a new question)."""
    found = _answers(out_dir, request, sha)
    if found.gates or protocol.gate_request_path(out_dir, gate_id(request, 1)).is_file():
        return found
    for attempt in range(request.attempt - 1, 0, -1):
        earlier = _answers(out_dir, dataclasses.replace(request, attempt=attempt), None)
        if earlier.gates and earlier.stop is None:
            return dataclasses.replace(earlier, next_n=1)
    return found


def _answers(out_dir: Path, request: AgentRequest, sha: str | None) -> Choices:
    """The decided overflow gates of one call, in order (sha None: whatever they asked
    about; the earlier attempt's interactions are already logged)."""
    found = Choices()
    n = 1
    while True:
        path = protocol.gate_request_path(out_dir, gate_id(request, n))
        found.next_n = n
        if not path.is_file():
            return found
        checkpoint = read_model(path, protocol.Checkpoint)
        if sha is not None and checkpoint.sha256 != sha:
            return found  # the inputs changed: the old answers were about another prompt
        decision = protocol.read_decision(checkpoint)
        if decision is None:
            return found
        found.gates.append(checkpoint.gate_id)
        if sha is not None:
            consent.log_interaction(
                out_dir,
                checkpoint.question,
                decision,
                f"{decision.option} for {request.call_id}",
                KIND,
                context=checkpoint.payload,
                options=checkpoint.choices,
            )
        if decision.option == "stop":
            found.stop = decision
            return found
        if decision.option == "larger_model":
            found.model = dict(decision.revised_data or {})
        else:
            found.recovery = decision.option or ""
        n += 1


def with_larger_model(session, agent: str, model: dict):
    """The session with this agent's model and window replaced by the user's answer."""
    if not model:
        return session
    return dataclasses.replace(
        session,
        models={**session.models, agent: model["model"]},
        context_window=int(model["context_window_tokens"]),
    )


def stop_paper(out_dir: Path, request: AgentRequest, choices: Choices) -> None:
    atomic_write_json(
        Path(out_dir) / STOPPED_FILE,
        {
            "call_id": request.call_id,
            "stage_id": request.stage_id,
            "gate_id": choices.gates[-1],
            "reason": f"stopped by the user's answer to {choices.gates[-1]} (the prompt of "
            f"{request.call_id} did not fit the context window)",
            "note": choices.stop.note if choices.stop else "",
        },
    )
    raise_if_stopped(out_dir)


def raise_if_stopped(out_dir: Path) -> None:
    """A stopped paper makes no further agent call (every step of it stops here)."""
    path = Path(out_dir) / STOPPED_FILE
    if path.is_file():
        stopped = json.loads(path.read_text(encoding="utf-8"))
        raise PaperStopped(
            f"{stopped['reason']}; its report is marked PARTIAL. To resume, delete {path} "
            f"and {protocol.gate_decision_path(out_dir, stopped['gate_id'])}"
        )


def open_for(
    out_dir: Path,
    request: AgentRequest,
    n: int,
    exc: context_window.ContextOverflowError,
    sha: str,
    tried: list[str],
) -> protocol.Checkpoint:
    options = [k for k in context_window.OVERFLOW_OPTIONS if k not in tried]
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id(request, n),
        kind=KIND,
        paper_id=request.paper_id,
        stage_id=request.stage_id,
        question=str(exc),
        options=[f"{k}: {context_window.OVERFLOW_OPTIONS[k]}" for k in options],
        choices=options,
        actions=["approve"],
        sha256=sha,
        payload={
            "call_id": request.call_id,
            "agent": request.agent,
            "estimated_tokens": exc.estimate,
            "limit_tokens": exc.limit,
            "recoveries_applied": exc.applied,
            "already_tried": tried,
        },
        answer_file="",
        answer_example={"action": "approve", "option": options[0], "sha256": sha},
    )
    protocol.open_gate(out_dir, checkpoint)
    return checkpoint


def waiting(checkpoint: protocol.Checkpoint) -> GateError:
    return GateError(protocol.waiting_message(checkpoint))
