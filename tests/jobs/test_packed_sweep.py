"""Packed sweeps (reprolab.jobs.packed): a sweep's points run in one worker per core,
each worker one sandboxed process that runs its points one after another.

Attacked: the results must be byte-identical to one job per point (today's way,
forced here by making the points unpackable); a point that raises, one that
exceeds its time limit and one that takes its worker down must each be recorded
as that point's failure while every other point of the same worker succeeds;
each point keeps its own records (stdout, MPI record, as-built record)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import packed, stage_run

REPO = Path(__file__).resolve().parents[2]
AS_BUILT = importlib.util.find_spec("reprolab.physics.as_built") is not None
if AS_BUILT:
    from reprolab.physics.record_store import record_path
STAGE3 = REPO / "examples/papers/silica_bragg_2026/recordings/stage3_pairs_sweep"


def sweep_design(values, output="pairs_sweep.csv"):
    art = yaml.safe_load((STAGE3 / "simulation_designer.a1.yaml").read_text())["output"]
    art["sweep"] = {"parameter": "num_pairs", "values": values}
    art["output_specifications"] = [
        s for s in art["output_specifications"] if s["file"] == output
    ] or [{"file": output, "columns": ["n", "y"], "description": "y"}]
    return SimulationDesign.model_validate(art)


def run(tmp_path, name, design, code, budget_min=2, **cfg):
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    sim_cfg = {"executor": "local", "max_concurrent_jobs": 2, **cfg}
    return stage_run.run_stage(design, budget_min, sim_cfg, script, tmp_path / name)


@pytest.fixture(scope="module")
def meep_runs(tmp_path_factory):
    """The example's sweep code over 4 points, packed (2 workers) and one job a point."""
    tmp = tmp_path_factory.mktemp("packed")
    code = yaml.safe_load((STAGE3 / "code_generator.a1.yaml").read_text())["output"]["code"]
    design = sweep_design([1, 2, 3, 4])
    packed_rec = run(tmp, "packed", design, code)
    mp = pytest.MonkeyPatch()
    mp.setattr(packed, "packable", lambda jobs: False)
    try:
        single_rec = run(tmp, "single", design, code)
    finally:
        mp.undo()
    return tmp, packed_rec, single_rec


def test_packed_results_identical_to_one_job_per_point(meep_runs):
    tmp, packed_rec, single_rec = meep_runs
    assert packed_rec["failure"] is None and single_rec["failure"] is None
    assert all(p["sandbox"]["packed_worker"] for p in _points(tmp / "packed"))
    assert not any((p.get("sandbox") or {}).get("packed_worker") for p in _points(tmp / "single"))
    got = (tmp / "packed/run/pairs_sweep.csv").read_bytes()
    assert got == (tmp / "single/run/pairs_sweep.csv").read_bytes()
    assert len(got.decode().splitlines()) == 5  # header and one row per point
    for i in range(4):  # and every point's own file, byte for byte
        name = f"run/points/p{i:03d}/pairs_sweep.csv"
        assert (tmp / "packed" / name).read_bytes() == (tmp / "single" / name).read_bytes()


def test_each_point_keeps_its_own_records(meep_runs):
    tmp, packed_rec, _ = meep_runs
    workers = {p["sandbox"]["worker"] for p in _points(tmp / "packed")}
    assert workers == {0, 1}  # two workers, one per core given
    for i, point in enumerate(_points(tmp / "packed")):
        folder = tmp / f"packed/run/points/p{i:03d}"
        assert point["exit_code"] == 0 and point["mpi"]["size"] == 1
        out = (folder / "stdout.txt").read_text()  # Python's and Meep's (C++) own lines
        assert f"stage3: N={i + 1} " in out and "Initializing structure" in out
        assert out.count("stage3: N=") == 1
        if AS_BUILT:  # streamed by the point's run to the worker's launcher
            built = json.loads(record_path(folder).read_text())
            assert built["simulations"], f"point {i}: no as-built record"
            assert built["simulations"][-1]["measured"], f"point {i}: nothing measured"
            assert not (folder / "as_built.json").exists()
    starts = [p["started_at"] for p in packed_rec["points"]]
    assert len(set(starts)) == 4  # each point timed on its own


FAILING = (
    "import json, os, sys, time\n"
    "n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])\n"
    "print('point', n)\n"
    "if n == 2:\n"
    "    raise RuntimeError('point failed on purpose')\n"
    "if n == 3:\n"
    "    time.sleep(30)\n"
    "if n == 4:\n"
    "    import ctypes; ctypes.string_at(0)  # a segfault: the worker dies\n"
    "if n == 5:\n"
    "    sys.exit(3)\n"
    "open('out.csv', 'w').write(f'n,y\\n{n},{n * n}\\n')\n"
)


