"""Fault drills: things break, nothing is lost, every error names its file.

1. The whole process tree of a run is SIGKILLed in the middle of a simulation,
   and the Snakemake process alone in the middle of an agent step; rerunning the
   same command (after `--unlock`, which Snakemake asks for) completes with the
   artifacts of an uninterrupted run, no truncated JSON, and no agent call
   repeated for a step that had finished (metrics.jsonl counts every call).
2. A simulation job killed from outside is a failure like any other: kind
   `cancelled`, action `resubmit`, and the checks fail on it.
3. A truncated artifact, an unwritable outputs folder, a full disk, a paper
   folder missing a figure or holding an unreadable CSV: a clear error naming
   the file, and what was already produced is kept.
"""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from reprolab.errors import InputFileError, OutputFileError
from reprolab.fileio import atomic_write_json, read_json
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.submit import submit
from reprolab.paper import Paper
from reprolab.physics import checks
from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE, PAPER, REPO, snakemake, snakemake_cmd

pytestmark = pytest.mark.pipeline

# Test-only hook: a `sitecustomize` that holds one replayed agent call, so the
# drill can kill the run while that agent step is half done.
PAUSE_HOOK = """
import os
_call = os.environ.get("REPROLAB_DRILL_PAUSE_CALL")
if _call:
    import time
    from pathlib import Path
    from agents import providers
    _complete = providers.ReplayProvider.complete
    def complete(self, request, output_model):
        if request.call_id.endswith(_call):
            Path(os.environ["REPROLAB_DRILL_MARKER"]).write_text(request.call_id)
            time.sleep(float(os.environ["REPROLAB_DRILL_PAUSE_S"]))
        return _complete(self, request, output_model)
    providers.ReplayProvider.complete = complete
"""
PAUSED_CALL = "stage1_single_slab/design_reviewer/a2"  # the design step's 4th call
STEP_OUTPUT = {  # agent -> the step output that exists once its step finished
    "prompt_adaptor": "prompt_adaptations.json",
    "planner": "plan.json",
    "plan_reviewer": "plan.json",
    "simulation_designer": "design.json",
    "design_reviewer": "design.json",
    "code_generator": "code.json",
    "code_reviewer": "code.json",
    "execution_validator": "run_validation.json",
    "physics_sanity": "run_validation.json",
    "results_analyzer": "analysis.json",
    "comparison_validator": "analysis.json",
    "supervisor": "verdict.json",
}


def make_workdir(root: Path, paper_dir: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(paper_dir), "recordings": str(EXAMPLE / "recordings")}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def out(workdir: Path) -> Path:
    return workdir / "outputs" / PAPER


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants (from /proc), parents first."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        tree.append(p)
        todo += children.get(p, [])
    return tree


