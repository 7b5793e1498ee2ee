"""A stage's job size from its design and script, before anything is submitted.

The design states the dimensions, the symmetries and (usually) the source's bandwidth;
the cell, the resolution it is meshed at, the run length and whether a medium is
dispersive are in the generated script, read with `ast` (nothing runs). From them,
`reprolab.jobs.sizing` estimates memory and core-seconds, chooses MPI ranks (capped at
`simulation.max_mpi_ranks`) and derives Slurm's time limit and memory with its margin.
What neither states is said in `notes`; without a cell or a resolution the designer
agent's `performance_estimate` is used instead (`source` "agent").

Run length per run: `until=T` is T; `until_after_sources=T` is the source's duration
(a Gaussian of width 1/fwidth is on for 10/fwidth, Meep's cutoff 5 each side) plus T;
a field-decay stop is the source's duration plus a ring-down of two decay intervals and
two light crossings of the cell (`RING_DOWN_CROSSINGS`): a guess, so such a run is
`bounded=False` and its time limit is never below the plan's budget. Runs in a loop count
once per k-point or azimuthal order the design lists (else twice, as the lint counts them).

`partition_limits` gives the limits a request must fit: config (`simulation.slurm`:
max_job_minutes, max_mem_mb_per_node, cpus_per_node) and, on Slurm, `sinfo` for the
partition; `check_partition` raises `JobTooLarge` before anything is submitted.
"""

from __future__ import annotations

import ast
import functools
import math
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field

from reprolab.errors import ReproLabError
from reprolab.jobs import sizing
from reprolab.physics import lint

# Meep's GaussianSource is on from 0 to 2 * cutoff * width, cutoff 5, width 1/fwidth.
GAUSSIAN_ON_PER_FWIDTH = 10.0
# A decay-stopped run's ring-down: at least two decay intervals and this many light
# crossings of the cell's longest side (a lower bound for a high-Q resonance).
RING_DOWN_CROSSINGS = 2.0
SCALE_ENVS = (lint.RESOLUTION_SCALE_ENV, lint.PML_SCALE_ENV)
# Numeric helpers a script sizes its cell with (whole pixels, a diagonal).
MATH_CALLS = {
    **{
        f"{m}.{f}": getattr(math, f)
        for m in ("np", "numpy", "math")
        for f in ("ceil", "floor", "sqrt")
    },
    "np.round": round,
    "np.real": lambda x: x,  # a real value's real part (a material's epsilon, read below)
    "numpy.real": lambda x: x,
    "max": max,
    "min": min,
}
ENV_READS = {"os.environ.get", "os.getenv", "environ.get", "getenv"}
TRADE_OFFS = {
    "coarser": "coarser resolution (0.8x: about 0.8^(d+1) of the cost in d dimensions)",
    "symmetry": "use a mirror symmetry the structure and source share (about 0.5x)",
    "smaller_cell": "a smaller cell or thinner PML (cost proportional to the grid)",
    "go_on": "submit as estimated",
}


class JobTooLarge(ReproLabError):
    """A job's request exceeds what its partition allows: never submitted."""


@dataclass
class JobSize:
    """A stage's job as sized before submission (one sweep point's for a sweep)."""

    source: str
    """design (cell, resolution and run length read) or agent (its performance_estimate)."""
    memory_mb: float
    core_seconds: float
    ranks: int
    request: dict
    """sizing.slurm_request: time_min, mem_mb, ranks (the margin included)."""
    bounded: bool = True
    """False when the run length ends on a field decay (a guessed ring-down) or is unknown."""
    points: int = 1
    """Sweep points (each one job of this size)."""
    inputs: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def stage_core_seconds(self) -> float:
        return self.core_seconds * self.points

    def to_json(self) -> dict:
        return {**asdict(self), "stage_core_seconds": self.stage_core_seconds}


