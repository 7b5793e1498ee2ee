import pytest
import yaml

from agents.planner import PlannerOutput
from agents.providers import AgentRequest, RecordingError, ReplayProvider
from agents.runner import call_agent
from tests.support.pipeline import EXAMPLE


def request(agent="planner", stage="paper", attempt=1):
    return AgentRequest(
        agent=agent, paper_id="p", stage_id=stage, attempt=attempt, system="", user=""
    )


def test_missing_recording_names_agent_stage_attempt(tmp_path):
    with pytest.raises(RecordingError) as exc:
        ReplayProvider(tmp_path).complete(request(attempt=7), PlannerOutput)
    msg = str(exc.value)
    assert "agent 'planner'" in msg and "stage 'paper'" in msg and "attempt 7" in msg


def test_invalid_recording_names_field(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "planner.a1.yaml").write_text(
        "agent: planner\nstage_id: paper\nattempt: 1\noutput:\n  paper_id: p\n  title: t\n"
    )
    with pytest.raises(RecordingError) as exc:
        ReplayProvider(tmp_path).complete(request(), PlannerOutput)
    assert "field 'summary'" in str(exc.value) and "planner.a1.yaml" in str(exc.value)


def test_recording_for_another_agent_is_refused(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "planner.a1.yaml").write_text(
        "agent: supervisor\nstage_id: paper\noutput: {}\n"
    )
    with pytest.raises(RecordingError, match="agent='supervisor'"):
        ReplayProvider(tmp_path).complete(request(), PlannerOutput)


def test_every_example_recording_validates():
    from agents.runner import OUTPUT_MODELS

    recordings = sorted((EXAMPLE / "recordings").glob("*/*.yaml"))
    assert len(recordings) >= 20
    provider = ReplayProvider(EXAMPLE / "recordings")
    for path in recordings:
        agent, attempt = path.stem.rsplit(".a", 1)
        provider.complete(request(agent, path.parent.name, int(attempt)), OUTPUT_MODELS[agent])


def replay_session(tmp_path, **provider):
    from reprolab.settings import agent_session

    config = {"outputs_dir": str(tmp_path), "provider": {"kind": "replay", **provider}}
    return agent_session(config, "silica_bragg_2026", tmp_path / "p", EXAMPLE / "recordings")


def test_call_agent_records_provenance_and_scripted_usage(example_paper, tmp_path):
    from agents import prompt_adaptor

    session = replay_session(tmp_path)
    art = call_agent(
        prompt_adaptor.AGENT,
        session=session,
        stage_id="paper",
        attempt=1,
        context=prompt_adaptor.context(example_paper.paper_id, "abstract"),
    )
    prov = art["provenance"]
    assert prov["agent"] == "prompt_adaptor" and prov["provider"] == "replay"
    assert len(prov["prompt_sha256"]) == 64
    [entry] = session.ledger.entries()
    recorded = yaml.safe_load((EXAMPLE / "recordings/paper/prompt_adaptor.a1.yaml").read_text())
    assert entry["source"] == "replay"
    assert entry["input_tokens"] == recorded["usage"]["input_tokens"]
    assert entry["output_tokens"] == recorded["usage"]["output_tokens"]


def test_budget_stops_before_the_call_that_would_exceed_it(example_paper, tmp_path):
    from agents import prompt_adaptor
    from agents.ledger import BUDGET_MARKER, BudgetExceededError

    session = replay_session(tmp_path, budget={"max_tokens": 100})
    ctx = prompt_adaptor.context(example_paper.paper_id, "abstract")
    kwargs = dict(session=session, stage_id="paper", attempt=1, context=ctx)
    call_agent(prompt_adaptor.AGENT, **kwargs)  # nothing spent yet: allowed
    with pytest.raises(BudgetExceededError, match="max_tokens 100"):
        call_agent(prompt_adaptor.AGENT, **kwargs)
    assert len(session.ledger.entries()) == 1
    assert (session.out_dir / BUDGET_MARKER).is_file()
