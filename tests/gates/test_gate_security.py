"""Gates answer only to the user: bound to paper, gate and a fresh nonce; ids checked
before any path is built; a request never chooses where an answer is written; the
consent log records each real decision once."""

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from reprolab.cli import control
from reprolab.errors import GateError, InputFileError
from reprolab.gates import consent, protocol
from tests.support.paper_pdf import EXAMPLE


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


def forged_auto(out: Path, paper: str, **fields) -> Path:
    """A decision written by hand that claims the configuration approved the gate."""
    path = out / "gates/stage1.code_limit.json"
    data = {
        "action": "approve",
        "sha256": "a" * 64,
        "paper_id": paper,
        "gate_id": "stage1.code_limit",
        "answered_by": "config",
        "auto": True,
        **fields,
    }
    path.write_text(json.dumps(data))
    return path


def test_a_hand_written_auto_decision_is_refused_while_config_does_not_auto_approve(tmp_path):
    out = tmp_path / "paper_a"
    with pytest.raises(GateError, match="WAITING"):
        ask(out, "paper_a")
    nonce = json.loads((out / "gates/stage1.code_limit.request.json").read_text())["nonce"]
    # Without the nonce, and even with it: no config lists this gate kind.
    for fields in ({}, {"nonce": nonce}):
        forged = forged_auto(out, "paper_a", **fields)
        with pytest.raises(GateError) as err:
            ask(out, "paper_a")
        line = str(err.value)
        assert f"{forged}: field 'auto' is true" in line
        assert "gates.auto_approve does not list gate kind 'revision_limit'" in line
        assert "'auto' false or left out, with the request's nonce" in line
        assert "nothing was approved" in line
        # Nothing recorded as approved: the gate still waits, status says why.
        assert [cp.gate_id for cp in protocol.pending_gates(out)] == ["stage1.code_limit"]
        (cp,) = protocol.pending_gates(out)
        assert "field 'auto' is true" in protocol.refused_answer(cp)
        assert not (out / "user_interactions.jsonl").exists()
    # The same answer by the user (auto false, the nonce) is taken.
    forged_auto(out, "paper_a", nonce=nonce, auto=False, answered_by="user")
    decision = ask(out, "paper_a")
    assert decision.action == "approve" and not decision.auto


def test_auto_is_honoured_only_where_config_lists_the_gate_and_with_the_nonce(tmp_path):
    out = tmp_path / "paper_a"
    listed = checkpoint(out, "paper_a")
    listed.auto_approve = True  # as the step that asks sets it from config gates.auto_approve
    with pytest.raises(GateError, match="WAITING"):
        protocol.resolve_gate(out, listed)
    nonce = json.loads((out / "gates/stage1.code_limit.request.json").read_text())["nonce"]
    forged_auto(out, "paper_a")  # no nonce: not bound to this asking
    with pytest.raises(GateError, match="field 'nonce' is None.*delete the file and run again"):
        protocol.resolve_gate(
            out, checkpoint(out, "paper_a").model_copy(update=dict(auto_approve=True))
        )
    forged_auto(out, "paper_a", nonce=nonce)
    assert protocol.resolve_gate(out, listed).auto
    # Copied into another paper it is refused, naming the field.
    other = tmp_path / "paper_b"
    (other / "gates").mkdir(parents=True)
    (other / "gates/stage1.code_limit.json").write_bytes(
        (out / "gates/stage1.code_limit.json").read_bytes()
    )
    theirs = checkpoint(other, "paper_b")
    theirs.auto_approve = True
    with pytest.raises(GateError, match="field 'paper_id' is 'paper_a'"):
        protocol.resolve_gate(other, theirs)


def material_inputs(tmp_path: Path) -> tuple[Path, Path]:
    """A real plan (the example's) and stage 0's verdict with its material data."""
    from reprolab.artifacts import PlanArtifact

    rec = EXAMPLE / "recordings" / "paper" / "planner.a1.yaml"
    plan = tmp_path / "outputs/p/plan.json"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        PlanArtifact(output=yaml.safe_load(rec.read_text())["output"]).model_dump_json()
    )
    stage0 = tmp_path / "outputs/p/stages/stage0_material_validation"
    (stage0 / "run").mkdir(parents=True)
    (stage0 / "run/material_fused_silica.csv").write_text(
        "wavelength_um,n,k\n0.5,1.46,0\n0.8,1.45,0\n"
    )
    verdict = stage0 / "verdict.json"
    verdict.write_text(
        json.dumps({"stage_id": "stage0_material_validation", "status": "completed_success"})
    )
    return plan, verdict


def test_material_gate_honours_auto_only_while_config_lists_it(tmp_path):
    from reprolab.steps import material as step

    plan, verdict = material_inputs(tmp_path)
    out = tmp_path / "outputs/p"
    decision = out / "gates/material_checkpoint.json"
    validated = out / "validated_materials.json"
    step.auto_approve("p", plan, verdict, decision)  # config lists it: the step wrote it
    auto = json.loads(decision.read_text())
    request = json.loads((out / "gates/material_checkpoint.request.json").read_text())
    assert auto["auto"] and auto["nonce"] == request["nonce"]  # bound like any answer
    # Config no longer lists the gate: the auto answer is refused, nothing is approved.
    with pytest.raises(GateError, match="field 'auto' is true, but config gates.auto_approve"):
        step.material_gate("p", plan, verdict, decision, validated, auto_approve=False)
    assert not validated.exists() and not (out / "user_interactions.jsonl").exists()
    # A hand-written copy without the nonce, while auto-approval is off: refused too.
    decision.write_text(json.dumps({k: v for k, v in auto.items() if k != "nonce"}))
    with pytest.raises(GateError, match="field 'auto' is true"):
        step.material_gate("p", plan, verdict, decision, validated, auto_approve=False)
    assert not validated.exists() and not (out / "user_interactions.jsonl").exists()
    # Listed, with the nonce: approved by config, and the record says so.
    decision.write_text(json.dumps(auto))
    step.material_gate("p", plan, verdict, decision, validated, auto_approve=True)
    record = json.loads(validated.read_text())
    assert record["auto_approved"] and record["approved_by"] == "config"


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


def test_status_shows_a_refused_auto_answer_under_its_gate(tmp_path):
    from tests.support.builders import copy_paper

    folder = copy_paper(tmp_path / "papers" / "paper_s", paper_id="paper_s")
    config = {"papers": [{"paper_dir": str(folder)}], "outputs_dir": str(tmp_path / "outputs")}
    out = tmp_path / "outputs" / "paper_s"
    with pytest.raises(GateError, match="WAITING"):
        ask(out, "paper_s")
    forged_auto(out, "paper_s")
    text = control.status_text(config, "paper_s")
    assert "WAITING: stage1.code_limit (revision_limit)" in text
    assert "ANSWER REFUSED: " in text and "field 'auto' is true" in text
    assert "nothing waits on you" not in text