class RunConsts(lint.Consts):
    """The script's constants as this run sets them: a scale variable the step exports
    (a convergence rerun's 2x, quick-check mode's factor) read from this environment,
    not the script's default."""

    def __init__(self, tree: ast.Module, env: dict[str, str] | None = None):
        self.env = {k: v for k, v in os.environ.items() if k in SCALE_ENVS} if env is None else env
        # known before the assignments are evaluated: a layer's thickness may follow
        # from a library medium's index (a quarter wave of fused silica)
        self.meep_materials = lint.Consts.library_media(tree)
        super().__init__(tree)

    def eval(self, node):
        if isinstance(node, ast.Subscript):
            return self._library_epsilon(node)
        if isinstance(node, ast.Attribute) and lint.dotted(node) in ("np.pi", "math.pi"):
            return math.pi
        if isinstance(node, ast.Call) and lint.dotted(node.func) in MATH_CALLS and node.args:
            args = [self.eval(a) for a in node.args]
            if any(a is None for a in args):
                return None
            try:
                return float(MATH_CALLS[lint.dotted(node.func)](*args))
            except (ValueError, TypeError, OverflowError):
                return None
        if (
            isinstance(node, ast.Call)
            and lint.dotted(node.func) in ENV_READS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value) in self.env
        ):
            self.env_names.add(str(node.args[0].value))
            try:
                return float(self.env[str(node.args[0].value)])
            except ValueError:
                return None
        return super().eval(node)

    def _library_epsilon(self, node: ast.Subscript) -> float | None:
        """`M.epsilon(f)[i, j]` of a medium M the script imports from meep.materials:
        that tensor component's real part at the frequency f, from Meep's own material
        library (nothing of the script runs; the library is imported only for this)."""
        call, index = node.value, node.slice
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "epsilon"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in self.meep_materials
            and len(call.args) == 1
        ):
            return None
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        ij = [self.eval(p) for p in parts]
        freq = self.eval(call.args[0])
        if freq is None or len(ij) != 2 or None in ij:
            return None
        return library_epsilon(call.func.value.id, freq, int(ij[0]), int(ij[1]))


# Reads one component of a library medium's epsilon in a process of its own: importing
# Meep here would start MPI in the step (or the submitting) process.
_EPSILON = (
    "import sys\n"
    "from meep import materials\n"
    "name, f, i, j = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])\n"
    "print('epsilon=%r' % float(getattr(materials, name).epsilon(f)[i][j].real))\n"
)


@functools.lru_cache(maxsize=64)
def library_epsilon(name: str, freq: float, i: int, j: int) -> float | None:
    """The real part of component (i, j) of meep.materials' `name` at `freq` (Meep's
    frequency, its length unit), from Meep itself in a child process (about a second,
    once per medium and frequency); None when Meep or the medium is not there."""
    cmd = [sys.executable, "-c", _EPSILON, name, repr(freq), str(i), str(j)]
    env = {**os.environ, "OMPI_MCA_ess_singleton_isolated": "1"}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    found = [ln for ln in out.stdout.splitlines() if ln.startswith("epsilon=")]
    try:
        return float(found[-1].split("=", 1)[1]) if out.returncode == 0 and found else None
    except ValueError:
        return None


def _vector(node, consts: lint.Consts) -> list[float] | None:
    """A Vector3 the script gives (a literal, or a name bound to one), every component
    known; else None."""
    if isinstance(node, ast.Name):
        node = consts.calls.get(node.id)
    out = lint.vector3(node, consts) if node is not None else None
    return None if out is None or None in out else [float(v) for v in out]


def _assigned_vector(tree: ast.Module, name: str, consts: lint.Consts) -> list[float] | None:
    """The largest Vector3 a name is assigned anywhere (plain or tuple assignment): a
    script that meshes two cells (the structure, then a reference) under one name is
    sized by the larger."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            for t, value in pairs:
                if isinstance(t, ast.Name) and t.id == name:
                    vec = _vector(value, consts)
                    found += [vec] if vec else []
    return max(found, key=lambda v: math.prod(c for c in v if c > 0), default=None)


def _dispersive(tree: ast.Module, consts: lint.Consts) -> bool:
    """A meep.materials medium or a Medium with susceptibilities or a conductivity."""
    if consts.meep_materials:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and ".materials." in f".{lint.dotted(node)}.":
            return True
    return any(
        k.arg in ("E_susceptibilities", "H_susceptibilities", "D_conductivity")
        for c in lint.calls(tree, "Medium")
        for k in c.keywords
    )


def _source_on(design, tree: ast.Module, consts: lint.Consts) -> float | None:
    """How long the sources are on (Meep time): the narrowest Gaussian's 10 / fwidth."""
    widths = [s.fwidth for s in design.sources] + (
        [design.source_fwidth] if design.source_fwidth else []
    )
    if not widths:
        for c in lint.calls(tree, "GaussianSource"):
            w = consts.eval(lint.kwarg(c, "fwidth") or (c.args[1] if len(c.args) > 1 else None))
            if w:
                widths.append(w)
    return GAUSSIAN_ON_PER_FWIDTH / min(widths) if widths else None


