"""Gates answer only to the user: bound to paper, gate and a fresh nonce; ids checked
before any path is built; a request never chooses where an answer is written; the
consent log records each real decision once."""

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from reprolab.cli import control
from reprolab.errors import GateError, InputFileError
from reprolab.gates import consent, protocol


def checkpoint(out: Path, paper: str, sha: str = "a" * 64) -> protocol.Checkpoint:
    return protocol.Checkpoint(
        gate_id="stage1.code_limit",
        kind="revision_limit",
        paper_id=paper,
        question="approve the last attempt?",
        options=["approve", "reject"],
        sha256=sha,
        answer_file="",
        answer_example={"action": "approve", "sha256": sha},
    )


def ask(out: Path, paper: str, sha: str = "a" * 64):
    return protocol.resolve_gate(out, checkpoint(out, paper, sha))


def approve(out: Path, gate: str):
    args = SimpleNamespace(command="approve", gate=gate, note="", verdict=None)
    return control.answer(out, args)


def test_answer_bound_to_paper_gate_and_nonce(tmp_path):
    a, b = tmp_path / "paper_a", tmp_path / "paper_b"
    for out, paper in ((a, "paper_a"), (b, "paper_b")):
        with pytest.raises(GateError, match="WAITING FOR YOU"):
            ask(out, paper)
    req_a = json.loads((a / "gates/stage1.code_limit.request.json").read_text())
    req_b = json.loads((b / "gates/stage1.code_limit.request.json").read_text())
    assert len(req_a["nonce"]) == 32 and req_a["nonce"] != req_b["nonce"]
    # Reopening the same question keeps its nonce (an answer written meanwhile stays valid).
    with pytest.raises(GateError, match="WAITING"):
        ask(a, "paper_a")
    assert (
        json.loads((a / "gates/stage1.code_limit.request.json").read_text())["nonce"]
        == (req_a["nonce"])
    )
    approve(a, "stage1.code_limit")
    assert ask(a, "paper_a").action == "approve"
    # The same file copied into the other paper is refused, naming the field.
    copied = (a / "gates/stage1.code_limit.json").read_text()
    (b / "gates/stage1.code_limit.json").write_text(copied)
    with pytest.raises(GateError, match="field 'paper_id' is 'paper_a'"):
        ask(b, "paper_b")
    forged = dict(json.loads(copied), paper_id="paper_b")
    (b / "gates/stage1.code_limit.json").write_text(json.dumps(forged))
    with pytest.raises(GateError, match="field 'nonce'"):
        ask(b, "paper_b")
    # New content: a new nonce, so even a matching sha256 from before is not enough.
    with pytest.raises(GateError, match="sha256"):
        ask(a, "paper_a", sha="b" * 64)
    assert (
        json.loads((a / "gates/stage1.code_limit.request.json").read_text())["nonce"]
        != (req_a["nonce"])
    )


def test_an_auto_approval_copied_into_another_paper_is_refused(tmp_path):
    # The configured auto-approval has no nonce (it is written before the request), but
    # it names its paper and gate: copied into another paper's gates it is refused.
    a, b = tmp_path / "paper_a", tmp_path / "paper_b"
    auto = protocol.Decision(
        paper_id="paper_a",
        gate_id="stage1.code_limit",
        action="approve",
        sha256="a" * 64,
        answered_by="config",
        auto=True,
    )
    for out in (a, b):
        (out / "gates").mkdir(parents=True)
        (out / "gates/stage1.code_limit.json").write_text(auto.model_dump_json())
    assert ask(a, "paper_a").auto
    with pytest.raises(GateError, match="field 'paper_id' is 'paper_a'"):
        ask(b, "paper_b")
    unbound = auto.model_dump(exclude={"paper_id", "gate_id"})
    (a / "gates/stage1.code_limit.json").write_text(json.dumps(unbound))
    with pytest.raises(GateError, match="field 'paper_id' is None"):
        ask(a, "paper_a")


@pytest.mark.parametrize("bad", ["../../x", "a/b", "..", "x" * 200, ""])
def test_unsafe_ids_refused_before_any_path(tmp_path, bad):
    with pytest.raises(GateError, match="not valid"):
        protocol.gate_decision_path(tmp_path, bad)
    with pytest.raises(GateError, match="not valid"):
        approve(tmp_path, bad)
    with pytest.raises(GateError, match="stage id"):
        control.invalidate(tmp_path, bad, "because")
    assert list(tmp_path.rglob("*")) == []


def test_planted_request_never_chooses_where_an_answer_goes(tmp_path):
    out = tmp_path / "paper_a"
    with pytest.raises(GateError):
        ask(out, "paper_a")
    request = out / "gates/stage1.code_limit.request.json"
    elsewhere = tmp_path / "elsewhere.json"
    data = json.loads(request.read_text())
    request.write_text(json.dumps(dict(data, answer_file=str(elsewhere))))
    approve(out, "stage1.code_limit")
    assert not elsewhere.exists() and (out / "gates/stage1.code_limit.json").is_file()
    # A request naming another paper or gate is not answered at all.
    request.write_text(json.dumps(dict(data, paper_id="paper_b")))
    with pytest.raises(GateError, match="field 'paper_id' is 'paper_b'"):
        approve(out, "stage1.code_limit")


def test_consent_log_records_a_decision_once(tmp_path):
    decision = protocol.Decision(action="approve", sha256="a" * 64, nonce="n1")
    for _ in range(3):  # the step reruns and reads the same answer again
        consent.log_interaction(tmp_path, "q?", decision, "went on", kind="revision_limit")
    lines = (tmp_path / "user_interactions.jsonl").read_text().splitlines()
    assert len(lines) == 1
    other = protocol.Decision(action="approve", sha256="a" * 64, nonce="n2")
    consent.log_interaction(tmp_path, "q?", other, "went on", kind="revision_limit")
    assert len((tmp_path / "user_interactions.jsonl").read_text().splitlines()) == 2


def test_answers_refused_when_duplicate_keyed_deep_or_oversized(tmp_path):
    with pytest.raises(GateError):
        ask(tmp_path, "p")
    answer = tmp_path / "gates/stage1.code_limit.json"
    request = json.loads((tmp_path / "gates/stage1.code_limit.request.json").read_text())
    good = json.dumps(request["answer_example"])
    answer.write_text(good[:-1] + ', "action": "reject"}')
    with pytest.raises(InputFileError, match="has the key 'action' twice"):
        ask(tmp_path, "p")
    answer.write_text(good[:-1] + ', "revised_data": ' + '{"a": ' * 80 + "1" + "}" * 81)
    with pytest.raises(InputFileError, match="nests 81 levels deep"):
        ask(tmp_path, "p")
    answer.write_text(json.dumps(dict(request["answer_example"], note="x" * 30_000)))
    with pytest.raises(InputFileError, match="note"):
        ask(tmp_path, "p")


def test_polling_gate_waits_for_a_whole_answer(tmp_path):
    with pytest.raises(GateError):
        ask(tmp_path, "p")
    request = json.loads((tmp_path / "gates/stage1.code_limit.request.json").read_text())
    answer = tmp_path / "gates/stage1.code_limit.json"
    whole = json.dumps(request["answer_example"])
    answer.write_text(whole[: len(whole) // 2])  # the user's editor is still writing
    timer = threading.Timer(0.3, answer.write_text, args=(whole,))
    timer.start()
    decision = protocol.resolve_gate(tmp_path, checkpoint(tmp_path, "p"), wait_s=1.5)
    timer.join()
    assert decision.action == "approve"
