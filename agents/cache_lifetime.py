"""How long an agent's prompt prefix is worth keeping in the API's prompt cache.

A request carries its own agent's tool, so what it caches (tool, global rules, the
agent's instructions, the paper) is read only by that agent's later calls: the next
stage's, after this stage's remaining calls, a simulation and perhaps a gate. Per
token of the prefix, a write costs 0.25 more than sending it uncached when kept 5
minutes (1.25x the input price) and 1.0 more when kept an hour (2x); each read in time
saves 0.9 (0.1x) and renews the lifetime. A lifetime is chosen where its expected
saving is positive and the larger: the reads it is expected to catch, times 0.9,
less its premium. So a 5-minute write pays when its read comes in time more often
than 0.25 / 0.9 = 28 % of runs; an hour's write needs two reads (2.1x against 2x
with one).

The gap between an agent's calls in consecutive stages is the stage's other calls
(MODEL_CALL_SECONDS each), the simulation between them and the material gate after
stage 0. The simulation may take anything up to the plan's runtime_budget_minutes for
its stage (a limit, not a forecast): it is taken as equally likely anywhere in that
range. A gate no config approves waits for a person: no lifetime covers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.registry import AGENTS
from reprolab.fileio import read_json

LIFETIME_S = {"5m": 300.0, "1h": 3600.0}
WRITE_PREMIUM = {"5m": 0.25, "1h": 1.0}
"""What a write costs above sending the prefix uncached, per token, in input prices."""
READ_SAVING = 0.9
MODEL_CALL_SECONDS = 20.0
"""An agent call's expected latency: the first token and a few hundred output tokens."""
BEFORE_SIMULATION = ("simulation_designer", "design_reviewer", "code_generator", "code_reviewer")
"""The stage's agents called before its simulation; the others come after it."""
MATERIAL_GATE = "material_checkpoint"


@dataclass(frozen=True)
class Gap:
    """The time between two calls: `fixed_s` plus anything up to `spread_s` more."""

    fixed_s: float
    spread_s: float = 0.0

    def within(self, lifetime_s: float) -> float:
        """The probability that the gap ends within `lifetime_s`."""
        if lifetime_s < self.fixed_s:
            return 0.0
        if self.spread_s <= 0:
            return 1.0
        return min(1.0, (lifetime_s - self.fixed_s) / self.spread_s)


PERSON = Gap(float("inf"))
"""Behind a gate that waits for a person."""


def stage_agents() -> list[str]:
    """The agents called in every stage, in the order a stage calls them."""
    return [name for name, spec in AGENTS.items() if spec.called == "stage"]


def expected_saving(lifetime: str, gaps: list[Gap]) -> float:
    """Per token of the prefix, in input prices: the reads a write of this lifetime is
    expected to catch (each needs every gap before it in time) less its premium."""
    saving, alive = -WRITE_PREMIUM[lifetime], 1.0
    for gap in gaps:
        alive *= gap.within(LIFETIME_S[lifetime])
        saving += READ_SAVING * alive
    return saving


def ttl(gaps: list[Gap]) -> str | None:
    """The lifetime to write a prefix with ("5m", "1h") given the gaps to each later
    read (each from the read before), or None where no lifetime is expected to pay."""
    savings = {life: expected_saving(life, gaps) for life in LIFETIME_S}
    best = max(savings, key=savings.get)
    return best if savings[best] > 0 else None


def stage_gaps(agent: str, plan_stages: list[dict], auto_approved) -> list[Gap]:
    """The gaps between the calls of a stage agent in consecutive stages of the plan
    (`plan_stages` in order, with their runtime_budget_minutes)."""
    calls = (len(stage_agents()) - 1) * MODEL_CALL_SECONDS
    gaps = []
    for here in range(len(plan_stages) - 1):
        if here == 0 and MATERIAL_GATE not in auto_approved:
            gaps.append(PERSON)
            continue
        # A caller before the simulation waits for this stage's; one after it, the next's.
        sim_stage = plan_stages[here if agent in BEFORE_SIMULATION else here + 1]
        gaps.append(Gap(calls, 60.0 * sim_stage["runtime_budget_minutes"]))
    return gaps


def lifetimes(gaps: list[Gap]) -> list[str | None]:
    """The mark of each of an agent's calls, `gaps` apart. A call writes where the reads
    after it pay for a write; a call that is likely to find an earlier write alive marks
    it too (a request reads the cache only at a breakpoint), as a 5-minute mark, the
    cheaper write should the entry be gone."""
    marks: list[str | None] = []
    life = None  # the lifetime of the entry the calls so far keep
    for n in range(len(gaps) + 1):
        alive = 0.0 if n == 0 or life is None else gaps[n - 1].within(LIFETIME_S[life])
        ahead = ttl(gaps[n:])
        if READ_SAVING * alive > WRITE_PREMIUM["5m"] * (1 - alive):  # worth trying to read
            life = "1h" if "1h" in (ahead, life) else "5m"
            marks.append(ahead or "5m")
        else:
            life = ahead
            marks.append(ahead)
    return marks


def planned_stages(out_dir: Path) -> list[dict]:
    """The plan's stages (`plan.json` in the paper's outputs), [] before there is one."""
    path = Path(out_dir) / "plan.json"
    if not path.is_file():
        return []
    return list(read_json(path).get("output", {}).get("stages", []))


def prefix_ttl(agent: str, stage_id: str, out_dir: Path, auto_approved=()) -> str | None:
    """The lifetime this call's cacheable prefix is marked with, or None (a paper-level
    agent, called once; a stage the plan does not list)."""
    stages = planned_stages(out_dir)
    ids = [s["stage_id"] for s in stages]
    if agent not in stage_agents() or stage_id not in ids:
        return None
    gaps = stage_gaps(agent, stages, frozenset(auto_approved))
    return lifetimes(gaps)[ids.index(stage_id)]