def _returns(tree: ast.Module) -> dict[str, ast.expr]:
    """What each function of one `return <expr>` returns: a stop condition a script
    builds in a helper (`until_after_sources=stop()`) is read through it."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
            if len(returns) == 1:
                out[node.name] = returns[0].value
    return out


def _run_length(
    call: ast.Call, consts, source_on, longest, notes, returns=None
) -> tuple[float | None, bool]:
    """(Meep time of one run call, bounded) or (None, False) when it cannot be read."""
    until, after = lint.kwarg(call, "until"), lint.kwarg(call, "until_after_sources")
    stop = until if until is not None else after
    if isinstance(stop, ast.Call) and isinstance(stop.func, ast.Name) and not stop.args:
        stop = (returns or {}).get(stop.func.id, stop)
    fixed = consts.eval(stop)
    on = source_on or 0.0
    if fixed is not None:
        return (fixed if until is not None else on + fixed), True
    if isinstance(stop, ast.Call) and "decayed" in lint.dotted(stop.func):
        dt = consts.eval(stop.args[0] if stop.args else lint.kwarg(stop, "dt")) or 0.0
        ring = 2 * dt + RING_DOWN_CROSSINGS * longest
        notes.append(
            f"line {call.lineno}: a field-decay stop; ring-down guessed at {ring:g} "
            f"(2 decay intervals + {RING_DOWN_CROSSINGS:g} cell crossings)"
        )
        return (ring if until is not None else on + ring), False
    return None, False


def script_facts(design, code: str, env: dict[str, str] | None = None) -> dict:
    """Cell, resolution, run lengths, runs and media the script states (None: not read);
    `env`: the scale variables the run gets (default: this process's)."""
    tree = ast.parse(code)
    consts = RunConsts(tree, env)
    sims = lint.calls(tree, "Simulation")
    notes: list[str] = []
    cell = res = None
    cylindrical = False
    for s in sims:
        given = lint.kwarg(s, "cell_size")
        cell = cell or _vector(given, consts)
        if cell is None and isinstance(given, ast.Name):
            cell = _assigned_vector(tree, given.id, consts)
        res = res or consts.eval(lint.kwarg(s, "resolution"))
        dims = lint.kwarg(s, "dimensions")
        cylindrical = cylindrical or (dims is not None and "CYLINDRICAL" in lint.dotted(dims))
    longest = max(cell or [0.0])
    source_on = _source_on(design, tree, consts)
    lengths, bounded, returns = [], True, _returns(tree)
    for call in lint.calls(tree, "run"):
        if not isinstance(call.func, ast.Attribute):
            continue
        t, b = _run_length(call, consts, source_on, longest, notes, returns)
        bounded = bounded and b
        if t is None:
            notes.append(f"line {call.lineno}: the run's length is not read")
        else:
            lengths.append(t)
    # step functions a run call is given (Harminv, an LDOS): the most any call has
    step_functions = max(
        (len(c.args) for c in lint.calls(tree, "run") if isinstance(c.func, ast.Attribute)),
        default=0,
    )
    runs = lint.run_invocations(tree)
    in_loop = any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(tree))
    listed = max(len(design.k_points), len(design.m))
    if in_loop and listed:
        runs = max(runs, listed + (runs - 2 if runs > 2 else 0))
    return {
        "simulations": len(sims),
        "cell": cell,
        "resolution": res,
        "run_time": max(lengths) * max(1, runs) if lengths else None,
        "runs": runs,
        "step_functions": step_functions,
        "bounded": bounded and bool(lengths),
        "dispersive": _dispersive(tree, consts),
        "cylindrical": cylindrical,
        "force_complex": any(
            isinstance(k, ast.Constant) and k.value is True
            for s in sims
            for k in [lint.kwarg(s, "force_complex_fields")]
        ),
        "notes": notes,
    }


