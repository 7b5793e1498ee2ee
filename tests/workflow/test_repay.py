"""An unchanged agent call is never paid twice, wherever the outputs live.

The etalon example runs once through the real Anthropic SDK against the fake
Messages API (answers from its recordings); then its outputs are rebuilt in another
folder from a copy of the agent cache, and every agent step is forced to run again
in the first folder. Neither may reach the server: a prompt is a function of what
the call is about (no absolute path, timestamp, nonce or later stage's answer).
"""

import json
import shutil

import pytest
import yaml

from tests.support.fake_llm import FakeLLMServer, FromRecordings
from tests.support.pipeline import AG_EXAMPLE, snakemake

pytestmark = pytest.mark.pipeline
AGENT_RULES = (
    "adapt_prompts",
    "plan",
    "design",
    "generate_code",
    "validate_run",
    "analyze",
    "stage_verdict",
)


def configure(wd, url: str) -> None:
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(AG_EXAMPLE)}],
        "provider": {"kind": "anthropic", "model": "claude-opus-4-5", "base_url": url},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))


def ledger(wd) -> list[dict]:
    path = wd / "outputs" / AG_EXAMPLE.name / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """(server, working directory, environment) after one whole run of the example."""
    wd = tmp_path_factory.mktemp("first")
    with FakeLLMServer(FromRecordings(AG_EXAMPLE / "recordings")) as server:
        configure(wd, server.url)
        env = {**__import__("os").environ, "ANTHROPIC_API_KEY": "test-key-not-real"}
        run = snakemake(wd, env=env)
        assert run.returncode == 0, run.stderr[-3000:]
        assert server.count() == len(ledger(wd)) > 15
        assert {e["source"] for e in ledger(wd)} == {"api"}
        yield server, wd, env


def test_outputs_moved_elsewhere_are_rebuilt_from_a_copied_cache_for_nothing(first_run, tmp_path):
    server, wd, env = first_run
    paid = server.count()
    moved = tmp_path / "elsewhere" / "run"
    moved.mkdir(parents=True)
    shutil.copytree(wd / "outputs" / ".agent_cache", moved / "outputs" / ".agent_cache")
    configure(moved, server.url)
    run = snakemake(moved, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert server.count() == paid, [r["headers"]["x-reprolab-call"] for r in server.requests[paid:]]
    calls = ledger(moved)
    assert len(calls) == paid and {e["source"] for e in calls} == {"cache"}
    assert (
        moved / "outputs" / AG_EXAMPLE.name / f"REPRODUCTION_REPORT_{AG_EXAMPLE.name}.md"
    ).is_file()


def test_every_agent_step_forced_to_run_again_pays_nothing(first_run):
    server, wd, env = first_run
    paid, before = server.count(), len(ledger(wd))
    run = snakemake(wd, "--forcerun", *AGENT_RULES, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert server.count() == paid, [r["headers"]["x-reprolab-call"] for r in server.requests[paid:]]
    again = ledger(wd)[before:]
    assert len(again) == before and {e["source"] for e in again} == {"cache"}
