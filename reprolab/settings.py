"""Run settings derived from the validated Snakemake config: the paper's run, its
loop limits (their defaults are here and nowhere else; the config schema's agree,
tests/core/test_config_schema.py checks it) and the agents' session built from the config."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

from agents.cache import AgentCache
from agents.ledger import Ledger, parse_prices
from agents.presets import preset_models
from agents.session import (
    DEFAULT_CONTEXT_WINDOW,
    AgentSession,
    backtrack_count,
    make_provider,
)
from reprolab.errors import InputFileError
from reprolab.paper import Paper


@dataclass(frozen=True)
class Limits:
    """The bounded loops (config `limits`); these are the defaults."""

    max_design_revisions: int = 3
    """Design attempts per stage before asking the user."""
    max_code_revisions: int = 3
    """Code attempts per stage before asking the user."""
    max_replans: int = 2
    """Plan revisions before asking the user."""
    max_analysis_revisions: int = 2
    """Analysis attempts per stage before the supervisor decides."""
    max_backtracks: int = 2
    """Supervisor backtracks per paper before asking the user."""
    max_execution_failures: int = 2
    """Failed runs per stage; the paper's total is kept and never reset."""
    max_physics_failures: int = 2
    """Runs per stage whose checks fail; then the supervisor decides (physics_stuck)."""
    max_total_runtime_hours: float = 8.0
    """Simulation time per paper (0: no limit); later stages are blocked."""


@dataclass(frozen=True)
class PaperRun:
    """Everything a step needs to know about one paper's run."""

    paper: Paper
    recordings: str
    """Replay recordings folder of this paper."""
    limits: Limits
    config: dict

    @property
    def paper_id(self) -> str:
        return self.paper.paper_id

    @cached_property
    def agents(self) -> AgentSession:
        """Provider, per-agent models, cache, metrics and budget of this paper's agent
        calls; built on first use, so steps without agents need no API key."""
        return agent_session(self.config, self.paper_id, self.out_dir, self.recordings)

    @property
    def total_runtime_budget_s(self) -> float | None:
        """Simulation time the whole paper may use (limits.max_total_runtime_hours)."""
        hours = self.limits.max_total_runtime_hours
        return hours * 3600 if hours else None

    @property
    def gate_wait_s(self) -> float:
        """How long a gate polls for its answer before stopping its branch."""
        return float(self.config.get("gates", {}).get("wait_timeout_s", 0))

    @property
    def auto_approve(self) -> frozenset[str]:
        """Gate kinds config approves without a human (gates.auto_approve; demo only)."""
        return frozenset(self.config.get("gates", {}).get("auto_approve", []))

    @property
    def out_dir(self) -> Path:
        """This paper's results folder (relative to the Snakemake working directory)."""
        return Path(self.config.get("outputs_dir", "outputs")) / self.paper_id


def agent_session(
    config: dict, paper_id: str, out_dir: Path, recordings: str | Path
) -> AgentSession:
    """One paper's agent session from the run's config: provider, per-agent models,
    cache, ledger and budget, and the loop limits its prompts state."""
    cfg = config.get("provider", {})
    provider = make_provider(cfg, recordings)
    live = provider.name != "replay"
    outputs = Path(config.get("outputs_dir", "outputs"))
    record_dir = None
    if cfg.get("record"):
        record_dir = Path(cfg.get("record_dir") or out_dir / "recordings")
    return AgentSession(
        paper_id=paper_id,
        out_dir=Path(out_dir),
        provider=provider,
        ledger=Ledger(
            out_dir,
            parse_prices(cfg.get("prices_usd_per_mtok")),
            cfg.get("budget"),
            preset=cfg.get("preset"),
            default_model=provider.model,
        ),
        cache=AgentCache(cfg.get("cache_dir") or outputs / ".agent_cache")
        if live and cfg.get("cache", True)
        else None,
        models=preset_models(cfg.get("preset")) | dict(cfg.get("models", {})),
        context_window=cfg.get("context_window_tokens", DEFAULT_CONTEXT_WINDOW),
        max_output_tokens=cfg.get("max_output_tokens", 16000),
        record_dir=record_dir,
        round=1 + backtrack_count(Path(out_dir)),
        context_policy=cfg.get("context_policy", "ask"),
        verbosity=config.get("verbosity", "normal"),
        auto_approved=frozenset(config.get("gates", {}).get("auto_approve", [])),
        limits=asdict(Limits(**config.get("limits", {}))),
    )


