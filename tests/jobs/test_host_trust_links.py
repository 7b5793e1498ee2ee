"""The host follows no link a simulation left, reads within caps, holds no key.

Each attack is staged on a run folder the way a hostile generated script would leave
it (links to /proc/self/environ, to another paper's data, planted folders that are
links, FIFOs, a small HDF5 file declaring a huge array); every test asserts that the
host refuses with a named error and that nothing outside the run folder changed.
"""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest

from agents.simulation_designer import SimulationDesign
from reprolab import run_files, secret_env
from reprolab.errors import RunFileTooLarge, UnsafeRunFile
from reprolab.jobs import bwrap, font_cache, launch, stage_run
from reprolab.jobs.launch import SimulationJob, run_job
from reprolab.jobs.submit import submit
from reprolab.physics import checks
from reprolab.steps import fieldmap
from reprolab.steps.run import archive_run
from tests.support.builders import minimal_design

CANARY = "sk-ant-links-canary-0123456789"
needs_bwrap = pytest.mark.skipif(not bwrap.availability()[0], reason=bwrap.availability()[1])


def sums(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry under `root` (not under `skip`): a file's hash, a link's target."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "link:" + os.readlink(path)
        elif path.is_file():
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[key] = "dir"
    return out


@pytest.fixture
def papers(tmp_path):
    """Two papers' outputs: p2's data and verdict are what a link in p1's run points at."""
    other = tmp_path / "outputs" / "p2" / "stages" / "stage1"
    (other / "run").mkdir(parents=True)
    (other / "run" / "spectrum.csv").write_text("wavelength_um,T\n1.0,0.25\n1.1,0.5\n")
    (other / "verdict.json").write_text('{"classification": "SUCCESS"}')
    run = tmp_path / "outputs" / "p1" / "stages" / "stage1" / "run"
    run.mkdir(parents=True)
    return tmp_path, run, other


def run_record(run: Path, names: list[str]) -> dict:
    return {
        "exit_code": 0,
        "timed_out": False,
        "timeout_s": 60,
        "stdout_tail": "",
        "stderr_tail": "",
        "output_files": launch.collect_outputs(run, "simulation.py"),
    }


def test_logs_and_outputs_that_are_links_are_refused_by_every_reader(papers, monkeypatch):
    root, run, other = papers
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    os.symlink("/proc/self/environ", run / "stdout.txt")
    os.symlink(other / "verdict.json", run / "stderr.txt")
    os.symlink(other / "run" / "spectrum.csv", run / "spectrum.csv")
    os.link(other / "run" / "spectrum.csv", run / "hard.csv")  # unsafe_none: same fs
    os.mkfifo(run / "fifo.csv")
    before = sums(root, skip=run)
    record = run_record(run, ["spectrum.csv"])
    assert record["output_files"] == []  # no link, FIFO or hard link is an output
    stdout, stderr = checks.read_run_log(record, run)
    assert CANARY not in stdout + stderr and "SUCCESS" not in stderr
    assert CANARY not in launch.tail_text(run / "stdout.txt")
    assert "symbolic link" in launch.tail_text(run / "stdout.txt")
    for name, why in (
        ("spectrum.csv", "is a symbolic link (to '"),
        ("hard.csv", "is a hard link (2 names)"),
        ("fifo.csv", "is a FIFO"),
        ("stdout.txt", "/proc/self/environ"),
    ):
        started = time.monotonic()
        with pytest.raises(UnsafeRunFile, match="allowed: a regular file inside the run"):
            checks.read_output_csv(run, name)
        assert time.monotonic() - started < 5  # a FIFO never blocks the reader
        assert why in run_files.refusal(run, name)
    result = checks.run_checks(record, run, ["spectrum.csv", "hard.csv"], lossless=True)
    failed = {c["name"]: c["detail"] for c in result["checks"] if c["status"] == "fail"}
    assert "symbolic link" in failed["unsafe_file:stdout.txt"]
    assert "symbolic link" in failed["unsafe_file:spectrum.csv"]
    assert "hard link" in failed["unsafe_file:hard.csv"]
    assert failed["output_present:spectrum.csv"] == "expected output missing"
    assert CANARY not in json.dumps(result) and "0.25" not in json.dumps(result)
    with pytest.raises(UnsafeRunFile):
        checks.read_output_csv(run, "../../../../p2/stages/stage1/run/spectrum.csv")
    assert sums(root, skip=run) == before


def test_a_folder_link_inside_the_run_folder_is_never_followed(papers):
    root, run, other = papers
    os.symlink(other / "run", run / "sub")
    (run / "points").mkdir()
    os.symlink(other, run / "points" / "p000")
    with pytest.raises(UnsafeRunFile, match="a folder was expected"):
        checks.read_output_csv(run, "sub/spectrum.csv")
    assert run_files.point_folders(run) == []  # p000 is a link: not a point
    assert checks.read_run_log({"stdout_tail": "t", "stderr_tail": ""}, run) == ("t", "")


def test_a_failed_run_is_kept_without_reading_through_its_links(papers, monkeypatch):
    root, run, other = papers
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    (run / "out.csv").write_text("x\n1\n")
    os.symlink("/proc/self/environ", run / "stdout.txt")
    os.mkfifo(run / "pipe")
    kept = run.parent / "failed_runs" / "f1"
    archive_run(run, kept, {"exit_code": 1, "stdout_tail": "", "stderr_tail": ""})
    assert (kept / "stdout.txt").is_symlink()  # kept as a link, never read
    assert not (kept / "pipe").exists() and (kept / "out.csv").read_text() == "x\n1\n"
    assert CANARY not in "".join(p.read_text() for p in kept.iterdir() if p.is_file())


def test_caps_refuse_oversized_csv_json_and_images(tmp_path, monkeypatch):
    monkeypatch.setattr(run_files, "MAX_CSV_ROWS", 10)
    (tmp_path / "rows.csv").write_text("x\n" + "1\n" * 11)
    (tmp_path / "cols.csv").write_text(",".join(["c"] * (run_files.MAX_CSV_COLUMNS + 1)))
    with pytest.raises(RunFileTooLarge, match="over 10 data rows"):
        checks.read_output_csv(tmp_path, "rows.csv")
    with pytest.raises(RunFileTooLarge, match=f"at most {run_files.MAX_CSV_COLUMNS}"):
        checks.read_output_csv(tmp_path, "cols.csv")
    (tmp_path / "big.json").write_bytes(b" " * (run_files.MAX_JSON_BYTES + 1))
    with pytest.raises(RunFileTooLarge, match="bytes"):
        run_files.read_run_json(tmp_path, "big.json")
    from PIL import Image

    Image.new("L", (300, 200)).save(tmp_path / "plot.png")
    assert run_files.image_size(tmp_path, "plot.png") == (300, 200)
    monkeypatch.setattr(run_files, "MAX_IMAGE_PIXELS", 300 * 200 - 1)
    with pytest.raises(RunFileTooLarge, match="300 x 200 pixels"):
        run_files.image_size(tmp_path, "plot.png")
    assert not run_files.is_image(tmp_path, "plot.png")


def field_output(dataset="z"):
    fo = SimpleNamespace(file="field.h5", x_column="x_um", y_column="y_um", dataset=dataset)
    axis = SimpleNamespace(quantity="length", unit="um")
    return fo, SimpleNamespace(x_axis=axis, y_axes=SimpleNamespace(left=axis))


def test_a_small_hdf5_file_declaring_a_billion_elements_is_refused(papers):
    root, run, other = papers
    with h5py.File(run / "field.h5", "w") as h5:
        h5["x_um"], h5["y_um"] = np.linspace(0, 1, 4), np.linspace(0, 1, 3)
        # chunked and compressed, never written: 1e9 elements declared in a few KB
        h5.create_dataset("z", shape=(31623, 31623), chunks=(1024, 1024), compression="gzip")
    assert (run / "field.h5").stat().st_size < 100_000
    fo, fig = field_output()
    with pytest.raises(RunFileTooLarge, match=r"shape \[31623, 31623\].*at most 4000000"):
        fieldmap.read_field_map(run, fo, fig)
    with h5py.File(run / "field.h5", "a") as h5:
        h5["deep"] = np.zeros((1, 1, 1, 1))
    with pytest.raises(RunFileTooLarge, match="rank 3"):
        fieldmap.read_field_map(run, *field_output("deep"))


def test_an_hdf5_link_to_another_papers_file_is_refused(papers):
    root, run, other = papers
    with h5py.File(other / "run" / "field.h5", "w") as h5:
        h5["z"] = np.full((3, 4), 7.0)
    with h5py.File(run / "field.h5", "w") as h5:
        h5["x_um"], h5["y_um"] = np.linspace(0, 1, 4), np.linspace(0, 1, 3)
        h5["z"] = h5py.ExternalLink(str(other / "run" / "field.h5"), "/z")
    with pytest.raises(UnsafeRunFile, match="ExternalLink"):
        fieldmap.read_field_map(run, *field_output())
    os.replace(other / "run" / "field.h5", run / "real.h5")
    (run / "field.h5").unlink()
    os.symlink(run / "real.h5", run / "field.h5")
    with pytest.raises(UnsafeRunFile, match="symbolic link"):
        fieldmap.read_field_map(run, *field_output())


def test_the_font_list_is_never_written_through_a_planted_link(tmp_path):
    victim = tmp_path / "repo"
    victim.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(victim, run / ".cache")
    assert font_cache.seed(run / ".cache" / "matplotlib", sys.executable, root=run) == []
    assert list(victim.iterdir()) == []


def test_a_run_folder_through_a_link_is_never_used(papers):
    root, run, other = papers
    (other / "run" / "simulation.py").write_text("open('planted.txt', 'w').write('x')\n")
    (other / "run" / ".mpi.json").write_text("{}")
    os.symlink(other, run / "points")
    workdir = run / "points" / "run"
    before = sums(other)
    record = run_job(
        SimulationJob(script=str(workdir / "simulation.py"), workdir=str(workdir), sandbox=False)
    )
    assert record["failure"]["kind"] == "sandbox_refused"
    assert "goes through a link" in record["failure"]["summary"]
    assert sums(other) == before


def test_the_submitit_worker_never_holds_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("LLM_CREDENTIAL_B", CANARY)
    script = tmp_path / "simulation.py"
    # No OS sandbox here, so the script can read the worker's (its parent's) environment.
    script.write_text(
        "import os\nopen('parent.txt', 'wb').write("
        "open(f'/proc/{os.getppid()}/environ', 'rb').read())\n"
    )
    job = SimulationJob(
        script=str(script),
        workdir=str(tmp_path),
        sandbox=False,
        isolation="unsafe_none",
        python=sys.executable,
    )
    record = submit(job, "local", tmp_path / "submitit")
    assert record["exit_code"] == 0, record["stderr_tail"]
    seen = (tmp_path / "parent.txt").read_bytes()
    assert b"SUBMITIT" in seen and CANARY.encode() not in seen
    assert os.environ["ANTHROPIC_API_KEY"] == CANARY  # the agents of this process keep it


SCRIPT = """
    import os, sys
    from types import SimpleNamespace
    from reprolab import smk
    smk.drop_secrets(SimpleNamespace(rule=sys.argv[1] if len(sys.argv) > 1 else '{rule}',
                                     config={{"provider": {{"api_key_env": "LLM_PASS"}}}}))
    seen = open('/proc/self/environ', 'rb').read()
    print(os.getpid(), b'{canary}' in seen, os.environ.get('LLM_PASS'))
"""


@pytest.mark.parametrize(("rule", "kept"), [("check_results", False), ("analyze", True)])
def test_a_step_that_calls_no_model_restarts_without_the_key(tmp_path, rule, kept):
    folder = tmp_path / ".snakemake" / "scripts"
    folder.mkdir(parents=True)
    script = folder / f"tmp1234.{rule}.py"
    script.write_text(textwrap.dedent(SCRIPT.format(rule=rule, canary=CANARY)))
    env = {**secret_env.scrubbed(), "ANTHROPIC_API_KEY": CANARY, "LLM_PASS": CANARY}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen(
        [sys.executable, str(script.relative_to(tmp_path))],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    out = proc.communicate(timeout=60)[0].split()
    assert proc.returncode == 0
    assert out[0] == str(proc.pid)  # started again in place, same process
    assert out[1:] == ([str(True), CANARY] if kept else [str(False), "None"])


BASE = {
    "executor": "local",
    "max_concurrent_jobs": 2,
    # only the OS boundary: the static checks and the audit hook would refuse it earlier
    "sandbox": {"static_checks": False, "runtime_guard": False},
}
PLANT = """
import os
os.symlink({victim!r}, '.cache_planted')
os.symlink({victim!r}, 'points')
os.makedirs('sub', exist_ok=True)
os.symlink({victim!r}, 'sub/deep')
os.symlink('/proc/self/environ', 'out.csv')
raise SystemExit(3)
"""
SWEEP = (
    "import json, os\n"
    "n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])\n"
    "open('out.csv', 'w').write(f'n,y\\n{n},{n * n}\\n')\n"
)


@needs_bwrap
def test_a_second_attempt_starts_from_an_empty_run_folder(tmp_path, monkeypatch):
    """Through the sandboxed run path: attempt 1 plants links and fails on purpose,
    attempt 2 (a sweep) must create its points inside the run folder."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    victim = tmp_path / "repo"
    victim.mkdir()
    (victim / "README.md").write_text("repository\n")
    stage = tmp_path / "outputs" / "p1" / "stages" / "stage3_pairs_sweep"
    script = tmp_path / "simulation.py"
    script.write_text(PLANT.format(victim=str(victim)))
    spec = [{"file": "out.csv", "columns": ["n", "y"], "description": "y"}]
    estimate = {"runtime_seconds": 1, "memory_mb": 100, "mpi_ranks": 1}
    one = SimulationDesign.model_validate(
        minimal_design(
            "stage3_pairs_sweep", output_specifications=spec, performance_estimate=estimate
        )
    )
    first = stage_run.run_stage(one, 1, BASE, script, stage)
    assert first["exit_code"] == 3, first["stderr_tail"]
    run = stage / "run"
    assert (run / "points").is_symlink() and (run / "out.csv").is_symlink()  # planted
    assert first["output_files"] == [] and CANARY not in json.dumps(first)
    before = sums(victim)
    sweep = {"parameter": "n", "values": [1, 2]}
    two = SimulationDesign.model_validate(
        minimal_design(
            "stage3_pairs_sweep",
            output_specifications=spec,
            performance_estimate=estimate,
            sweep=sweep,
        )
    )
    script.write_text(SWEEP)
    second = stage_run.run_stage(two, 1, BASE, script, stage)
    assert second["failure"] is None, second
    assert sorted(p.name for p in run.iterdir()) == ["out.csv", "points", "simulation.py"]
    assert not (run / "points").is_symlink() and (run / "points" / "p001").is_dir()
    assert (run / "out.csv").read_text() == "n,y\n1,1\n2,4\n"
    assert sums(victim) == before


WORKER_ATTACK = """
import ctypes, json, os
n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])
if n == 1:
    # the worker's own log becomes a link to a repository file, then the worker dies:
    # the points left run in a new worker in the same folder (libc: past the audit hook)
    libc = ctypes.CDLL(None)
    libc.unlink(b'../.w0/stdout.txt')
    assert libc.symlink({victim!r}.encode(), b'../.w0/stdout.txt') == 0
    os._exit(9)
