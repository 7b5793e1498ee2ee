"""A job's size from the simulation it runs: grid cells and time steps from the cell,
resolution and run length; memory and core-seconds from them with figures calibrated on
measured Meep runs (benchmarks/job_sizing.py, benchmarks/results/job_sizing.md); MPI
ranks so that each rank holds enough of the grid to be worth it; Slurm's time limit and
memory with a margin; and whether the job fits its partition and the stage's budget.

The run length is Meep time (a/c) summed over the script's runs, a ring-down included.
Meep's time step is COURANT / resolution, so a run of T time units takes
T * resolution / COURANT steps. A mirror or rotate2 symmetry halves the computed grid,
rotate4 quarters it; a dispersive (Lorentz-Drude) medium adds polarization fields.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

COURANT = 0.5
# Calibration on measured runs (benchmarks/results/job_sizing.md): nine 1D, 2D and 3D
# planted runs of 600 to 191 000 cells and the runs of every bundled example's stages
# (28 processes, each script alone on the shared 2-core machine, one rank). Peak memory
# is Python and Meep's import (93 MB) plus 247 bytes per grid cell (least squares on the
# nine). Compute, non-negative least squares, relative, on all 28 (a sweep's points
# weighted 1/sqrt(points)): a set-up (Python and Meep's import), each run's own (a
# Simulation's init), each time step's whatever the grid, and seconds per cell-step by
# dimensions (3D: six field components and a cell that is mostly PML at these sizes).
# Fitted: 0.72 s + 0.11 s per run + 9.7e-6 s per step + 2.7e-9 / 5.8e-9 / 5.1e-8 s per
# cell-step in 1D / 2D / 3D. Runs with Harminv (a Python call every step) come out
# 0.6x: their per-step cost is larger and not modelled.
BASE_MEMORY_MB = 93.0
BYTES_PER_CELL = 250.0
SECONDS_PER_CELL_STEP = {1: 2.7e-9, 2: 5.8e-9, 3: 5.1e-8}
SETUP_SECONDS = 0.72
# Each run's own set-up and each time step's cost whatever the grid (the step loop, DFT
# and step functions): they dominate small grids run often (a band diagram's k-points,
# a resonator's azimuthal orders, a 1D stack).
PER_RUN_SECONDS = 0.11
SECONDS_PER_STEP = 9.7e-6
# A step function the script gives its run (Harminv, an LDOS, any Python callback) is a
# Python call at every time step on every rank: what the runs with Harminv lacked (the
# disk resonator's five runs, 29 us a step, the band diagram's thirteen, 16 us, measured
# as the shortfall of the fit above over their steps; benchmarks/results/job_sizing.md).
SECONDS_PER_STEP_FUNCTION = 2.0e-5
# A dispersive medium's polarization fields: cost and memory of its cells (the whole grid
# as an upper bound) times this.
DISPERSIVE_FACTOR = 1.6
# An MPI rank pays off above this many grid cells (below it halo exchange and the
# per-rank set-up outweigh the split); stated, not measured on this 2-core machine.
MIN_CELLS_PER_RANK = 200_000
# Slurm's request: the estimate times this margin, at least MIN_TIME_MIN minutes (Slurm's
# time limits are whole minutes: a job of seconds asks for one).
MARGIN = 1.5
# The time limit's own margin: estimates came out 0.64 to 1.4 of the measured
# core-seconds on the bundled examples (Harminv runs low), and a limit under the need
# loses the whole run, while a longer limit only queues a little longer.
TIME_MARGIN = 2.0
MIN_TIME_MIN = 1
# The job's own worker (submitit's Python, the launcher and its watchdog) runs in the
# same allocation as the ranks, and Slurm's --mem covers it too: a 1D run of 99 MB asked
# 140 MB and was killed at 163 MB.
WORKER_MEMORY_MB = 100
# The least memory a job asks for (`simulation.min_memory_mb`'s default): the smallest
# job's own request, one rank of Python with Meep imported (BASE_MEMORY_MB) with the
# margin, and its worker, 240 MB; a 512 MB floor asked 5.5x what the bundled examples'
# small stages use.
MIN_MEMORY_MB = 240
MAX_MEMORY_MB = 8192


def memory_bounds(sim_cfg: dict) -> tuple[int, int]:
    """(min_memory_mb, max_memory_mb) of the `simulation` config, defaults filled in."""
    return (
        int(sim_cfg.get("min_memory_mb", MIN_MEMORY_MB)),
        int(sim_cfg.get("max_memory_mb", MAX_MEMORY_MB)),
    )


# Complex fields (a Bloch k-point, cylindrical m != 0, force_complex_fields): Meep stores
# and updates a real and an imaginary part, twice the grid work and field memory; the
# band-diagram and disk examples measured 1.74x and 1.81x the real-field estimate.
COMPLEX_FACTOR = 2.0
SYMMETRY_FACTOR = {"mirror": 0.5, "rotate2": 0.5, "rotate4": 0.25}


@dataclass
class Size:
    """What one job costs: its inputs and the estimate."""

    dimensions: int
    cells: float
    steps: float
    dispersive: bool
    memory_mb: float
    core_seconds: float
    ranks: int = 1
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def grid_cells(cell: list[float], resolution: float, symmetries=()) -> float:
    """Computed grid cells: pixels along every axis with extent, symmetries applied."""
    n = 1.0
    for length in cell:
        if length and length > 0:
            n *= max(1.0, length * resolution)
    for s in symmetries:
        kind = s if isinstance(s, str) else s.get("kind", "")
        n *= SYMMETRY_FACTOR.get(kind.lower(), 1.0)
    return n


def time_steps(run_time: float, resolution: float) -> float:
    return run_time * resolution / COURANT


def estimate(
    cell: list[float],
    resolution: float,
    run_time: float,
    *,
    dispersive: bool = False,
    symmetries=(),
    max_ranks: int = 1,
    runs: int = 1,
    complex_fields: bool = False,
    step_functions: int = 0,
) -> Size:
    """The job's memory and core-seconds, and the ranks worth running it on; `run_time`
    is summed over the job's `runs`; `step_functions`: the Python step functions its
    runs call every step."""
    if resolution <= 0 or run_time < 0 or not cell:
        raise ValueError(
            f"job size needs a cell, resolution > 0 and run time >= 0; got cell={cell}, "
            f"resolution={resolution}, run_time={run_time}"
        )
    dims = sum(1 for c in cell if c and c > 0)
    cells = grid_cells(cell, resolution, symmetries)
    steps = time_steps(run_time, resolution)
    factor = (DISPERSIVE_FACTOR if dispersive else 1.0) * (
        COMPLEX_FACTOR if complex_fields else 1.0
    )
    ranks, notes = choose_ranks(cells, max_ranks)
    # Every rank is a Python with Meep imported; the grid is split between them.
    memory = BASE_MEMORY_MB * ranks + BYTES_PER_CELL * cells * factor / 1e6
    # Set-up, runs and steps are paid by every rank; the cell-steps are shared.
    per_step = SECONDS_PER_STEP + SECONDS_PER_STEP_FUNCTION * max(0, step_functions)
    per_rank = SETUP_SECONDS + PER_RUN_SECONDS * max(1, runs) + per_step * steps
    core_s = per_rank * ranks + SECONDS_PER_CELL_STEP[max(1, dims)] * cells * steps * factor
    return Size(dims, cells, steps, dispersive, memory, core_s, ranks, notes)


def choose_ranks(cells: float, max_ranks: int) -> tuple[int, list[str]]:
    """As many ranks as hold MIN_CELLS_PER_RANK each, at most max_ranks."""
    worth = max(1, int(cells // MIN_CELLS_PER_RANK))
    ranks = max(1, min(worth, int(max_ranks)))
    note = f"{ranks} rank(s): {cells:.3g} cells, {MIN_CELLS_PER_RANK:g} per rank pay off" + (
        f" (capped at {max_ranks})" if worth > max_ranks else ""
    )
    return ranks, [note]


def slurm_request(size: Size) -> dict:
    """Slurm's time limit (minutes, TIME_MARGIN) and memory (MB, MARGIN, plus the job's own
    worker) from the estimate: the wall time is core-seconds over ranks (no parallel gain
    assumed beyond that)."""
    wall_s = size.core_seconds / size.ranks
    return {
        "time_min": max(MIN_TIME_MIN, math.ceil(wall_s * TIME_MARGIN / 60)),
        "mem_mb": math.ceil(size.memory_mb * MARGIN) + WORKER_MEMORY_MB,
        "ranks": size.ranks,
    }


def partition_problems(request: dict, partition: dict) -> list[str]:
    """Why the request cannot run on the partition (its max_time_min, max_mem_mb per
    node, cpus per node; a key it lacks is not checked); empty when it fits."""
    out = []
    checks = (
        ("time_min", "max_time_min", "minutes"),
        ("mem_mb", "max_mem_mb", "MB of memory"),
        ("ranks", "cpus", "cores"),
    )
    for key, limit, what in checks:
        cap = partition.get(limit)
        if cap is not None and request[key] > cap:
            out.append(f"needs {request[key]} {what}; the partition allows {cap} ({limit})")
    return out


def budget_question(stage_id: str, size: Size, budget_core_s: float) -> dict | None:
    """A gate question when the estimate exceeds the stage's budget (None within it):
    the trade-offs a user can choose, each with what it saves."""
    if size.core_seconds <= budget_core_s:
        return None
    d = max(1, size.dimensions)
    return {
        "stage_id": stage_id,
        "question": (
            f"{stage_id} is estimated at {size.core_seconds:.3g} core-seconds and "
            f"{size.memory_mb:.0f} MB, over its budget of {budget_core_s:.3g} core-seconds. "
            "Run it anyway, or change the design?"
        ),
        "options": {
            "coarser": f"0.8x resolution: about {0.8 ** (d + 1):.2f}x the cost",
            "symmetry": "a mirror symmetry the structure and source share: about 0.5x",
            "smaller_cell": "a smaller cell or thinner PML: proportional to the grid",
            "go_on": "submit as estimated",
        },
        "estimate": size.to_json(),
    }


def from_record(sims: list[dict]) -> dict:
    """Cells, steps and the estimate of a run's run-time record (its simulations), for
    the estimate recorded beside the run's actual use: cell-steps summed over runs."""
    cell_steps = mem_cells = core_s = all_steps = 0.0
    runs = most_dims = 0
    dispersive = False
    for s in sims:
        dims = sum(1 for c in s.get("cell") or [] if c and c > 0)
        most_dims = max(most_dims, dims)
        cells = grid_cells(s.get("cell") or [], s.get("resolution") or 0, s.get("symmetries", []))
        disp = any(
            (g.get("material") or {}).get("dispersive") for g in s.get("geometry", [])
        ) or bool((s.get("default_material") or {}).get("dispersive"))
        dispersive = dispersive or disp
        factor = DISPERSIVE_FACTOR if disp else 1.0
        for r in s.get("runs", []):
            steps = time_steps(r.get("sim_time") or 0.0, s["resolution"])
            n = cells * steps * factor
            cell_steps += n
            all_steps += steps
            runs += 1
            core_s += SECONDS_PER_CELL_STEP[max(1, dims)] * n + SECONDS_PER_STEP * steps
        mem_cells = max(mem_cells, cells * factor)
    return {
        "cell_steps": cell_steps,
        "grid_cells": mem_cells,
        "dispersive": dispersive,
        "memory_mb": BASE_MEMORY_MB + BYTES_PER_CELL * mem_cells / 1e6,
        "core_seconds": SETUP_SECONDS + PER_RUN_SECONDS * max(1, runs) + core_s,
        "steps": all_steps,
        "runs": runs,
        "dims": max(1, most_dims),
    }


def beside_actual(estimated: dict, actual_core_s: float | None, actual_mem_mb: float | None):
    """The estimate beside the actual use, with their ratios (estimate / actual)."""
    out = {
        "estimated": estimated,
        "actual": {"core_seconds": actual_core_s, "memory_mb": actual_mem_mb},
    }
    for key, act in (("core_seconds", actual_core_s), ("memory_mb", actual_mem_mb)):
        out[f"{key}_ratio"] = estimated[key] / act if act else None
    return out