def start(workdir: Path, log: Path, env: dict | None = None) -> subprocess.Popen:
    """The user's command in its own session, so that its whole tree can be killed."""
    with open(log, "w") as fh:
        return subprocess.Popen(
            snakemake_cmd(workdir),
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for(predicate, proc: subprocess.Popen, what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}: {proc.args}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def calls(workdir: Path) -> Counter:
    path = out(workdir) / "metrics.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else []
    return Counter(json.loads(line)["call_id"] for line in lines)


def finished_calls(workdir: Path) -> set[str]:
    """Calls whose agent step had written its output (the step finished)."""
    done = set()
    for call_id in calls(workdir):
        _, stage, agent, _ = call_id.split("/")
        base = out(workdir) if stage == "paper" else out(workdir) / "stages" / stage
        if (base / STEP_OUTPUT[agent]).is_file():
            done.add(call_id)
    return done


def rerun_after_kill(workdir: Path) -> subprocess.CompletedProcess:
    """The same command again; Snakemake refuses while a killed run's lock is left, and
    says to --unlock; after that, the same command goes on."""
    run = snakemake(workdir)
    if run.returncode != 0 and "--unlock" in run.stderr:
        unlock = snakemake(workdir, "--unlock")
        assert unlock.returncode == 0, unlock.stderr[-2000:]
        run = snakemake(workdir)
    return run


@pytest.fixture(scope="module")
def paper_copy(tmp_path_factory) -> Path:
    """The example paper in a folder the drills may break at the end."""
    dest = tmp_path_factory.mktemp("paper") / PAPER
    copy_paper(dest)
    return dest


@pytest.fixture(scope="module")
def baseline(offline_example_run) -> Path:
    """The uninterrupted run (the session's shared one: same config, same paper)."""
    return offline_example_run


@pytest.fixture(scope="module")
def drilled(tmp_path_factory, paper_copy, baseline) -> dict:
    """One run killed twice, then rerun to the end; what the test asserts is returned."""
    wd = make_workdir(tmp_path_factory.mktemp("drilled"), paper_copy)
    hook = tmp_path_factory.mktemp("hook")
    (hook / "sitecustomize.py").write_text(PAUSE_HOOK)
    marker = hook / "paused"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), str(REPO)]),
        "REPROLAB_DRILL_PAUSE_CALL": PAUSED_CALL,
        "REPROLAB_DRILL_MARKER": str(marker),
        "REPROLAB_DRILL_PAUSE_S": "3",
    }
    facts: dict = {"workdir": wd}

    # 1. SIGKILL of the snakemake process alone while an agent step is half done:
    #    the orphaned step finishes on its own (atomic writes), Snakemake never knows.
    proc = start(wd, hook / "run1.log", env)
    wait_for(marker.is_file, proc, f"the paused agent call {PAUSED_CALL}")
    orphans = process_tree(proc.pid)[1:]
    proc.kill()
    proc.wait()
    for pid in orphans:  # let the orphaned step end before the rerun starts
        while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
            time.sleep(0.1)
    facts["agent_kill_finished"] = finished_calls(wd)
    facts["agent_kill_metrics"] = calls(wd)

    # 2. SIGKILL of the whole process tree (a crash) in the middle of a simulation.
    sim_log = out(wd) / "stages/stage2_bragg_mirror/run/stdout.txt"
    assert snakemake(wd, "--unlock").returncode == 0
    proc = start(wd, hook / "run2.log")
    wait_for(sim_log.is_file, proc, "the stage 2 simulation to start")
    time.sleep(0.5)
    tree = process_tree(proc.pid)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()
    facts["sim_kill_tree"] = len(tree)
    facts["sim_kill_result_existed"] = (sim_log.parents[1] / "result.json").exists()
    facts["sim_kill_finished"] = finished_calls(wd)

    # 3. The same command again.
    facts["first_rerun"] = snakemake(wd)
    facts["final"] = rerun_after_kill(wd)
    return facts


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_rerun_after_kills_completes(drilled):
    first = drilled["first_rerun"]
    if first.returncode != 0:  # Snakemake 9 keeps the killed run's lock
        assert "--unlock" in first.stderr, first.stderr[-2000:]
    assert drilled["final"].returncode == 0, drilled["final"].stderr[-3000:]
    assert drilled["sim_kill_tree"] > 3  # snakemake, the step, submitit's worker, the ranks
    assert not drilled["sim_kill_result_existed"]
    assert (out(drilled["workdir"]) / f"REPRODUCTION_REPORT_{PAPER}.md").is_file()


def test_no_truncated_json_anywhere(drilled):
    root = drilled["workdir"] / "outputs"
    seen = 0
    for path in root.rglob("*"):
        if path.suffix == ".json":
            json.loads(path.read_text())  # raises on a truncated file, naming nothing
            seen += 1
        elif path.suffix == ".jsonl":
            for line in path.read_text().splitlines():
                json.loads(line)
    assert seen > 50


def test_no_repeated_agent_call_for_finished_steps(drilled, baseline):
    final = calls(drilled["workdir"])
    assert set(final) == set(calls(baseline))
    # The paused step was finished by its orphan: its calls were made once.
    assert any(c.endswith(PAUSED_CALL) for c in drilled["agent_kill_finished"])
    for call_id in drilled["agent_kill_finished"] | drilled["sim_kill_finished"]:
        assert final[call_id] == 1, (call_id, final[call_id])
    # Only steps that had not finished at a kill may have been called again.
    repeated = {c for c, n in final.items() if n > 1}
    finished = drilled["agent_kill_finished"] | drilled["sim_kill_finished"]
    assert not repeated & finished


