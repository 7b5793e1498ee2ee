"""An agent whose output stayed invalid: one answerable gate, and what its answer does.

After the feedback rounds are spent the call becomes a gate of the one
request/decision protocol (`reprolab status` lists it; `reprolab edit` writes a
corrected output, `reprolab reject --note` asks the agent again with the note).
The gate binds to the exact prompt: while it is open and the prompt is unchanged,
a rerun asks nobody and pays nothing; it says again what waits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agents.providers import AgentRequest, InvalidOutputError
from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import read_model, sha256_bytes
from reprolab.gates import consent, protocol

KIND = protocol.GateKind.INVALID_AGENT_OUTPUT
ACTIONS = ["edit", "reject"]
OPTIONS = [
    "edit: write the corrected output as JSON (`reprolab edit PAPER GATE --file out.json`); "
    "it is validated against the agent's schema and used as its answer",
    "reject: ask the agent again with your note as feedback (`reprolab reject PAPER GATE "
    "--note '...'`)",
]


def prompt_sha256(request: AgentRequest) -> str:
    return sha256_bytes(request.prompt_text.encode())


def gate_id(request: AgentRequest, n: int) -> str:
    """agent_output.<stage>.<agent>.[roundN.]aN[.rK]: one per asking of this call."""
    base = "agent_output." + request.call_id.split("/", 1)[1].replace("/", ".")
    return base if n == 1 else f"{base}.r{n}"


@dataclass
class Answers:
    notes: list[str] = field(default_factory=list)
    """Notes of answered rejects, oldest first: the agent's feedback."""
    edited: dict | None = None
    """An edit's corrected output (validated by the caller)."""
    edited_sha: str = ""
    """The prompt the edited gate asked about: an edit answers that prompt only."""
    open_gate: protocol.Checkpoint | None = None
    """The gate still waiting for an answer, if any."""
    next_n: int = 1
    """The number of the next gate of this call."""


def answers(out_dir: Path, base_request: AgentRequest) -> Answers:
    """What the user answered so far to this call's gates, in order."""
    result = Answers()
    n = 1
    while True:
        path = protocol.gate_request_path(out_dir, gate_id(base_request, n))
        if not path.is_file():
            result.next_n = n
            return result
        checkpoint = read_model(path, protocol.Checkpoint)
        decision = protocol.read_decision(checkpoint)
        if decision is None:
            result.open_gate, result.next_n = checkpoint, n
            return result
        consent.log_interaction(
            out_dir,
            checkpoint.question,
            decision,
            f"{decision.action} of {base_request.call_id}'s invalid output",
            KIND,
            context={"call_id": base_request.call_id, "problems": checkpoint.payload["problems"]},
            options=ACTIONS,
        )
        if decision.action == "edit":
            result.edited = decision.revised_data or {}
            result.edited_sha, result.next_n = checkpoint.sha256, n
            return result
        result.notes.append(decision.note)
        n += 1


def still_waiting(found: Answers, request: AgentRequest, output_cap: int = 0) -> int:
    """Stop without a call while the open gate asks about this very prompt. A gate for
    an answer cut off at the output cap is withdrawn once the cap is raised above it:
    the raised cap is the answer, and the call is asked again. Returns the limit the
    withdrawn gate's answer was cut off at (0 if none): asking again below it would
    pay for the same cut-off answer again."""
    cp = found.open_gate
    cut_off_at = cp.payload.get("cut_off_at") if cp is not None else None
    if cut_off_at is not None and output_cap > cut_off_at:
        request_file = protocol.gate_request_path(Path(cp.answer_file).parents[1], cp.gate_id)
        request_file.unlink(missing_ok=True)
        log_event(
            request_file.parents[1],
            "gate",
            f"withdrawn: {cp.gate_id} (provider.max_output_tokens_cap raised from "
            f"{cut_off_at} to {output_cap}; {request.call_id} is asked again)",
        )
        found.open_gate = None
        return cut_off_at
    if cp is not None and cp.sha256 == prompt_sha256(request):
        raise GateError(
            "the agent's last answer to this same prompt was invalid and nothing was asked "
            "again (it would be paid again).\n" + protocol.waiting_message(cp)
        )
    return 0


def open_for(
    out_dir: Path, request: AgentRequest, n: int, exc: InvalidOutputError, paper_id: str
) -> protocol.Checkpoint:
    """Write the gate for a call whose output stayed invalid; return it."""
    sha = prompt_sha256(request)
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id(request, n),
        kind=KIND,
        paper_id=paper_id,
        stage_id=request.stage_id,
        question=(
            f"agent {request.agent} gave no valid output for {request.call_id} "
            f"({exc.requests} requests): {'; '.join(exc.problems)[:600]}"
        ),
        options=OPTIONS,
        actions=ACTIONS,
        sha256=sha,
        payload={
            "call_id": request.call_id,
            "problems": exc.problems,
            "raw_output": exc.raw,
            **({"cut_off_at": exc.cut_off_at} if exc.cut_off_at is not None else {}),
        },
        answer_file="",
        answer_example={"action": "reject", "sha256": sha, "note": "what to change"},
    )
    protocol.open_gate(out_dir, checkpoint)
    return checkpoint
