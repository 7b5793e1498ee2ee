"""A question from an agent other than the planner: the
SimulationDesigner of stage 1 asks a high-impact question through its output model.
Through real Snakemake: the stage waits at an answerable gate named for its stage,
`reprolab status` lists it, `reprolab edit` answers it, and the designer is asked
again with the answer in its context; the answer and the alternatives are logged."""

import json
from pathlib import Path

import pytest
import yaml

from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE, snakemake, write_config
from tests.support.pipeline import reprolab_cli as cli

pytestmark = pytest.mark.pipeline
STAGE = "stage1_single_slab"
GATE = f"clarification.{STAGE}"
DESIGN = f"outputs/{EXAMPLE.name}/stages/{STAGE}/design.json"
QUESTION = {
    "question_id": "Q1",
    "kind": "trade_off",
    "question": "Resolve the slab's Fabry-Perot fringes at 800 px/a (slower) or 400 px/a?",
    "options": ["800 px/a", "400 px/a"],
    "proposed": "800 px/a",
    "confidence": 0.5,
    "impact": "high",
}


def asking_designer(dest: Path) -> Path:
    """The example whose stage-1 designer asks QUESTION in its first, approved design
    and designs again after the answer (both times the example's approved design)."""
    copy_paper(dest, recordings=True)
    rec = dest / "recordings" / STAGE
    for agent in ("simulation_designer", "design_reviewer"):
        approved = yaml.safe_load((rec / f"{agent}.a2.yaml").read_text())
        for attempt in (1, 2):
            data = approved | {"attempt": attempt}
            if agent == "simulation_designer" and attempt == 1:
                data["output"] = approved["output"] | {"questions": [QUESTION]}
            (rec / f"{agent}.a{attempt}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


@pytest.fixture(scope="module")
def asked(tmp_path_factory):
    wd = tmp_path_factory.mktemp("designer_asks")
    paper = asking_designer(wd / "paper")
    write_config(wd, [paper])
    runs = {"first": snakemake(wd, DESIGN)}
    runs["designed_before_the_answer"] = (wd / DESIGN).exists()
    runs["status"] = cli(wd, "status")
    (wd / "answers.json").write_text(json.dumps({"answers": {"Q1": "400 px/a"}}))
    runs["answer"] = cli(wd, "edit", EXAMPLE.name, GATE, "--file", "answers.json")
    runs["second"] = snakemake(wd, DESIGN)
    return wd, runs


def test_the_designer_s_question_waits_at_its_stage_s_gate(asked):
    wd, runs = asked
    first = runs["first"]
    assert first.returncode != 0
    assert f"WAITING FOR YOU: clarification '{GATE}'" in first.stderr
    assert runs["designed_before_the_answer"] is False  # nothing designed on a guess
    assert f"WAITING: {GATE} (clarification)" in runs["status"].stdout


def test_the_answer_reaches_the_designer_and_is_logged(asked):
    wd, runs = asked
    assert runs["answer"].returncode == 0, runs["answer"].stderr
    assert runs["second"].returncode == 0, runs["second"].stderr[-3000:]
    design = json.loads((wd / DESIGN).read_text())
    assert design["user_answers"] == [
        {"question": QUESTION["question"], "answer": "400 px/a", "by": "user"}
    ]
    assert design["provenance"]["attempt"] == 2  # asked again, with the answer
    stage_dir = (wd / DESIGN).parent
    first = json.loads((stage_dir / "design.r1.json").read_text())
    assert first["provenance"]["context_sha256"] != design["provenance"]["context_sha256"]
    out = wd / "outputs" / EXAMPLE.name
    entries = [json.loads(x) for x in (out / "user_interactions.jsonl").read_text().splitlines()]
    [entry] = [e for e in entries if e["interaction_type"] == "clarification"]
    assert entry["context"]["agent"] == "simulation_designer"
    assert entry["context"]["questions"][0]["options"] == QUESTION["options"]
