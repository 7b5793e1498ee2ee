"""Human gates that bind to content: a request file, and a decision the user writes.

One protocol for every gate: a `Checkpoint` request at
`gates/<gate_id>.request.json` names the sha256 of what it asks about; the user
answers with a `Decision` at `gates/<gate_id>.json` (by hand or with
`reprolab approve|reject|edit`). A decision for other content is refused. While
a gate waits, the step that opened it fails with instructions, so only that
branch stops; running the same command again picks the answer up.

The material checkpoint after stage 0 is mandatory. Revision limits of the
design and code loops, and supervisor `ask_user` verdicts, are gates too; every
kind of gate is one of `GateKind`, a closed set.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import secrets
import time
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from reprolab.errors import GateError, InputFileError, ReproLabError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
    read_model,
    read_text,
    sha256_bytes,
    validate_as,
)
from reprolab.paper import strict_json

MAX_NOTE_CHARS = 20_000


class GateKind(StrEnum):
    """Every kind of gate there is: a `Checkpoint`'s kind is one of these, and nothing
    else (a new kind of question is added here first, then built where it is asked)."""

    MATERIAL_CHECKPOINT = "material_checkpoint"
    """After stage 0: are these the right materials and data (reprolab.steps.material)."""
    REVISION_LIMIT = "revision_limit"
    """An author and its reviewer used up their attempts (reprolab.steps.review)."""
    EXECUTION_LIMIT = "execution_limit"
    """A stage's runs failed max_execution_failures times (reprolab.steps.run)."""
    RUN_FAILURE = "run_failure"
    """The cluster stopped a run past its automatic resubmits (reprolab.steps.run_failures)."""
    SUPERVISOR_ASK_USER = "supervisor_ask_user"
    """The supervisor's verdict asks the user (reprolab.steps.verdict)."""
    CLARIFICATION = "clarification"
    """An agent's question about the paper (reprolab.gates.clarify)."""
    CONTEXT_OVERFLOW = "context_overflow"
    """A prompt does not fit the model's window (agents.context_gate)."""
    INVALID_AGENT_OUTPUT = "invalid_agent_output"
    """An agent's answer stayed invalid after its retries (agents.output_gate)."""
    JOB_BUDGET = "job_budget"
    """A stage's sized job exceeds its core-hour budget (reprolab.steps.job_budget)."""


def gate_kind(value) -> GateKind:
    """The gate kind named by `value`; anything else is refused, naming the valid ones."""
    try:
        return GateKind(value)
    except ValueError:
        valid = ", ".join(k.value for k in GateKind)
        raise GateError(
            f"gate kind {value!r} is not a gate kind (valid: {valid}); a new kind is "
            "added to GateKind in reprolab/gates/protocol.py"
        ) from None


class Decision(BaseModel):
    """The user's answer to a gate."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "edit", "reject"]
    """approve accepts what was asked about; edit replaces it; reject sends it back."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 of the artifact being answered, copied from the request file."""
    verdict: Literal["approve", "change_database", "change_material", "need_help"] | None = None
    """Material checkpoint only: the user's verdict on the materials."""
    option: str | None = None
    """For a gate that offers choices (context overflow): the one chosen."""
    revised_data: dict | None = None
    note: str = Field("", max_length=MAX_NOTE_CHARS)
    answered_by: str = "user"
    auto: bool = False
    """True when config auto-approved the gate (demo only); the report says so. Honoured
    only where config `gates.auto_approve` lists the gate's kind (`Checkpoint.auto_approve`)."""
    paper_id: str | None = None
    gate_id: str | None = None
    nonce: str | None = None
    """Copied from the request: binds the answer to this paper, this gate and this asking."""

    @field_validator("revised_data", "option")
    @classmethod
    def _finite_numbers_only(cls, value, info: ValidationInfo):
        bad = next(non_finite(value, info.field_name), None)
        if bad is not None:
            where, shown = bad
            raise ValueError(
                f"{where} is {shown}: not a finite number; an answer carries finite numbers "
                "only (no NaN, Infinity or -Infinity, as a number or a string)"
            )
        return value


