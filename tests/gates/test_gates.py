"""The gate protocol on its own: an edit is validated like the agent's output."""

import json
from types import SimpleNamespace

import pytest
import yaml

from reprolab.artifacts import DesignArtifact
from reprolab.errors import GateError, InputFileError
from reprolab.fileio import read_model
from reprolab.gates import protocol
from reprolab.steps.review import revision_limit_gate
from tests.support.pipeline import EXAMPLE

STAGE = "stage1_single_slab"


def ask(run, artifact):
    return revision_limit_gate(
        run, STAGE, run.out_dir, "design", "simulation_designer", artifact, 3, 1, "fix it"
    )


def test_edit_replaces_the_attempt_and_bad_edits_are_refused(tmp_path):
    recording = EXAMPLE / "recordings" / STAGE / "simulation_designer.a2.yaml"
    output = yaml.safe_load(recording.read_text())["output"]
    artifact = DesignArtifact.model_validate({"output": output, "provenance": {}})
    run = SimpleNamespace(paper_id="p", out_dir=tmp_path, gate_wait_s=0)
    with pytest.raises(GateError, match="WAITING FOR YOU: revision limit"):
        ask(run, artifact)
    request = json.loads((tmp_path / f"gates/{STAGE}.design_limit.request.json").read_text())
    answer = tmp_path / f"gates/{STAGE}.design_limit.json"
    bound = {k: request[k] for k in ("paper_id", "gate_id", "nonce")}  # this gate, this asking
    edited = dict(output, summary="my own design")
    bad = {k: v for k, v in edited.items() if k != "resolution"}
    answer.write_text(
        json.dumps({"action": "edit", "sha256": request["sha256"], "revised_data": bad, **bound})
    )
    with pytest.raises(InputFileError, match="revised_data") as err:
        ask(run, artifact)
    assert "resolution" in str(err.value)
    answer.write_text(
        json.dumps({"action": "edit", "sha256": request["sha256"], "revised_data": edited, **bound})
    )
    result = ask(run, artifact)
    assert result.output.summary == "my own design"
    assert result.provenance["source"] == "user_edit"
    assert result.provenance["edited_from_sha256"] == request["sha256"]
    assert protocol.pending_gates(tmp_path) == []
    log = json.loads((tmp_path / "user_interactions.jsonl").read_text().splitlines()[-1])
    assert log["interaction_type"] == "revision_limit"


def checkpoint(kind) -> protocol.Checkpoint:
    return protocol.Checkpoint(
        gate_id="g",
        kind=kind,
        paper_id="p",
        question="q?",
        options=["a"],
        sha256="0" * 64,
        answer_file="",
        answer_example={},
    )


def test_an_unknown_gate_kind_is_refused_naming_the_valid_ones(tmp_path):
    assert checkpoint("revision_limit").kind is protocol.GateKind.REVISION_LIMIT
    with pytest.raises(ValueError, match="'revison_limit' is not a gate kind") as err:
        checkpoint("revison_limit")
    assert all(kind.value in str(err.value) for kind in protocol.GateKind)
    decision = protocol.Decision(action="approve", sha256="0" * 64)
    from reprolab.gates import consent

    with pytest.raises(GateError, match="'approval' is not a gate kind"):
        consent.log_interaction(tmp_path, "q?", decision, "went on", "approval")
    assert not (tmp_path / "user_interactions.jsonl").exists()
    # a request file on disk with a kind outside the set is refused when read, by name
    request = protocol.gate_request_path(tmp_path, "g")
    request.parent.mkdir(parents=True)
    request.write_text(checkpoint("run_failure").model_dump_json().replace("run_failure", "x"))
    with pytest.raises(InputFileError, match="'x' is not a gate kind"):
        read_model(request, protocol.Checkpoint)


def test_every_checkpoint_is_built_with_a_gate_kind_not_a_string():
    """A `Checkpoint(kind=...)` anywhere in the code names a `GateKind` member (or a
    constant bound to one), never a string literal that could drift from the set."""
    import ast

    from tests.support.pipeline import REPO

    literal = []
    for path in [*(REPO / "reprolab").rglob("*.py"), *(REPO / "agents").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = getattr(node, "func", None)
            name = getattr(func, "attr", None) or getattr(func, "id", None)
            if isinstance(node, ast.Call) and name == "Checkpoint":
                kind = next((k.value for k in node.keywords if k.arg == "kind"), None)
                if kind is None or isinstance(kind, ast.Constant):
                    literal.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not literal, literal


@pytest.mark.parametrize("spelled", ["NaN", "Infinity", "-Infinity", "1e999", '"nan"', '"-inf"'])
def test_an_edit_with_nan_or_infinity_is_refused_naming_the_field(tmp_path, spelled):
    tmp_path = tmp_path / "p"  # the paper's results folder, named after it
    recording = EXAMPLE / "recordings" / STAGE / "simulation_designer.a2.yaml"
    output = yaml.safe_load(recording.read_text())["output"]
    artifact = DesignArtifact.model_validate({"output": output, "provenance": {}})
    run = SimpleNamespace(paper_id="p", out_dir=tmp_path, gate_wait_s=0)
    with pytest.raises(GateError, match="WAITING FOR YOU"):
        ask(run, artifact)
    request = json.loads((tmp_path / f"gates/{STAGE}.design_limit.request.json").read_text())
    answer = tmp_path / f"gates/{STAGE}.design_limit.json"
    edited = dict(output, summary="my own design")
    edited["declared_dimensions"] = [{"name": "tantala slab thickness", "value": 12345.5}]
    decision = {
        "action": "edit",
        "sha256": request["sha256"],
        "revised_data": edited,
        **{k: request[k] for k in ("paper_id", "gate_id", "nonce")},
    }
    # json.loads reads NaN, Infinity and 1e999 as floats; pydantic reads "nan" as one.
    answer.write_text(json.dumps(decision).replace("12345.5", spelled))
    with pytest.raises(InputFileError) as err:
        ask(run, artifact)
    line = str(err.value)
    assert str(answer) in line and "revised_data.declared_dimensions[0].value" in line
    assert "not a finite number" in line
    assert protocol.pending_gates(tmp_path)  # nothing taken: the gate still waits
    assert not (tmp_path / "user_interactions.jsonl").exists()
    assert not (tmp_path / "stages").exists() or not list((tmp_path / "stages").rglob("*.json"))
    # The CLI refuses the same edit before writing anything.
    from reprolab.cli import control

    edit = tmp_path / "mine.json"
    edit.write_text(json.dumps(edited).replace("12345.5", spelled))
    answer.unlink()
    args = SimpleNamespace(command="edit", gate=f"{STAGE}.design_limit", note="", file=str(edit))
    with pytest.raises(InputFileError, match="not a finite number"):
        control.answer(tmp_path, args)
    assert not answer.exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "Infinity", "nan"])
def test_an_option_or_nested_answer_that_is_not_finite_is_refused(value):
    for fields in ({"option": str(value)}, {"revised_data": {"a": [1.0, {"b": value}]}}):
        with pytest.raises(ValueError, match="not a finite number"):
            protocol.Decision(action="approve", sha256="a" * 64, **fields)
    assert protocol.Decision(action="approve", sha256="a" * 64, revised_data={"x": "nano"})
