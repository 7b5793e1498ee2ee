"""How long an agent's prompt prefix is worth keeping in the API's prompt cache.

A request carries its own agent's tool, so what it caches (tool, global rules, the
agent's instructions, the paper) is read only by that agent's later calls: the next
stage's, after this stage's remaining calls, a simulation and perhaps a gate. A write
costs 1.25x the input price for 5 minutes, 2x for an hour; every read 0.1x and
renews the lifetime. So a 5-minute write pays with one read inside 5 minutes, an
hour's write with two reads each within an hour of the last (2 + 0.2 < 3; with one
read it costs 2.1x against 2x unwritten). Nothing is written where no read is
expected in time: a paper-level agent (called once) or a read behind a gate that
waits for a person.

The expected gap between two calls of an agent in consecutive stages is the calls in
between (MODEL_CALL_SECONDS each) plus the simulation that separates them (the plan's
runtime_budget_minutes for that stage) plus the material gate after stage 0 unless
config approves it.
"""

from __future__ import annotations

from pathlib import Path

from agents.registry import AGENTS
from reprolab.fileio import read_json

FIVE_MINUTES_S = 300.0
ONE_HOUR_S = 3600.0
LIFETIME_S = {"5m": FIVE_MINUTES_S, "1h": ONE_HOUR_S}
MODEL_CALL_SECONDS = 20.0
"""An agent call's expected latency: the first token and a few hundred output tokens."""
BEFORE_SIMULATION = ("simulation_designer", "design_reviewer", "code_generator", "code_reviewer")
"""The stage's agents called before its simulation; the others come after it."""
PERSON = float("inf")
"""A gate no config approves waits for a person: no cache lifetime covers it."""
MATERIAL_GATE = "material_checkpoint"


def stage_agents() -> list[str]:
    """The agents called in every stage, in the order a stage calls them."""
    return [name for name, spec in AGENTS.items() if spec.called == "stage"]


def ttl(gaps_s: list[float]) -> str | None:
    """The lifetime to write a prefix with ("5m", "1h"), given the expected seconds from
    this call to each later read, each gap from the read before; None: do not write."""
    if not gaps_s:
        return None
    if gaps_s[0] <= FIVE_MINUTES_S:
        return "5m"
    reads_in_an_hour = 0
    for gap in gaps_s:
        if gap > ONE_HOUR_S:
            break
        reads_in_an_hour += 1
    return "1h" if reads_in_an_hour >= 2 else None


def stage_gap_s(simulation_s: float, gate_s: float) -> float:
    """Expected seconds between an agent's call in one stage and its call in the next:
    the other calls of a stage, the simulation between them and the gate, if any."""
    return (len(stage_agents()) - 1) * MODEL_CALL_SECONDS + simulation_s + gate_s


def stage_gaps(agent: str, plan_stages: list[dict], auto_approved) -> list[float]:
    """Expected gaps between the calls of a stage agent in consecutive stages of the plan
    (`plan_stages` in order, with their runtime_budget_minutes); the material gate
    follows stage 0."""
    gaps = []
    for here in range(len(plan_stages) - 1):
        # A caller before the simulation waits for this stage's; one after it, the next's.
        sim_stage = plan_stages[here if agent in BEFORE_SIMULATION else here + 1]
        gate = 0.0 if here or MATERIAL_GATE in auto_approved else PERSON
        gaps.append(stage_gap_s(60.0 * sim_stage["runtime_budget_minutes"], gate))
    return gaps


def read_gaps(agent: str, stage_id: str, plan_stages: list[dict], auto_approved) -> list[float]:
    """Expected gaps to each later call of `agent` in this paper (none for a paper-level
    agent, or a stage the plan does not list)."""
    ids = [s["stage_id"] for s in plan_stages]
    if agent not in stage_agents() or stage_id not in ids:
        return []
    return stage_gaps(agent, plan_stages, auto_approved)[ids.index(stage_id) :]


def lifetimes(gaps_s: list[float]) -> list[str | None]:
    """The mark of each of an agent's calls, `gaps_s` apart. A call writes where later
    reads pay for it; a call whose prefix an earlier write still holds marks it too (a
    request reads the cache only at a breakpoint), with that write's lifetime."""
    marks: list[str | None] = []
    life = None
    for n in range(len(gaps_s) + 1):
        alive = n > 0 and life is not None and gaps_s[n - 1] <= LIFETIME_S[life]
        ahead = ttl(gaps_s[n:])
        life = (ahead if ahead == "1h" else life) if alive else ahead
        marks.append(life)
    return marks


def planned_stages(out_dir: Path) -> list[dict]:
    """The plan's stages (`plan.json` in the paper's outputs), [] before there is one."""
    path = Path(out_dir) / "plan.json"
    if not path.is_file():
        return []
    return list(read_json(path).get("output", {}).get("stages", []))


def prefix_ttl(agent: str, stage_id: str, out_dir: Path, auto_approved=()) -> str | None:
    """The lifetime this call's cacheable prefix is marked with, or None."""
    stages = planned_stages(out_dir)
    ids = [s["stage_id"] for s in stages]
    if agent not in stage_agents() or stage_id not in ids:
        return None
    gaps = stage_gaps(agent, stages, frozenset(auto_approved))
    return lifetimes(gaps)[ids.index(stage_id)]