def test_a_failing_point_never_takes_its_worker_s_other_points(tmp_path, monkeypatch):
    monkeypatch.setattr(stage_run, "MIN_POINT_SECONDS", 2)  # point 3's limit, quickly
    design = sweep_design([1, 2, 3, 4, 5, 6, 7], output="out.csv")
    # One worker: every failure happens in the process that must run the rest.
    # Static checks off: they would refuse ctypes before anything ran.
    cfg = {"max_concurrent_jobs": 1, "job_cores": 1, "sandbox": {"static_checks": False}}
    rec = run(tmp_path, "fail", design, FAILING, budget_min=0.1, **cfg)
    by_value = {p["value"]: p for p in rec["points"]}
    assert by_value[2]["failure"]["kind"] == "python_exception"
    assert by_value[3]["failure"]["kind"] == "timeout"
    assert by_value[4]["failure"] is not None and by_value[4]["exit_code"] != 0
    assert by_value[5]["exit_code"] == 3 and by_value[5]["failure"]
    for n in (1, 6, 7):
        assert by_value[n]["failure"] is None, by_value[n]
        # each point's own use, measured by its worker, reaches the stage record
        used = by_value[n]["rank_usage"][0]
        assert used["cpu_s"] >= 0 and used["peak_mb"] > 0, used
        assert (tmp_path / f"fail/run/points/p{n - 1:03d}/out.csv").read_text().startswith("n,y")
    assert rec["job_size"]["actual"]["memory_mb"] and rec["job_size"]["actual"]["core_seconds"]
    assert rec["sweep"]["failed_points"] == [1, 2, 3, 4]
    # Each point's output went to its own stdout only.
    for n in (1, 6, 7):
        out = (tmp_path / f"fail/run/points/p{n - 1:03d}/stdout.txt").read_text()
        assert out.strip() == f"point {n}"


FILLING = (
    "import json, os, time\n"
    "n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])\n"
    "if n == 1:\n"
    "    for i in range(200):  # 200 MB in files of 1 MB, each under the file-size limit\n"
    "        open(f'fill{i}.bin', 'wb').write(os.urandom(1 << 20))\n"
    "        time.sleep(0.01)\n"
    "open('out.csv', 'w').write(f'n,y\\n{n},{n * n}\\n')\n"
)


def test_a_point_filling_its_own_folder_is_stopped_by_the_disk_cap(tmp_path):
    # The worker's cap covers its points' folders, not only its own (the run folder's disk quota).
    design = sweep_design([1, 2], output="out.csv")
    cfg = {"max_concurrent_jobs": 1, "job_cores": 1}
    cfg["sandbox"] = {"static_checks": False, "run_folder_mb": 20}  # 40 MB for 2 points
    rec = run(tmp_path, "fill", design, FILLING, **cfg)
    filler = rec["points"][0]
    assert filler["failure"]["kind"] == "disk_quota", filler["failure"]
    used = sum(f.stat().st_size for f in (tmp_path / "fill/run/points/p000").glob("fill*"))
    assert used < 120 * 2**20, used


def _points(stage: Path) -> list[dict]:
    return [
        json.loads(p.read_text()) for p in sorted((stage / "run/points").glob("p*/.point.json"))
    ]


def test_points_are_dealt_in_snake_order_so_a_cost_growing_with_the_value_is_shared():
    assert packed.plan_workers(list(range(8)), 2) == [[0, 3, 4, 7], [1, 2, 5, 6]]
    assert packed.plan_workers(list(range(3)), 8) == [[0], [1], [2]]
    dealt = packed.plan_workers(list(range(7)), 3)
    assert sorted(i for w in dealt for i in w) == list(range(7))  # each point once
    # The example's sweep: a point's cost grows with the number of pairs.
    cost = [1.22, 1.24, 1.36, 1.69, 1.94, 2.38, 2.87, 3.32]  # s, warm, N = 1..8
    busiest = max(sum(cost[i] for i in w) for w in packed.plan_workers(list(range(8)), 2))
    assert busiest < 8.2 < sum(cost[1::2])  # round-robin's busier worker had 8.63 s
    assert sys.executable  # the workers run this interpreter


def test_slurm_workers_follow_the_estimate_and_the_limits():
    from reprolab.jobs.submit import ClusterSettings

    def count(points, est, slots, timeout_s=150, max_job_min=0):
        settings = ClusterSettings(executor="slurm", max_concurrent=slots, max_job_min=max_job_min)
        return packed.worker_count(points, est, timeout_s, settings)

    assert count(8, 5, 2) == 2  # the array throttle
    assert count(8, 5, 8) == 4  # 40 s of work: 10 s a worker at least
    assert count(8, 0.5, 8) == 1  # not worth a second worker's start-up
    assert count(8, 100, 8) == 8 and count(3, 100, 8) == 3  # never more than the points
    # A worker runs its points one after another: 4 x 150 s is 11 min, over a 6 min
    # MaxTime; 4 workers of 2 points ask for 6 min each.
    assert count(8, 5, 2, max_job_min=6) == 4
    assert count(8, 5, 2, timeout_s=600, max_job_min=6) == 8  # one point a task at most