def agent_outputs(workdir: Path) -> dict:
    """Every agent artifact's output (provenance carries times), by file."""
    found = {}
    for path in sorted(out(workdir).rglob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "output" in data and "provenance" in data:
            found[str(path.relative_to(workdir))] = data["output"]
    return found


def key_numbers(workdir: Path) -> dict:
    numbers = {}
    for stage_dir in sorted((out(workdir) / "stages").iterdir()):
        verdict = json.loads((stage_dir / "verdict.json").read_text())
        comparison = json.loads((stage_dir / "comparison.json").read_text())
        numbers[stage_dir.name] = {
            "status": verdict["status"],
            "supervisor": verdict["supervisor_verdict"],
            "checks": json.loads((stage_dir / "checks.json").read_text())["verdict"],
            "script": (stage_dir / "simulation.py").read_text(),
            "figures": [
                (f["figure_id"], f["classification"], [c["metrics"] for c in f["curves"]])
                for f in comparison["figures"]
            ],
        }
    return numbers


def test_artifacts_identical_to_an_uninterrupted_run(drilled, baseline):
    wd = drilled["workdir"]
    assert agent_outputs(wd) == agent_outputs(baseline)
    assert _close(key_numbers(wd), key_numbers(baseline))
    plans = [json.loads((out(w) / "plan.json").read_text())["output"] for w in (wd, baseline)]
    assert plans[0] == plans[1]
    materials = [
        json.loads((out(w) / "validated_materials.json").read_text())["materials"]
        for w in (wd, baseline)
    ]
    assert materials[0] == materials[1]


def _close(a, b, rel: float = 1e-9) -> bool:
    """Equal, numbers to a relative tolerance (MPI reductions may differ in the last bit)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, rel) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=rel, abs=1e-12)
    return a == b


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_truncated_design_json_is_named_and_nothing_else_lost(drilled):
    wd = drilled["workdir"]
    stage3 = out(wd) / "stages/stage3_pairs_sweep"
    design = stage3 / "design.json"
    text = design.read_text()
    design.write_text(text[: len(text) // 2])  # what a non-atomic writer leaves after a crash
    before = snapshot(out(wd))
    run = snakemake(wd)
    assert run.returncode != 0
    assert f"{design.relative_to(wd)}: is not valid JSON (line" in run.stderr, run.stderr[-3000:]
    after = snapshot(out(wd))
    # Snakemake removes the outputs of the step it reran (code.json, simulation.py);
    # everything else is as it was, the report and every attempt file included.
    rerun_outputs = {"code.json", "simulation.py"}
    for name, digest in before.items():
        if Path(name).parent.name == "stage3_pairs_sweep" and Path(name).name in rerun_outputs:
            continue
        if name.startswith(("logs/", "stages/stage3_pairs_sweep/logs/")) or name in (
            "events.jsonl",
        ):
            continue
        assert after.get(name) == digest, name
    assert (stage3 / "code.r1.json").is_file() and (stage3 / "design.r1.json").is_file()
    design.write_text(text)  # repaired for the drills below


def test_broken_paper_folder_is_named_before_any_work(drilled, paper_copy):
    wd = drilled["workdir"]
    before = snapshot(out(wd))
    figure = paper_copy / "figures/fig3.png"
    saved = figure.read_bytes()
    figure.unlink()
    try:
        run = snakemake(wd)
        assert run.returncode != 0
        assert "refers to 'figures/fig3.png', which does not exist" in run.stderr, run.stderr
        assert str(paper_copy / "metadata.yaml") in run.stderr
    finally:
        figure.write_bytes(saved)
    csv = paper_copy / "data/fig2_T.csv"
    saved = csv.read_bytes()
    csv.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff binary, not a CSV")
    try:
        run = snakemake(wd)
        assert run.returncode != 0
        assert f"{csv}: is not a UTF-8 text CSV" in run.stderr, run.stderr[-3000:]
        csv.write_bytes(b"x,y\n0.5,0.1\n0.6,oops\n")
        run = snakemake(wd)
        assert f"{csv}: line 3 is not two numbers" in run.stderr, run.stderr[-3000:]
    finally:
        csv.write_bytes(saved)
    assert snapshot(out(wd)) == before  # refused before any step ran


def test_unwritable_outputs_folder_is_named(tmp_path, paper_copy):
    wd = make_workdir(tmp_path / "ro", paper_copy)
    outputs = wd / "outputs"
    (outputs / PAPER).mkdir(parents=True)
    (outputs / PAPER / "kept.txt").write_text("produced earlier")
    try:  # as root, permissions do not stop writes: a read-only bind mount does
        subprocess.run(["mount", "--bind", str(outputs), str(outputs)], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot bind-mount here (needs root): {exc}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(outputs)], check=True)
        run = snakemake(wd, "--until", "adapt_prompts")
    finally:
        subprocess.run(["umount", str(outputs)], check=True)
    assert run.returncode != 0
    said = run.stdout + run.stderr
    # Stopped before any step, by the run's lock on the outputs folder, in one line.
    assert "outputs/.reprolab.lock" in said and "Read-only file system" in said, said[-3000:]
    assert "Traceback" not in said
    assert (outputs / PAPER / "kept.txt").read_text() == "produced earlier"


@pytest.fixture
def tiny_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount a 1 MB tmpfs here (needs root): {exc}")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def test_full_disk_simulation_fails_clearly_and_keeps_the_last_result(tiny_disk):
    """The job writes more than the disk holds (its traceback does not fit either): a
    disk_full failure, not a code failure; the record cannot be written, and the
    previous result.json is kept intact."""
    result = tiny_disk / "result.json"
    atomic_write_json(result, {"exit_code": 0, "note": "the previous run"})
    workdir = tiny_disk / "run"
    workdir.mkdir()
    (workdir / "simulation.py").write_text(
        "with open('spectrum.csv', 'w') as fh:\n"
        "    for i in range(400000):\n"
        "        fh.write(f'{i},{i * 0.5}\\n')\n"
    )
    job = SimulationJob(script=str(workdir / "simulation.py"), workdir=str(workdir), timeout_s=120)
    record = submit(job, "local", tiny_disk.parent / "submitit")
    failure = record["failure"]
    assert failure["kind"] == "disk_full" and failure["action"] == "ask_user", failure
    assert "bytes left in the run directory" in failure["summary"], failure
    with pytest.raises(OutputFileError) as info:
        atomic_write_json(result, {**record, "padding": "x" * 2_000_000})
    assert str(result) in str(info.value) and "No space left on device" in str(info.value)
    assert "previous version is kept" in str(info.value)
    assert json.loads(result.read_text())["note"] == "the previous run"
    assert [p.name for p in tiny_disk.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("ranks", [1, 2])
def test_simulation_killed_from_outside_is_a_failure_like_any_other(tmp_path, ranks):
    """kill -9 of the running script (one MPI rank when there are two)."""
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "simulation.py").write_text(
        "import time\nprint('started', flush=True)\ntime.sleep(120)\n"
    )
    started = workdir / "stdout.txt"

    def kill_a_rank():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if started.is_file() and "started" in started.read_text():
                break
            time.sleep(0.05)
        for stat in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = stat.read_bytes().split(b"\0")
            except OSError:
                continue
            if str(workdir / "simulation.py").encode() in argv and b"mpirun" not in argv[0]:
                os.kill(int(stat.parent.name), signal.SIGKILL)
                return

    killer = threading.Thread(target=kill_a_rank)
    killer.start()
    job = SimulationJob(
        script=str(workdir / "simulation.py"), workdir=str(workdir), mpi_ranks=ranks, timeout_s=120
    )
    record = submit(job, "local", tmp_path / "submitit")
    killer.join()
    failure = record["failure"]
    assert failure["kind"] == "cancelled" and failure["action"] == "resubmit", failure
    assert "killed by SIGKILL from outside the job" in failure["summary"]
    assert record["runtime_seconds"] < 120  # it did not run to its end
    result = checks.run_checks(record, workdir, ["spectrum.csv"], lossless=True)
    assert result["verdict"] == "fail"
    failed = {c["name"] for c in result["checks"] if c["status"] == "fail"}
    assert "exit_code" in failed


def test_truncated_artifacts_read_by_steps_name_the_file(tmp_path):
    """What every step reads goes through read_json/read_model: a cut file is named."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"output": {"paper_id": "x", "stages": [')
    with pytest.raises(InputFileError) as info:
        read_json(plan)
    assert str(plan) in str(info.value) and "is not valid JSON" in str(info.value)
    broken = tmp_path / "paper"
    copy_paper(broken)
    (broken / "data/fig1_n.csv").write_text("x,y\n1.0,1.45\n")
    with pytest.raises(InputFileError, match="fig1_n.csv: needs at least two data rows"):
        Paper(broken)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
