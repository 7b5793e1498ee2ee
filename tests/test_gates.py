"""The gate protocol on its own: an edit is validated like the agent's output."""

import json
from types import SimpleNamespace

import pytest
import yaml

from reprolab.artifacts import DesignArtifact
from reprolab.errors import GateError, InputFileError
from reprolab.gates import protocol
from reprolab.steps.review import revision_limit_gate
from tests.conftest import EXAMPLE

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