def for_stage(design, code: str | None, sim_cfg: dict, env: dict | None = None) -> JobSize:
    """The stage's job size: from the design and its script where they state the cell,
    resolution and run length; else the agent's estimate, with a note saying what is
    missing."""
    max_ranks = int(sim_cfg.get("max_mpi_ranks", 2))
    points = len(design.sweep.values) if design.sweep else 1
    try:
        facts = script_facts(design, code, env) if code and design.runs_simulation else {}
    except SyntaxError as exc:  # the sandbox's static check says so; sized by the agent
        facts = {"notes": [f"the script does not parse ({exc.msg}, line {exc.lineno})"]}
    if facts.get("simulations") == 0 or (code and not design.runs_simulation):
        return _no_simulation(points)
    missing = [k for k in ("cell", "resolution", "run_time") if facts.get(k) is None]
    if missing:
        return _agent_size(design, max_ranks, points, facts, missing)
    size = sizing.estimate(
        facts["cell"],
        facts["resolution"],
        facts["run_time"],
        dispersive=facts["dispersive"],
        symmetries=[s.kind for s in design.symmetries],
        max_ranks=max_ranks,
        runs=max(1, facts["runs"]),
        complex_fields=_complex_fields(design, facts),
        step_functions=facts["step_functions"],
    )
    notes = list(facts["notes"]) + size.notes
    if design.resolution and abs(facts["resolution"] - design.resolution) > 1e-9:
        notes.append(
            f"the script meshes at resolution {facts['resolution']:g} (the design says "
            f"{design.resolution}); the script's, in its own length unit, is used"
        )
    inputs = {
        "cell": facts["cell"],
        "resolution": facts["resolution"],
        "run_time": facts["run_time"],
        "runs": facts["runs"],
        "step_functions": facts["step_functions"],
        "dispersive": facts["dispersive"],
        "complex_fields": _complex_fields(design, facts),
        "symmetries": [s.kind for s in design.symmetries],
        "grid_cells": size.cells,
        "time_steps": size.steps,
    }
    return JobSize(
        "design",
        size.memory_mb,
        size.core_seconds,
        size.ranks,
        sizing.slurm_request(size),
        facts["bounded"],
        points,
        inputs,
        notes,
    )


def _complex_fields(design, facts: dict) -> bool:
    """Whether Meep runs complex fields: a Bloch k-point other than Γ, cylindrical
    coordinates at m != 0, or the script forces them."""
    bloch = any(any(c for c in k) for k in design.k_points)
    return bool(bloch or (facts.get("cylindrical") and any(design.m)) or facts.get("force_complex"))


def _no_simulation(points: int) -> JobSize:
    """A script that builds no mp.Simulation (a material evaluation): Python and Meep's
    import, the calibration's set-up."""
    size = sizing.Size(0, 0, 0, False, sizing.BASE_MEMORY_MB, sizing.SETUP_SECONDS)
    return JobSize(
        "design",
        sizing.BASE_MEMORY_MB,
        sizing.SETUP_SECONDS,
        1,
        sizing.slurm_request(size),
        True,
        points,
        {"simulations": 0},
        ["the script builds no mp.Simulation: Python and Meep's import only"],
    )


def _agent_size(design, max_ranks, points, facts, missing) -> JobSize:
    est = design.performance_estimate
    ranks = max(1, min(est.mpi_ranks, max_ranks))
    size = sizing.Size(design.dimensions, 0, 0, False, est.memory_mb, 0, ranks)
    size.core_seconds = est.runtime_seconds * ranks
    note = (
        f"not sized from the design: {', '.join(missing)} not read from it or its script; "
        "the designer agent's performance_estimate is used"
    )
    return JobSize(
        "agent",
        est.memory_mb,
        size.core_seconds,
        ranks,
        sizing.slurm_request(size),
        False,
        points,
        {},
        [note, *facts.get("notes", [])],
    )


