"""`reprolab doctor`: every check passes where the site is right and says FIX, with
the fix, where it is not; a failure a run cannot live with makes the exit status 1.

Run as root here; tests/cli/test_install.py runs it as an unprivileged user (all ok
on the one-node Slurm cluster, and an outputs folder that user cannot write).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reprolab.cli import doctor

REPROLAB = str(Path(sys.executable).with_name("reprolab"))
CANARY = "sk-ant-doctor-canary-0123456789"


def run_doctor(tmp_path: Path, config: dict, *args: str, env: dict | None = None):
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [REPROLAB, "doctor", "--configfile", "site.yaml", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    return proc


def line(out: str, name: str) -> str:
    match = re.search(rf"^(ok   |FIX  |note ) {re.escape(name)}: .*(\n      fix: .*)?", out, re.M)
    assert match, f"no '{name}' line in:\n{out}"
    return match.group(0)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """An interpreter without Meep, mpi4py or h5py."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin/python")


def test_a_good_local_site_passes_every_check(tmp_path):
    proc = run_doctor(tmp_path, {"outputs_dir": "out"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("meep", "mpi launcher", "sandbox", "outputs", "slurm", "api key"):
        assert line(proc.stdout, name).startswith("ok"), proc.stdout
    assert "MPI build" in line(proc.stdout, "meep")
    assert (tmp_path / "out").is_dir() and not list((tmp_path / "out").iterdir())


def test_no_meep_in_the_jobs_interpreter(tmp_path, bare_python):
    proc = run_doctor(tmp_path, {}, "--python", bare_python)
    assert proc.returncode == 1
    meep = line(proc.stdout, "meep")
    assert meep.startswith("FIX") and f"{bare_python} cannot import meep" in meep
    assert "conda env create -f envs/reprolab.yaml" in meep
    assert "to fix before a run: meep" in proc.stdout


def test_a_serial_meep_with_mpi_ranks(tmp_path):
    # A serial build, as conda-forge's nompi variant reports itself.
    fake = tmp_path / "serial"
    (fake / "meep").mkdir(parents=True)
    (fake / "meep/__init__.py").write_text(
        "__version__ = '1.25.0'\ndef with_mpi():\n    return 0\n"
    )
    env = {"PYTHONPATH": str(fake)}
    proc = run_doctor(tmp_path, {"simulation": {"max_mpi_ranks": 2}}, env=env)
    assert proc.returncode == 1
    assert "is a serial build; simulation.max_mpi_ranks is 2" in line(proc.stdout, "meep")
    one_rank = run_doctor(tmp_path, {"simulation": {"max_mpi_ranks": 1}}, env=env)
    assert line(one_rank.stdout, "meep").startswith("ok    meep: Meep 1.25.0")


def test_no_mpi_launcher():
    check = doctor.check_launcher("mpirun-of-nowhere -np {ranks}", ranks=2)
    assert not check.ok and check.needed
    assert "'mpirun-of-nowhere' of simulation.mpi_launcher" in check.detail
    assert not doctor.check_launcher("mpirun-of-nowhere -np {ranks}", ranks=1).needed


def path_without(tmp_path: Path, name: str) -> str:
    """A PATH with every command of /usr/bin but one."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for exe in Path("/usr/bin").iterdir():
        if exe.name != name:
            (bindir / exe.name).symlink_to(exe)
    return str(bindir)


def test_no_bwrap_on_path(tmp_path, monkeypatch):
    proc = run_doctor(tmp_path, {}, env={"PATH": path_without(tmp_path, "bwrap")})
    assert proc.returncode == 1, proc.stdout
    sandbox = line(proc.stdout, "sandbox")
    assert sandbox.startswith("FIX") and "no bwrap on PATH" in sandbox
    assert "apt-get install bubblewrap" in sandbox
    assert "to fix before a run: sandbox" in proc.stdout
    # Knowingly without the sandbox (isolation: unsafe_none): said, but not in the way.
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    unsafe = doctor.check_sandbox(needed=False)
    assert not unsafe.ok and not unsafe.needed and unsafe.line().startswith("note")


@pytest.mark.parametrize(
    ("knob", "fix", "root_too"),
    [
        ("kernel/unprivileged_userns_clone", "sysctl -w kernel.unprivileged_userns_clone=1", False),
        ("user/max_user_namespaces", "sysctl -w user.max_user_namespaces=15000", True),
    ],
)
def test_user_namespaces_switched_off(tmp_path, knob, fix, root_too):
    (tmp_path / knob).parent.mkdir(parents=True)
    (tmp_path / knob).write_text("0\n")
    check = doctor.check_sandbox(proc_sys=tmp_path, uid=1000)
    assert not check.ok and f"{tmp_path / knob} is 0" in check.detail and fix in check.fix
    # Root may still create namespaces when only unprivileged users are kept out.
    assert doctor.check_sandbox(proc_sys=tmp_path, uid=0).ok is not root_too
    (tmp_path / knob).write_text("15000\n" if root_too else "1\n")
    assert doctor.check_sandbox(proc_sys=tmp_path, uid=1000).ok  # the real bwrap then starts


def test_outputs_not_writable(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    (check,) = doctor.check_outputs(tmp_path / "a-file/outputs")
    assert not check.ok and check.needed and "a-file/outputs is not writable" in check.detail
    assert "set outputs_dir in the config" in check.fix


def test_group_access_note_follows_the_umask(tmp_path):
    checks = doctor.check_outputs(tmp_path / "o")
    old = os.umask(0o002)
    try:
        shared = doctor.check_outputs(tmp_path / "o")
    finally:
        os.umask(old)
    assert [c.name for c in shared] == ["outputs"]  # umask 002: nothing to say
    if old & 0o070:
        note = checks[1]
        assert not note.ok and not note.needed and "umask 002" in note.fix


def test_api_key_checked_never_printed(tmp_path, monkeypatch):
    anthropic = {"provider": {"kind": "anthropic"}}
    missing = run_doctor(tmp_path, anthropic, env={"ANTHROPIC_API_KEY": ""})
    assert missing.returncode == 1
    key = line(missing.stdout, "api key")
    assert "reads its key from ANTHROPIC_API_KEY, which is not set" in key
    assert "export ANTHROPIC_API_KEY=" in key
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    present = doctor.check_api_key(anthropic["provider"])
    assert present.ok and present.line().startswith("ok    api key: ANTHROPIC_API_KEY is set")
    assert CANARY[-8:] not in present.line()
    # A site-hosted model may need no key: said, not a failure.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = doctor.check_api_key({"kind": "openai_compatible"})
    assert not local.ok and not local.needed


@pytest.mark.slurm
def test_slurm_checks_on_the_one_node_cluster(tmp_path, slurm_cluster):  # noqa: F811
    good = run_doctor(tmp_path, {"outputs_dir": "out"}, "--slurm", "--wait-s", "120")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "srun is" in line(good.stdout, "mpi launcher")
    assert line(good.stdout, "slurm request").startswith("ok")
    shared = line(good.stdout, "shared files")
    assert shared.startswith("ok") and "read back here" in shared
    assert not (tmp_path / "out/.doctor").exists()  # the test job's files are cleaned up


@pytest.mark.slurm
def test_slurm_partition_that_does_not_exist(tmp_path, slurm_cluster):  # noqa: F811
    config = {"simulation": {"slurm": {"partition": "nowhere"}}}
    proc = run_doctor(tmp_path, config, "--slurm")
    assert proc.returncode == 1
    request = line(proc.stdout, "slurm request")
    assert request.startswith("FIX") and "refused --partition=nowhere" in request
    assert "partitions here: debug" in request
    assert "shared files" not in proc.stdout  # no real job for a refused request


@pytest.mark.slurm
def test_slurm_job_that_cannot_run_the_interpreter(tmp_path, slurm_cluster):  # noqa: F811
    # As when the venv is on a disk the compute nodes do not mount.
    proc = run_doctor(tmp_path, {}, "--slurm", "--python", "/nowhere/.venv/bin/python")
    assert proc.returncode == 1
    shared = line(proc.stdout, "shared files")
    assert shared.startswith("FIX") and "ended FAILED" in shared
    assert "/nowhere/.venv/bin/python" in shared and "mounts at the same path" in shared


def test_no_sbatch(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    (check,) = doctor.check_slurm({}, 2, 512)
    assert not check.ok and check.detail == "no sbatch on PATH"
    assert "login node" in check.fix


@pytest.mark.slurm
def test_a_slurm_client_without_its_controller_is_noted_for_local_runs(
    tmp_path,
    monkeypatch,
    slurm_cluster,  # noqa: F811  (installs the Slurm client)
):
    # A machine that once ran Slurm (or a workstation with the client) and no controller:
    # not needed for a local run, but every snakemake start would wait for it.
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=nowhere(127.0.0.9)\nSlurmctldPort=6999\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    check = doctor.check_slurm_unused()
    assert not check.ok and not check.needed  # a note: the exit status stays 0
    assert f"{conf} names a controller that does not answer" in check.detail
    assert re.search(r"every snakemake start waits [1-9]\d* s", check.detail), check.detail
    assert "scripts/slurm_down.sh" in check.fix
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "absent.conf"))
    assert doctor.check_slurm_unused().ok


@pytest.mark.slurm
def test_slurm_controller_down(tmp_path, monkeypatch, slurm_cluster):  # noqa: F811
    # This cluster's configuration, pointing at a controller nobody runs.
    conf = Path("/etc/slurm/slurm.conf").read_text()
    conf = re.sub(r"(?m)^SlurmctldHost=.*$", "SlurmctldHost=nowhere(127.0.0.9)", conf)
    (tmp_path / "slurm.conf").write_text(conf + "SlurmctldPort=6999\n")
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "slurm.conf"))
    (check,) = doctor.check_slurm({}, 2, 512)
    assert not check.ok and "the Slurm controller does not answer" in check.detail
    assert "DOWN" in check.detail and "scontrol ping" in check.fix
