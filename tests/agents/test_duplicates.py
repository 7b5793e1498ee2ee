"""Duplicate attempts are never submitted twice.

The code loop runs for real (reprolab.steps.review.reviewed_loop, the real
Anthropic SDK over HTTP to the scripted fake server): a "fix" identical to the
script that failed, byte for byte or only reformatted, is refused before review
or run, the generator is re-asked once with that said, and the failure log
counts a duplicate, not a run failure.
"""

import json

import pytest

from agents import code_generator, code_reviewer
from reprolab.cli import control
from reprolab.errors import GateError
from reprolab.settings import paper_run
from reprolab.steps.review import reviewed_loop
from tests.support.fake_llm import FakeLLMServer, Reply, Script
from tests.support.pipeline import EXAMPLE

STAGE = "stage1_single_slab"
FAILED = "import meep as mp\n\n# ran out of memory\nsim = mp.Simulation(resolution=400)\n"
REFORMATTED = "import meep as mp\nsim = mp.Simulation(  resolution=400 )  # same, reformatted\n"
FIXED = "import meep as mp\nsim = mp.Simulation(resolution=50)\n"


def code(text):
    return {
        "stage_id": STAGE,
        "code": text,
        "expected_outputs": ["r.csv"],
        "estimated_runtime_minutes": 1,
    }


APPROVE = {"verdict": "approve", "feedback": ""}


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")

    def make(server):
        config = {
            "outputs_dir": str(tmp_path / "outputs"),
            "papers": [{"paper_dir": str(EXAMPLE)}],
            "provider": {"kind": "anthropic", "base_url": server.url, "timeout_s": 2},
        }
        run = paper_run(config, "silica_bragg_2026")
        stage_dir = run.out_dir / "stages" / STAGE
        stage_dir.mkdir(parents=True)
        # Attempt 1: the approved script that then failed at run time.
        (stage_dir / "code.r1.json").write_text(json.dumps({"output": code(FAILED)}))
        return run, stage_dir

    return make


def fix_loop(run, stage_dir):
    return reviewed_loop(
        run=run,
        stage_id=STAGE,
        stage_dir=stage_dir,
        adaptations=[],
        author=code_generator.AGENT,
        reviewer=code_reviewer.AGENT,
        limit=3,
        author_context=lambda fb: code_generator.context({"stage_id": STAGE}, [], fb),
        reviewer_context=lambda art: code_reviewer.context({}, art.output.code, []),
        code_problems=lambda out: [],
        name="code",
        feedback="The simulation failed (out_of_memory)",
        first_attempt=2,
        gate_name="code_fix1",
    )


@pytest.mark.parametrize("same", [FAILED, REFORMATTED], ids=["byte_identical", "reformatted"])
def test_an_identical_fix_is_refused_and_the_generator_re_asked(setup, same):
    script = Script(Reply(code(same)), Reply(code(FIXED)), Reply(APPROVE))
    with FakeLLMServer(script) as server:
        run, stage_dir = setup(server)
        artifact = fix_loop(run, stage_dir)
    assert artifact.output.code == FIXED
    calls = [r["headers"]["x-reprolab-call"].split("/", 2)[2] for r in server.requests]
    # The duplicate never reached the reviewer (nor a run): generator, generator, reviewer.
    assert calls == ["code_generator/a2", "code_generator/a3", "code_reviewer/a3"]
    assert "identical (after normalization)" in json.dumps(server.requests[1]["json"])
    assert (stage_dir / "code.r2.duplicate.json").is_file()
    assert not (stage_dir / "code.r2.json").exists()
    [entry] = [json.loads(x) for x in (run.out_dir / "run_failures.jsonl").read_text().splitlines()]
    assert entry["kind"] == "duplicate" and entry["same_as"] == "code.r1.json"
    assert "duplicate attempts refused: 1" in "\n".join(control.history_counts(run.out_dir))
    assert "failed runs" not in "\n".join(control.history_counts(run.out_dir))


def test_a_second_duplicate_goes_to_the_user_not_to_a_run(setup):
    script = Script(Reply(code(FAILED)), Reply(code(REFORMATTED)))
    with FakeLLMServer(script) as server:
        run, stage_dir = setup(server)
        with pytest.raises(GateError, match="code_fix1_limit"):
            fix_loop(run, stage_dir)
    assert server.count() == 2  # no reviewer call, no third generation
    kinds = [
        json.loads(x)["kind"] for x in (run.out_dir / "run_failures.jsonl").read_text().splitlines()
    ]
    assert kinds == ["duplicate", "duplicate"]
