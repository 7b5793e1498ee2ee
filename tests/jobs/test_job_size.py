"""Jobs sized from the design and its script before submission: the estimate follows the
cell, resolution, run length, symmetries and the exported resolution scale; its request
reaches the submission; a request over the partition is never submitted; a stage over
its core-hour budget asks first, and only "go on" submits (once), logged as consent."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.errors import GateError
from reprolab.gates import protocol
from reprolab.jobs import job_size, sizing, stage_run, submit
from reprolab.report.cost import job_size_line
from reprolab.steps import job_budget
from reprolab.steps import run as run_step
from tests.support.builders import minimal_design

SCRIPT = """
import os
import meep as mp
RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * 20
CELL = 4 + 2 * 1.0
sim = mp.Simulation(cell_size=mp.Vector3(CELL, CELL), resolution=RES,
                    sources=[mp.Source(mp.GaussianSource(1.0, fwidth=0.5), mp.Ez, mp.Vector3())])
sim.run(until={until})
"""


def design_2d(**fields) -> SimulationDesign:
    return SimulationDesign.model_validate(
        minimal_design(
            dimensions=2,
            resolution=20,
            symmetries=[{"kind": "mirror", "direction": "x"}],
            **fields,
        )
    )


def test_estimate_from_the_design_and_its_script(monkeypatch):
    monkeypatch.delenv("REPROLAB_RESOLUTION_SCALE", raising=False)
    job = job_size.for_stage(design_2d(), SCRIPT.format(until=100), {"max_mpi_ranks": 4})
    assert job.source == "design" and job.bounded
    cells = (6 * 20) ** 2 * 0.5  # the mirror symmetry halves the grid
    assert job.inputs["grid_cells"] == pytest.approx(cells)
    assert job.inputs["run_time"] == pytest.approx(100)
    expect = sizing.estimate([6, 6, 0], 20, 100, symmetries=["mirror"])
    assert job.core_seconds == pytest.approx(expect.core_seconds, rel=1e-3)
    assert job.request == sizing.slurm_request(expect) and job.ranks == 1
    # The convergence rerun's 2x resolution: 4x the grid, 2x the steps.
    monkeypatch.setenv("REPROLAB_RESOLUTION_SCALE", "2")
    fine = job_size.for_stage(design_2d(), SCRIPT.format(until=100), {})
    assert fine.inputs["resolution"] == 40
    assert fine.inputs["grid_cells"] == pytest.approx(4 * cells)
    # until_after_sources: the Gaussian's 10 / fwidth first (design: fwidth 0.5).
    after = SCRIPT.format(until=100).replace("until=", "until_after_sources=")
    assert job_size.for_stage(design_2d(), after, {}).inputs["run_time"] == pytest.approx(120)


def test_ranks_follow_the_grid_within_max_mpi_ranks():
    big = SCRIPT.format(until=10).replace("* 20", "* 200")  # 720 000 cells after the mirror
    assert job_size.for_stage(design_2d(), big, {"max_mpi_ranks": 8}).ranks == 3
    assert job_size.for_stage(design_2d(), big, {"max_mpi_ranks": 2}).ranks == 2


def test_what_the_script_does_not_state_falls_back_to_the_agent_with_a_note():
    unread = SCRIPT.format(until=100).replace("CELL = 4 + 2 * 1.0", "CELL = medium.size()")
    job = job_size.for_stage(design_2d(), unread, {"max_mpi_ranks": 4})
    assert job.source == "agent" and "cell not read" in job.notes[0]
    assert job.memory_mb == 100 and job.core_seconds == 5  # the performance_estimate
    broken = job_size.for_stage(design_2d(), "def (:\n", {})
    assert broken.source == "agent" and "does not parse" in " ".join(broken.notes)


def test_sized_request_is_what_is_asked_and_a_decay_stop_keeps_the_plan_budget():
    design = design_2d()
    job = job_size.for_stage(design, SCRIPT.format(until=100), {}, env={})
    cfg = {"min_memory_mb": 64}
    res, timeout_s, notes = stage_run.sized_resources(job, design, 60, cfg)
    assert timeout_s == job.request["time_min"] * 60 < 3600  # not the plan's hour
    assert res == submit.Resources(1, job.request["mem_mb"], job.request["time_min"] + 1)
    assert "sized from the design" in notes[-1]
    # Never above the plan's budget: 1 min of budget against a 2 min estimate.
    assert stage_run.sized_resources(job, design, 1, cfg)[1] == 60
    # A rerun granted twice the time and memory gets them on the sized figures.
    more = {**cfg, "rerun_time_factor": 2, "rerun_memory_factor": 2}
    res2, timeout2, _ = stage_run.sized_resources(job, design, 60, more)
    assert timeout2 == 2 * timeout_s and res2.mem_mb == 2 * res.mem_mb
    decay = SCRIPT.format(until="mp.stop_when_fields_decayed(50, mp.Ez, mp.Vector3(), 1e-9)")
    guessed = job_size.for_stage(design, decay, {}, env={})
    assert not guessed.bounded and "field-decay stop" in guessed.notes[0]
    _, timeout_s, notes = stage_run.sized_resources(guessed, design, 60, {})
    assert timeout_s == 3600 and any("field decay" in n for n in notes)


def test_a_job_sized_over_the_stage_budget_is_blocked_not_submitted(tmp_path, monkeypatch):
    run = paper_run(tmp_path, 1000)
    slow = SCRIPT.format(until=10**7)  # days of Meep time
    design = design_2d()
    (tmp_path / "simulation.py").write_text(slow)
    why = job_budget.job_budget_gate(run, design, tmp_path / "simulation.py", 60)
    assert why and "does not fit the stage's budget (3600 s)" in why


def test_partition_limits_from_config_and_sinfo_time_format():
    assert job_size.parse_slurm_minutes("1-02:03:00") == 1440 + 123
    assert job_size.parse_slurm_minutes("30:00") == 30
    assert job_size.parse_slurm_minutes("infinite") is None
    cfg = {"slurm": {"max_job_minutes": 60, "max_mem_mb_per_node": 4000, "cpus_per_node": 2}}
    limits = job_size.partition_limits(cfg, None, "local")
    assert (limits["max_time_min"], limits["max_mem_mb"], limits["cpus"]) == (60, 4000, 2)


@pytest.mark.parametrize(
    ("slurm", "named"),
    [
        ({"max_job_minutes": 1}, "needs 2 minutes; the partition allows 1 (max_time_min)"),
        ({"max_mem_mb_per_node": 100}, "MB of memory; the partition allows 100 (max_mem_mb)"),
    ],
)
def test_a_request_over_the_partition_is_never_submitted(tmp_path, monkeypatch, slurm, named):
    script = tmp_path / "simulation.py"
    script.write_text(SCRIPT.format(until=100))
    called = []
    monkeypatch.setattr(submit, "submit_all", lambda *a, **k: called.append(a))
    cfg = {"executor": "local", "slurm": slurm}
    with pytest.raises(job_size.JobTooLarge) as err:
        stage_run.run_stage(design_2d(), 60, cfg, script, tmp_path / "stage")
    line = str(err.value)
    assert named in line and "not submitted" in line and "coarser resolution" in line
    assert "\n" not in line  # one line
    assert called == [] and not (tmp_path / "stage").exists()  # no job, no run folder


def paper_run(tmp_path, budget_core_hours):
    return SimpleNamespace(
        paper_id="p",
        out_dir=tmp_path / "out",
        gate_wait_s=0,
        config={"simulation": {"executor": "local", "stage_budget_core_hours": budget_core_hours}},
    )


def simulate_step(tmp_path, monkeypatch, run):
    """The simulate step on a design over its budget; returns the submissions counted."""
    design = design_2d(stage_id="stage1_x")
    (tmp_path / "design.json").write_text(
        json.dumps({"output": design.model_dump(), "provenance": {}})
    )
    (tmp_path / "simulation.py").write_text(SCRIPT.format(until=100))
    monkeypatch.setattr(run_step, "load_plan", lambda p: None)
    monkeypatch.setattr(
        run_step, "plan_stage", lambda plan, sid: SimpleNamespace(runtime_budget_minutes=60)
    )
    submitted = []

    def fake_run(run, design_art, stage, code_json, script, stage_dir):
        submitted.append(script)
        return {"runtime_seconds": 1.0, "job_id": "1", "failure": None}

    monkeypatch.setattr(run_step, "run_with_repairs", fake_run)
    out = tmp_path / "stage" / "result.json"
    out.parent.mkdir()

    def step():
        run_step.run_simulation(
            run, tmp_path / "code.json", tmp_path / "simulation.py", tmp_path / "design.json",
            tmp_path / "plan.json", out,
        )  # fmt: skip

    return step, submitted, out


def answer(run, option):
    cp = protocol.read_model(
        protocol.gate_request_path(run.out_dir, "stage1_x.job_budget"), protocol.Checkpoint
    )
    decision = {"action": "approve", "option": option, "sha256": cp.sha256, "nonce": cp.nonce}
    decision.update(paper_id="p", gate_id=cp.gate_id)
    protocol.gate_decision_path(run.out_dir, cp.gate_id).write_text(json.dumps(decision))


def test_over_budget_asks_first_and_go_on_submits_once(tmp_path, monkeypatch):
    run = paper_run(tmp_path, 1e-6)  # 0.0036 core-s: every real job is over it
    step, submitted, out = simulate_step(tmp_path, monkeypatch, run)
    with pytest.raises(GateError) as err:
        step()
    text = str(err.value)
    assert "core-hours" in text and "stage_budget_core_hours" in text
    assert "reprolab answer p stage1_x.job_budget OPTION" in text and "go_on" in text
    assert submitted == [] and not out.exists()
    answer(run, "go_on")
    step()
    assert len(submitted) == 1
    log = [
        json.loads(x) for x in (run.out_dir / "user_interactions.jsonl").read_text().splitlines()
    ]
    assert log[-1]["interaction_type"] == "job_budget"
    assert log[-1]["user_response"]["option"] == "go_on"


def test_a_cheaper_choice_blocks_the_stage_instead_of_submitting(tmp_path, monkeypatch):
    run = paper_run(tmp_path, 1e-6)
    step, submitted, out = simulate_step(tmp_path, monkeypatch, run)
    with pytest.raises(GateError):
        step()
    answer(run, "coarser")
    step()
    assert submitted == []
    blocked = json.loads(out.read_text())["blocked"]
    assert "chose coarser" in blocked["reason"] and "reprolab invalidate" in blocked["reason"]


def test_within_budget_submits_without_asking(tmp_path, monkeypatch):
    run = paper_run(tmp_path, 1000)
    step, submitted, _ = simulate_step(tmp_path, monkeypatch, run)
    step()
    assert len(submitted) == 1 and not (run.out_dir / "gates").exists()
    with pytest.raises(ValueError, match="stage_budget_core_hours"):
        job_budget.budget_core_hours({"simulation": {"stage_budget_core_hours": 0}})


def test_the_stage_record_keeps_the_estimate_beside_the_actual_use(tmp_path, monkeypatch):
    script = tmp_path / "simulation.py"
    script.write_text(SCRIPT.format(until=100))
    fake = {"runtime_seconds": 2.0, "job_id": "9", "failure": None}
    fake.update(time_limit={"cpu_s": 3.0}, sandbox={"peak_resident_mb": 120.0})
    monkeypatch.setattr(stage_run.submit, "submit_all", lambda *a, **k: [dict(fake)])
    monkeypatch.setattr(stage_run.sandbox, "static_problems", lambda code: [])
    record = stage_run.run_stage(design_2d(), 60, {"executor": "local"}, script, tmp_path / "s")
    size = record["job_size"]
    assert size["source"] == "design" and size["actual"] == {"core_seconds": 3.0, "memory_mb": 120}
    assert size["core_seconds_ratio"] == pytest.approx(size["core_seconds"] / 3.0)
    # Slurm's limit: a minute above the run's own, which is the sized one.
    assert size["request"]["time_min"] == size["request"]["sized"]["time_min"] + 1
    line = job_size_line(size)
    assert "core-s est." in line and "/ 3 actual" in line and "sized from the design" in line


def test_runs_in_a_loop_count_once_per_k_point_and_a_script_without_meep_is_its_import():
    loop = SCRIPT.format(until=100).replace(
        "sim.run(until=100)", "for k in KS:\n    sim.k_point = k\n    sim.run(until=100)"
    )
    bloch = [{"axis": "x", "kind": "bloch"}, {"axis": "y", "kind": "bloch"}]
    design = design_2d(boundaries=bloch, k_points=[[k / 10, 0, 0] for k in range(5)])
    job = job_size.for_stage(design, loop, {}, env={})
    assert job.inputs["runs"] == 5 and job.inputs["run_time"] == pytest.approx(500)
    plain = job_size.for_stage(design_2d(), "import meep as mp\nprint(mp.Medium(index=2))\n", {})
    assert plain.source == "design" and plain.memory_mb == sizing.BASE_MEMORY_MB
    assert plain.core_seconds == sizing.SETUP_SECONDS and "no mp.Simulation" in plain.notes[0]


def test_the_report_shows_estimated_against_actual_per_stage(tmp_path):
    from reprolab.report.markdown import cost_section

    size = job_size.for_stage(design_2d(), SCRIPT.format(until=100), {}, env={})
    record = {"runtime_seconds": 2.0, "job_size": job_size.beside_actual(size, {})}
    record["job_size"]["actual"] = {"core_seconds": 2.0, "memory_mb": 100.0}
    record["job_size"]["core_seconds_ratio"] = size.core_seconds / 2.0
    lines = [x for x in cost_section(tmp_path, {"stage1_x": record}) if "job size" in x]
    assert len(lines) == 1 and "stage1_x" in lines[0] and "/ 2 actual" in lines[0]
    assert cost_section(tmp_path, {"stage1_x": {"runtime_seconds": 1.0}})  # older records
    assert not [x for x in cost_section(tmp_path, {"s": {"runtime_seconds": 1}}) if "job size" in x]


def test_each_rank_reports_its_use_and_a_planted_link_is_not_written_through(tmp_path):
    script = tmp_path / "simulation.py"
    script.write_text(
        "import os\n"
        "open('victim.txt', 'w').write('kept')\n"
        "os.symlink('victim.txt', '.usage.0.json')  # our report must not go through it\n"
        "sum(i * i for i in range(3_000_000))\n"
        "open('out.csv', 'w').write('x\\n1\\n')\n"
    )
    design = SimulationDesign.model_validate(minimal_design("stage1_x"))
    record = stage_run.run_stage(design, 5, {"executor": "local"}, script, tmp_path / "s")
    assert record["failure"] is None, record["failure"]
    run_dir = tmp_path / "s" / "run"
    assert (run_dir / "victim.txt").read_text() == "kept"
    assert not (run_dir / ".usage.0.json").is_symlink()
    (usage,) = record["rank_usage"]
    assert usage["rank"] == 0 and usage["cpu_s"] > 0.05 and usage["peak_mb"] > 5
    actual = record["job_size"]["actual"]
    assert actual == {"core_seconds": usage["cpu_s"], "memory_mb": usage["peak_mb"]}


def test_a_decay_stop_built_in_a_helper_function_is_read_through_it():
    helper = SCRIPT.replace(
        "sim.run(",
        "def stop():\n    return mp.stop_when_fields_decayed(10, mp.Ez, mp.Vector3(), 1e-6)\n"
        "sim.run(",
    ).format(until="stop()")
    job = job_size.for_stage(design_2d(), helper, {}, env={})
    assert job.source == "design" and not job.bounded, job.notes
    assert "field-decay stop" in job.notes[0]
    opaque = SCRIPT.format(until="stop_somehow()")  # no such helper: still not read
    assert job_size.for_stage(design_2d(), opaque, {}, env={}).source == "agent"


def test_a_cell_assigned_in_branches_is_sized_by_the_larger():
    two_cells = SCRIPT.replace(
        "CELL = 4 + 2 * 1.0\n",
        "CELL = 4 + 2 * 1.0\nif True:\n    cell = mp.Vector3(CELL, 2)\nelse:\n"
        "    cell, other = mp.Vector3(CELL, CELL), []\n",
    ).replace("cell_size=mp.Vector3(CELL, CELL)", "cell_size=cell")
    job = job_size.for_stage(design_2d(), two_cells.format(until=100), {}, env={})
    assert job.source == "design" and job.inputs["cell"] == [6.0, 6.0, 0.0], job.notes


def test_complex_fields_double_the_grid_work():
    real = sizing.estimate([6, 6], 20, 100)
    cplx = sizing.estimate([6, 6], 20, 100, complex_fields=True)
    fixed = sizing.estimate([6, 6], 20, 100, runs=1)
    grid_work = sizing.SECONDS_PER_CELL_STEP[2] * real.cells * real.steps
    assert cplx.core_seconds - real.core_seconds == pytest.approx(grid_work, rel=1e-9)
    assert fixed.core_seconds == real.core_seconds
    when = job_size._complex_fields  # Bloch away from Γ, cylindrical m != 0, forced
    assert when(SimpleNamespace(k_points=[[0, 0, 0], [0.5, 0, 0]], m=[]), {})
    assert not when(SimpleNamespace(k_points=[[0, 0, 0]], m=[]), {})
    assert when(SimpleNamespace(k_points=[], m=[5]), {"cylindrical": True})
    assert not when(SimpleNamespace(k_points=[], m=[0]), {"cylindrical": True})
    assert when(SimpleNamespace(k_points=[], m=[]), {"force_complex": True})


QUARTER_WAVE = """
import numpy as np
import meep as mp
from meep.materials import fused_quartz