def non_finite(value, path: str):
    """(path, value) of every NaN or infinity in a JSON-like value: floats (JSON's NaN,
    Infinity, or a number too large for a float) and strings a float parser reads as one."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path, repr(value)
    elif isinstance(value, str) and len(value) < 40:
        try:
            number = float(value)
        except ValueError:
            return
        if not math.isfinite(number):
            yield path, repr(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from non_finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from non_finite(item, f"{path}[{i}]")


class Checkpoint(BaseModel):
    """A question the pipeline cannot answer itself: the request file of a gate."""

    model_config = ConfigDict(extra="forbid")

    gate_id: str
    """Names the request and decision files: gates/<gate_id>[.request].json."""
    kind: GateKind
    """What kind of question this is (the closed set `GateKind`)."""
    paper_id: str
    stage_id: str | None = None
    question: str
    options: list[str]
    """The choices offered (for the material checkpoint: the four verdicts of `Decision`)."""
    actions: list[str] = Field(default_factory=lambda: ["approve", "edit", "reject"])
    """Valid `action` values of the answer."""
    choices: list[str] = Field(default_factory=list)
    """Valid `option` values of the answer (`reprolab answer PAPER GATE OPTION`); empty
    for a gate answered by its action alone."""
    sha256: str
    """sha256 of what is asked about; the answer must repeat it."""
    payload: dict = Field(default_factory=dict)
    answer_file: str
    answer_example: dict
    created_at: str = ""
    nonce: str = ""
    """Fresh random value per question (kept while what is asked about is unchanged)."""
    headline: str = ""
    """What happened, in a few words, for the console's one WAITING line (e.g. the
    stage, the Slurm job and the reason of a failed run)."""
    auto_approve: bool = False
    """Config `gates.auto_approve` lists this gate's kind: an answer marked `auto` (and
    bound to this request's nonce like any other) is taken as the configuration's.
    Set by the step that asks, which reads the config; otherwise `auto` is refused."""

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value):
        try:
            return gate_kind(value)
        except GateError as exc:
            raise ValueError(str(exc)) from None


def content_sha256(data) -> str:
    """sha256 of a JSON-able value in canonical form (what a gate binds to)."""
    return sha256_bytes(json.dumps(data, sort_keys=True, default=str).encode())


SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,159}")


def check_id(what: str, value: str) -> str:
    """A gate or stage id that is safe as a file name, before any path is built from it."""
    if not isinstance(value, str) or not SAFE_ID.fullmatch(value) or ".." in value:
        raise GateError(
            f"{what} {value!r} is not valid: letters, digits, '_', '.', '-' only "
            "(no '/', no '..', at most 160 characters)"
        )
    return value


def gate_request_path(paper_out: Path, gate_id: str) -> Path:
    return Path(paper_out) / "gates" / f"{check_id('gate id', gate_id)}.request.json"


def gate_decision_path(paper_out: Path, gate_id: str) -> Path:
    return Path(paper_out) / "gates" / f"{check_id('gate id', gate_id)}.json"


def open_gate(paper_out: Path, checkpoint: Checkpoint) -> None:
    """Write (or refresh) the request; the question stays until it is answered.

    The answer's path is derived from paper and gate (a request's field never chooses
    it), and the nonce is fresh whenever what is asked about changed."""
    if not checkpoint.created_at:
        checkpoint.created_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    request = gate_request_path(paper_out, checkpoint.gate_id)
    if not checkpoint.nonce:
        checkpoint.nonce = _kept_nonce(request, checkpoint) or secrets.token_hex(16)
    if not checkpoint.answer_file:
        checkpoint.answer_file = str(gate_decision_path(paper_out, checkpoint.gate_id))
    checkpoint.answer_example = {
        **checkpoint.answer_example,
        "paper_id": checkpoint.paper_id,
        "gate_id": checkpoint.gate_id,
        "nonce": checkpoint.nonce,
    }
    atomic_write_json(request, checkpoint)


def _kept_nonce(request: Path, checkpoint: Checkpoint) -> str | None:
    """The open request's nonce when it asks the same question about the same content."""
    try:
        old = json.loads(request.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same = all(
        isinstance(old, dict) and old.get(k) == getattr(checkpoint, k)
        for k in ("paper_id", "gate_id", "sha256")
    )
    return old.get("nonce") if same and isinstance(old.get("nonce"), str) else None


def answer_command(checkpoint: Checkpoint) -> str:
    """The command that answers this gate, as `reprolab status` and the stop line show it."""
    if checkpoint.choices:
        return (
            f"reprolab answer {checkpoint.paper_id} {checkpoint.gate_id} OPTION "
            f"(OPTION: {' | '.join(checkpoint.choices)})"
        )
    first = "approve" if "approve" in checkpoint.actions else checkpoint.actions[0]
    others = [a for a in checkpoint.actions if a != first]
    return f"reprolab {first} {checkpoint.paper_id} {checkpoint.gate_id}" + (
        f" (or {'/'.join(others)})" if others else ""
    )


def waiting_message(checkpoint: Checkpoint) -> str:
    request = gate_request_path(Path(checkpoint.answer_file).parents[1], checkpoint.gate_id)
    if checkpoint.choices or "approve" not in checkpoint.actions:
        return (
            f"WAITING FOR YOU: {checkpoint.kind.replace('_', ' ')} '{checkpoint.gate_id}' of "
            f"paper '{checkpoint.paper_id}'.\n  {checkpoint.question}\n"
            + "".join(f"  - {o}\n" for o in checkpoint.options)
            + f"  Details: {request}\n  Answer with `{answer_command(checkpoint)}`, or write "
            f"{checkpoint.answer_file} containing:\n"
            f"    {json.dumps(checkpoint.answer_example)}\n"
            "  then run the same snakemake command again. Other branches and papers go on."
        )
    return (
        f"WAITING FOR YOU: {checkpoint.kind.replace('_', ' ')} '{checkpoint.gate_id}' of paper "
        f"'{checkpoint.paper_id}'"
        + (f": {checkpoint.headline}" if checkpoint.headline else "")
        + f".\n  {checkpoint.question}\n"
        f"  Details: {request}\n"
        f"  Answer with `reprolab approve {checkpoint.paper_id} {checkpoint.gate_id}` "
        f"(or {'/'.join(a for a in checkpoint.actions if a != 'approve')}; options: "
        f"{', '.join(checkpoint.options)}), or write "
        f"{checkpoint.answer_file} containing:\n"
        f"    {json.dumps(checkpoint.answer_example)}\n"
        "  then run the same snakemake command again. Other branches and papers go on."
    )


def read_decision(checkpoint: Checkpoint) -> Decision | None:
    """The user's valid answer, None while there is none; a stale or malformed one
    is refused with the file and field named (and nothing is overwritten)."""
    answer = Path(checkpoint.answer_file)
    if not answer.is_file():
        return None
    decision = validate_as(Decision, strict_json(read_text(answer), answer), answer)
    if decision.sha256 != checkpoint.sha256:
        raise GateError(
            f"{answer}: field 'sha256' is {decision.sha256}, but what gate "
            f"'{checkpoint.gate_id}' asks about now has sha256 {checkpoint.sha256}: the "
            "decision answers an earlier version. Read "
            f"{gate_request_path(answer.parents[1], checkpoint.gate_id)} again and answer "
            "with the current sha256."
        )
    if decision.auto and not checkpoint.auto_approve:
        raise GateError(
            f"{answer}: field 'auto' is true, but config gates.auto_approve does not list "
            f"gate kind '{checkpoint.kind.value}': only the configuration approves "
            "automatically. Valid: 'auto' false or left out, with the request's nonce "
            f"(`reprolab approve {checkpoint.paper_id} {checkpoint.gate_id}` writes one); "
            "nothing was approved"
        )
    for field in ("paper_id", "gate_id", "nonce"):
        got, want = getattr(decision, field), getattr(checkpoint, field)
        if got != want:
            raise GateError(
                f"{answer}: field {field!r} is {got!r}, but gate '{checkpoint.gate_id}' of "
                f"paper '{checkpoint.paper_id}' asks with {field} {want!r}: this decision "
                "answers another paper, gate or question. "
                + (
                    "An auto-approval not written for this request: delete the file and "
                    "run again (config writes a new one)."
                    if decision.auto
                    else f"Answer with `reprolab approve {checkpoint.paper_id} "
                    f"{checkpoint.gate_id}` or copy the request's answer_example."
                )
            )
    if decision.action not in checkpoint.actions:
        raise GateError(
            f"{answer}: field 'action' is {decision.action!r}; gate '{checkpoint.gate_id}' "
            f"accepts {checkpoint.actions}"
        )
    if checkpoint.choices and decision.option not in checkpoint.choices:
        raise GateError(
            f"{answer}: field 'option' is {decision.option!r}; gate '{checkpoint.gate_id}' "
            f"offers {checkpoint.choices}"
        )
    return decision


def resolve_gate(paper_out: Path, checkpoint: Checkpoint, wait_s: float = 0.0) -> Decision:
    """Open the gate and return its answer; without one, wait up to `wait_s` (config
    gates.wait_timeout_s), then stop this branch with instructions."""
    open_gate(paper_out, checkpoint)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            decision = read_decision(checkpoint)
        except InputFileError:
            if time.monotonic() >= deadline:
                raise
            decision = None  # being written (half a file): wait for the whole answer
        if decision is not None:
            return decision
        if time.monotonic() >= deadline:
            log_event(paper_out, "gate", f"waiting: {checkpoint.gate_id}")
            raise GateError(waiting_message(checkpoint))
        time.sleep(min(5.0, max(0.1, deadline - time.monotonic())))


def refused_answer(checkpoint: Checkpoint) -> str | None:
    """Why the answer file of an open gate is not taken (None: no file, or a valid one);
    `reprolab status` shows it under the gate, so a refused answer is never silent."""
    try:
        read_decision(checkpoint)
    except ReproLabError as exc:
        return " ".join(line.strip() for line in str(exc).splitlines())[:500]
    return None


def pending_gates(paper_out: Path) -> list[Checkpoint]:
    """Requests without an answer that matches them (what `reprolab status` lists)."""
    pending = []
    for path in sorted((Path(paper_out) / "gates").glob("*.request.json")):
        try:
            checkpoint = read_model(path, Checkpoint)
        except Exception:  # noqa: BLE001 - older request formats are not gates to answer
            continue
        try:
            answered = read_decision(checkpoint) is not None
        except (GateError, ReproLabError):
            answered = False  # stale or malformed: still waiting for a valid answer
        if not answered:
            pending.append(checkpoint)
    return pending