def partition_limits(sim_cfg: dict, partition: str | None, executor: str) -> dict:
    """max_time_min, max_mem_mb, cpus: config first, then `sinfo` for the partition on
    Slurm (a limit neither gives is not checked)."""
    slurm = dict(sim_cfg.get("slurm") or {})
    limits = {
        "max_time_min": slurm.get("max_job_minutes") or None,
        "max_mem_mb": slurm.get("max_mem_mb_per_node") or None,
        "cpus": slurm.get("cpus_per_node") or None,
        "from": "config",
    }
    if executor == "slurm" and None in (limits["max_time_min"], limits["max_mem_mb"]):
        found = sinfo_limits(partition)
        for key, value in found.items():
            if limits.get(key) is None and value is not None:
                limits[key] = value
                limits["from"] = "config and sinfo" if limits["from"] == "config" else "sinfo"
    return limits


def sinfo_limits(partition: str | None) -> dict:
    """The partition's time limit (minutes), memory per node (MB) and CPUs per node as
    `sinfo` reports them (the largest node); {} without sinfo."""
    if shutil.which("sinfo") is None:
        return {}
    cmd = ["sinfo", "-h", "-o", "%l %m %c"] + (["-p", partition] if partition else [])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return {}
    rows = [line.split() for line in out.stdout.splitlines() if len(line.split()) == 3]
    if not rows:
        return {}
    times = [parse_slurm_minutes(r[0]) for r in rows]
    return {
        "max_time_min": max(times) if None not in times else None,
        "max_mem_mb": max(_int(r[1].rstrip("+")) or 0 for r in rows) or None,
        "cpus": max(_int(r[2].rstrip("+")) or 0 for r in rows) or None,
    }


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def parse_slurm_minutes(text: str) -> float | None:
    """Slurm's [days-]hours:minutes:seconds (or minutes) as minutes; None: infinite."""
    if text in ("infinite", "UNLIMITED", "n/a"):
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if len(parts) == 1:
        minutes = float(parts[0])
    else:
        parts = [0] * (3 - len(parts)) + parts
        minutes = parts[0] * 60 + parts[1] + parts[2] / 60
    minutes += int(days) * 1440 if days else 0
    return int(minutes) if minutes == int(minutes) else minutes


def check_partition(job: JobSize, request: dict, limits: dict, where: str) -> None:
    """Raise JobTooLarge (nothing submitted) when the request exceeds a limit."""
    problems = sizing.partition_problems(request, limits)
    if not problems:
        return
    raise JobTooLarge(
        f"{where}: not submitted: the job asks {request['time_min']} min, "
        f"{request['mem_mb']} MB, {request['ranks']} rank(s) (estimated {job.core_seconds:.3g} "
        f"core-s, {job.memory_mb:.0f} MB, from the {job.source}); "
        + "; ".join(problems)
        + f" (limits from {limits.get('from', 'config')}: simulation.slurm.max_job_minutes, "
        "max_mem_mb_per_node, cpus_per_node). Options: "
        + "; ".join(v for k, v in TRADE_OFFS.items() if k != "go_on")
        + " (`reprolab invalidate PAPER STAGE --reason ...` redoes the design), or a "
        "partition that fits."
    )


def actual_use(record: dict) -> tuple[float | None, float | None]:
    """(core-seconds, peak resident MB) of a run; None unknown: what its ranks reported
    at exit (summed: they run at once), else what the launcher's watchdog saw (which
    does not see the ranks srun starts)."""
    ranks = record.get("rank_usage") or []
    if ranks:
        return sum(u["cpu_s"] for u in ranks), sum(u["peak_mb"] for u in ranks)
    sandbox = record.get("sandbox") or {}
    clock = record.get("time_limit") or {}
    core_s = clock.get("cpu_s")
    mem = sandbox.get("peak_resident_mb")
    return (float(core_s) if core_s else None), (float(mem) if mem else None)


def beside_actual(job: JobSize, record: dict) -> dict:
    """What the stage record keeps: the estimate, the request and the actual use (a
    sweep's: summed core-seconds, largest peak over its points)."""
    points = record.get("points") or []
    if points:
        uses = [actual_use(p) for p in points]
        cores = [u[0] for u in uses if u[0] is not None]
        mems = [u[1] for u in uses if u[1] is not None]
        core_s = sum(cores) / len(cores) if cores else None
        mem = max(mems) if mems else None
    else:
        core_s, mem = actual_use(record)
    out = sizing.beside_actual(
        {"core_seconds": job.core_seconds, "memory_mb": job.memory_mb}, core_s, mem
    )
    return {**job.to_json(), **out}