N_L = float(np.sqrt(np.real(fused_quartz.epsilon(1 / 0.65)[0, 0])))
D_L = 0.65 / (4 * N_L)
CELL = 2 * 1.0 + 4 * 1.0 + 6 * D_L
sim = mp.Simulation(cell_size=mp.Vector3(0, 0, CELL), resolution=400, dimensions=1,
                    sources=[mp.Source(mp.GaussianSource(1.6, fwidth=1.0), mp.Ex, mp.Vector3())])
sim.run(until=20)
"""


def test_a_layer_sized_by_a_library_mediums_index_is_sized_from_the_script():
    """A quarter-wave layer of fused silica, its index from meep.materials (the Bragg
    mirror's way): the cell is read with Meep's own epsilon of that medium (n = 1.4565
    at 0.65 um), not left to the agent's guess; a medium the library lacks keeps the
    agent's estimate, with the note saying the cell was not read."""
    design = SimulationDesign.model_validate(minimal_design(dimensions=1, resolution=400))
    job = job_size.for_stage(design, QUARTER_WAVE, {})
    n_l = 1.4565
    assert job.source == "design"
    assert job.inputs["cell"][2] == pytest.approx(6 + 6 * 0.65 / (4 * n_l), rel=1e-3)
    unknown = QUARTER_WAVE.replace("fused_quartz", "no_such_medium")
    agent = job_size.for_stage(design, unknown, {})
    assert agent.source == "agent" and "cell" in agent.notes[0]


def test_a_step_function_given_to_the_run_costs_every_step():
    """Harminv (any Python step function) is a call at every time step: a run given one
    is sized that much dearer than the same run without it (the disk resonator's and the
    band diagram's Harminv runs were sized 0.56x and 0.70x their use without it)."""
    plain = job_size.for_stage(design_2d(), SCRIPT.format(until=50), {})
    harminv = SCRIPT.format(until=50).replace(
        "sim.run(until=50)",
        "sim.run(mp.after_sources(mp.Harminv(mp.Ez, mp.Vector3(), 1, 1)), until=50)",
    )
    with_one = job_size.for_stage(design_2d(), harminv, {})
    assert plain.inputs["step_functions"] == 0 and with_one.inputs["step_functions"] == 1
    steps = with_one.inputs["time_steps"]
    extra = with_one.core_seconds - plain.core_seconds
    assert extra == pytest.approx(sizing.SECONDS_PER_STEP_FUNCTION * steps)
