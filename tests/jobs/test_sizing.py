"""Job sizing from the simulation: grid cells and steps follow the cell, resolution, run
length and symmetries; ranks only where each holds enough grid; Slurm's request has its
margin; a job that cannot fit its partition is refused with the reason; an estimate over
the budget asks the user."""

from __future__ import annotations

import pytest

from reprolab.jobs import sizing


def test_cells_and_steps_follow_the_design():
    assert sizing.grid_cells([3, 3, 3], 10) == pytest.approx(27_000)
    assert sizing.grid_cells([3, 3, 0], 10) == pytest.approx(900)  # 2D: no z extent
    mirrored = sizing.grid_cells([3, 3, 3], 10, [{"kind": "mirror"}, {"kind": "Mirror"}])
    assert mirrored == pytest.approx(27_000 / 4)
    assert sizing.grid_cells([3, 3, 3], 10, ["rotate4"]) == pytest.approx(27_000 / 4)
    assert sizing.time_steps(100, 20) == pytest.approx(100 * 20 / sizing.COURANT)


def test_cost_scales_with_resolution_to_the_power_d_plus_1():
    a = sizing.estimate([4, 4, 4], 10, 50)
    b = sizing.estimate([4, 4, 4], 20, 50)

    def compute(s):  # the grid's share: what is left after set-up, runs and steps
        fixed = sizing.SETUP_SECONDS + sizing.PER_RUN_SECONDS
        return s.core_seconds - fixed - sizing.SECONDS_PER_STEP * s.steps

    assert compute(b) / compute(a) == pytest.approx(16)
    d = sizing.estimate([4, 4, 4], 10, 50, dispersive=True)
    assert compute(d) / compute(a) == pytest.approx(sizing.DISPERSIVE_FACTOR)
    assert d.memory_mb > a.memory_mb


def test_ranks_only_where_each_holds_enough_grid():
    small = sizing.estimate([2, 2, 0], 20, 10, max_ranks=8)
    assert small.ranks == 1
    big = sizing.estimate([10, 10, 10], 30, 10, max_ranks=4)  # 27e6 cells
    assert big.ranks == 4 and "capped at 4" in big.notes[0]
    assert sizing.choose_ranks(3 * sizing.MIN_CELLS_PER_RANK, 8)[0] == 3


def test_slurm_request_has_the_margin():
    size = sizing.estimate([10, 10, 10], 30, 100, max_ranks=2)
    req = sizing.slurm_request(size)
    assert req["mem_mb"] >= size.memory_mb * sizing.MARGIN
    assert req["time_min"] * 60 >= size.core_seconds / size.ranks * sizing.MARGIN
    tiny = sizing.slurm_request(sizing.estimate([1, 0, 0], 10, 1))
    assert tiny["time_min"] == sizing.MIN_TIME_MIN


def test_a_job_that_cannot_fit_its_partition_is_refused():
    req = {"time_min": 600, "mem_mb": 20_000, "ranks": 4}
    problems = sizing.partition_problems(req, {"max_time_min": 60, "max_mem_mb": 16_000, "cpus": 2})
    assert len(problems) == 3
    assert "needs 600 minutes; the partition allows 60 (max_time_min)" in problems[0]
    assert sizing.partition_problems(req, {"max_time_min": 1440, "max_mem_mb": 64_000}) == []


def test_over_budget_asks_with_the_trade_offs():
    size = sizing.estimate([6, 6, 6], 40, 200)
    assert sizing.budget_question("s1", size, size.core_seconds * 2) is None
    q = sizing.budget_question("s1", size, size.core_seconds / 10)
    assert q["stage_id"] == "s1" and "over its budget" in q["question"]
    assert set(q["options"]) == {"coarser", "symmetry", "smaller_cell", "go_on"}
    assert "0.41x" in q["options"]["coarser"]  # 0.8^4 in 3D


def test_invalid_design_is_refused():
    with pytest.raises(ValueError, match="resolution > 0"):
        sizing.estimate([1, 1, 1], 0, 10)


def test_from_record_sums_the_runs():
    sims = [
        {
            "cell": [2.0, 2.0, 0.0],
            "resolution": 10.0,
            "symmetries": [],
            "geometry": [{"material": {"dispersive": True}}],
            "runs": [{"sim_time": 50.0}, {"sim_time": 25.0}],
        }
    ]
    est = sizing.from_record(sims)
    assert est["grid_cells"] == pytest.approx(400 * sizing.DISPERSIVE_FACTOR)
    steps = 75 * 10 / sizing.COURANT
    assert est["cell_steps"] == pytest.approx(400 * steps * sizing.DISPERSIVE_FACTOR)
    both = sizing.beside_actual(est, est["core_seconds"] * 2, None)
    assert both["core_seconds_ratio"] == pytest.approx(0.5) and both["memory_mb_ratio"] is None


def test_each_run_costs_its_set_up():
    assert sizing.PER_RUN_SECONDS > 0  # calibrated: a band diagram's k-points cost it
    one = sizing.estimate([1, 1, 0], 32, 100, runs=1)
    many = sizing.estimate([1, 1, 0], 32, 100, runs=13)
    assert many.core_seconds - one.core_seconds == pytest.approx(12 * sizing.PER_RUN_SECONDS)