def paper_entries(config: dict, load=Paper) -> dict[str, dict]:
    """Config's paper list keyed by paper_id (read from each paper's metadata). The
    workflow passes `load=reprolab.smk.cached_paper`, so that each paper is built once
    per Snakemake invocation, here and in every input function after."""
    entries = {}
    for entry in config["papers"]:
        paper = load(entry["paper_dir"])
        if paper.paper_id in entries:
            raise ValueError(
                f"config papers: paper_id '{paper.paper_id}' is listed twice "
                f"({entries[paper.paper_id]['paper_dir']} and {entry['paper_dir']})"
            )
        entries[paper.paper_id] = dict(entry)
    return entries


def paper_entry(config: dict, paper_id: str) -> tuple[dict, Paper]:
    """The config entry of one paper and its Paper, built once. A step of one paper
    builds no other (a 100-paper campaign's steps built all 100 each, ~0.3 s a step):
    folders named after their paper_id are tried first, confirmed by their metadata.
    The workflow has checked at load time that no paper_id is listed twice."""
    entries = sorted(config["papers"], key=lambda e: Path(e["paper_dir"]).name != paper_id)
    problems: list[InputFileError] = []
    for entry in entries:
        try:
            paper = Paper(entry["paper_dir"])
        except InputFileError as exc:  # another paper's problem is its own steps' to tell
            problems.append(exc)
            continue
        if paper.paper_id == paper_id:
            return entry, paper
    if problems:
        raise problems[0]
    raise KeyError(paper_id)


def paper_run(config: dict, paper_id: str) -> PaperRun:
    entry, paper = paper_entry(config, paper_id)
    recordings = entry.get("recordings") or str(Path(entry["paper_dir"]) / "recordings")
    limits = Limits(**config.get("limits", {}))
    return PaperRun(
        paper=paper,
        recordings=recordings,
        limits=limits,
        config=config,
    )


SLURM_LAUNCHER = "srun --mpi=pmix -n {ranks}"
"""Under Slurm, srun starts the ranks inside the job's allocation (Debian's Open MPI
needs PMIx; --mpi=none aborts in MPI_Init)."""


def apply_executor(config: dict, user_simulation: dict, executor: str | None) -> None:
    """Under `--profile slurm` (Snakemake's slurm executor) the simulations go to Slurm.

    Done here rather than by the profile's `config:` entry, which an extra `--config`
    on the command line replaces; the user's own `mpi_launcher` (set in their config,
    not the schema's default) and `simulation.slurm` (partition, account, qos) stay."""
    if executor != "slurm":
        return
    sim = config.setdefault("simulation", {})
    sim["executor"] = "slurm"
    if "mpi_launcher" not in user_simulation:
        sim["mpi_launcher"] = SLURM_LAUNCHER


SIMULATION_RUN_KEYS = (
    "max_mpi_ranks",
    "memory_safety_factor",
    "min_memory_mb",
    "max_memory_mb",
    "cap_to_limits",
    "max_concurrent_jobs",
)
"""simulation settings that change what a run is (ranks, memory, a sweep point's time
share); where and how it is confined (executor, launcher, Slurm options, sandbox)
does not change its numbers."""


def simulation_params(config: dict) -> dict:
    """The simulation settings file's content: changing one of these reruns the simulations."""
    sim = config.get("simulation") or {}
    return {key: sim.get(key) for key in SIMULATION_RUN_KEYS}


def figure_x_ranges(paper: Paper) -> dict[str, dict]:
    """Per figure, each digitized curve's x range: what a design's lint reads of the data."""
    ranges = {}
    for fig in paper.meta.figures:
        curves = {}
        for curve in fig.curves:  # in the axis unit; a curve without data has no range
            xs = paper.curve_data(fig.figure_id, curve.curve_id)[0] if curve.digitized else []
            curves[curve.curve_id] = [min(xs), max(xs)] if xs else []
        ranges[fig.figure_id] = curves
    return ranges


def stated_results(paper: Paper) -> dict[str, dict]:
    """Per result (figure or table), what a comparison reads of metadata.yaml: its entry
    and the key values naming it. As a rule's params, an edited stated value reaches the
    comparison of whichever stage targets it (a newer metadata.yaml alone does not, past
    the replan it also causes)."""
    entries = {f.figure_id: f for f in paper.meta.figures} | {
        t.table_id: t for t in paper.meta.tables
    }
    return {
        rid: {
            "entry": entry.model_dump(mode="json"),
            "key_values": [
                kv.model_dump(mode="json") for kv in paper.meta.key_values if kv.figure == rid
            ],
        }
        for rid, entry in entries.items()
    }