open('out.csv', 'w').write(f'n,y\\n{{n}},{{n * n}}\\n')
"""


@needs_bwrap
def test_a_packed_worker_started_again_writes_through_no_planted_link(tmp_path):
    victim_dir = tmp_path / "repo"
    victim_dir.mkdir()
    victim = victim_dir / "README.md"
    victim.write_text("repository\n")
    before = sums(victim_dir)
    script = tmp_path / "simulation.py"
    script.write_text(WORKER_ATTACK.format(victim=str(victim), victim_dir=str(victim_dir)))
    spec = [{"file": "out.csv", "columns": ["n", "y"], "description": "y"}]
    design = SimulationDesign.model_validate(
        minimal_design(
            "stage3_pairs_sweep",
            output_specifications=spec,
            performance_estimate={"runtime_seconds": 1, "memory_mb": 100, "mpi_ranks": 1},
            sweep={"parameter": "n", "values": [1, 2]},
        )
    )
    # One packed worker (the runtime guard on): point 2 runs after point 1.
    cfg = {**BASE, "max_concurrent_jobs": 1, "sandbox": {"static_checks": False}}
    record = stage_run.run_stage(design, 1, cfg, script, tmp_path / "stage")
    assert record["sweep"]["failed_points"] == [0], record
    assert record["points"][0]["failure"]["summary"]  # the worker died on it
    assert record["points"][1]["failure"] is None, record["points"][1]
    assert record["points"][1]["label"] and (tmp_path / "stage/run/points/.w0").is_dir()
    assert sums(victim_dir) == before
    assert not (tmp_path / "stage/run/points/.w0/stdout.txt").is_symlink()


def test_the_caps_table_in_the_security_docs_states_the_constants():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    mib = run_files.MiB
    for stated in (
        f"its last {run_files.MAX_LOG_BYTES // mib} MiB",
        f"{run_files.MAX_CSV_BYTES // mib} MiB, {run_files.MAX_CSV_ROWS:,} data rows, "
        f"{run_files.MAX_CSV_COLUMNS} columns",
        f"a JSON record | {run_files.MAX_JSON_BYTES // mib} MiB",
        f"an HDF5 file | {run_files.MAX_HDF5_BYTES // (1024 * mib)} GiB",
        f"at most {run_files.MAX_HDF5_ELEMENTS:,} elements and rank {run_files.MAX_HDF5_RANK}",
        f"{run_files.MAX_IMAGE_BYTES // mib} MiB, {run_files.MAX_IMAGE_PIXELS:,} pixels",
    ):
        assert stated in docs, stated
