"""Installing and running without root, and the environment files for other sites.

The non-root path is run for real: a user created here (`useradd`, Debian's
Meep packages already installed by root) gets a copy of this working tree it
owns, with a half-built `.venv` (creation interrupted before pip, the state
that made setup.sh fail forever), and runs `make demo` in a clean environment
with `apt-get`/`sudo` spies first on PATH. Its setup.sh builds the venv from
local wheels (the test saves the download, not the build: pip, the venv and
`pip install -e .` are the user's), the example paper is reproduced with real
Meep in the bubblewrap sandbox, and no apt or sudo is ever called. The same
user then submits a 2-rank job through `reprolab.jobs.submit.submit_all` to the
one-node Slurm cluster and runs `reprolab doctor --slurm`.

conda-forge and Apptainer are out of reach here: their files are checked for
what can be checked (YAML, pins, the definition's sections and packages) and a
`--sdm conda` dry run shows the simulate rule declares envs/reprolab.yaml.
"""

import grp
import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.pipeline import EXAMPLE, REPO

USER = "reprolab-user"
TEAM = "reprolab-team"  # the group of a shared project folder
PAPER = "silica_bragg_2026"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def requirement_pins() -> list[str]:
    lines = (REPO / "requirements.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def setup_array(name: str) -> list[str]:
    """A bash array's words as scripts/setup.sh defines them."""
    text = (REPO / "scripts/setup.sh").read_text()
    match = re.search(rf"^{name}=\(([^)]*)\)", text, re.M)
    assert match, f"scripts/setup.sh defines no {name}=(...)"
    return match.group(1).split()


# ---------------------------------------------------------------------------
# The environment files (not installable here: checked for what can be checked)


@pytest.mark.parametrize("name", ["reprolab.yaml", "driver.yaml"])
def test_conda_env_files_pin_what_requirements_pins(name):
    env = yaml.safe_load((REPO / "envs" / name).read_text())
    assert env["channels"][0] == "conda-forge"
    deps = env["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert pip == requirement_pins(), f"envs/{name} pip pins differ from requirements.txt"
    conda = [d for d in deps if isinstance(d, str)]
    assert "python=3.11" in conda and "numpy<2" in conda  # as constraints.txt, Debian's numpy 1
    if name == "reprolab.yaml":
        meep = next(d for d in conda if d.startswith("pymeep"))
        assert "build='mpi_" in meep, "the simulations need Meep's MPI build"
        assert {"mpi4py", "openmpi"} <= set(conda)
        assert any(d.startswith("h5py") and "mpi_" in d for d in conda)
    else:
        assert not any(d.startswith("pymeep") for d in conda)  # the driver needs no Meep


def test_conda_post_deploy_installs_the_checkout():
    script = REPO / "envs/reprolab.post-deploy.sh"
    assert script.stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    assert "pip install --no-deps" in script.read_text() and '"$(dirname "$0")/.."' in (
        script.read_text()
    )


def apptainer_sections(text: str) -> tuple[dict, dict]:
    header, sections, current = {}, {}, None
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("%"):
            current = line.split()[0][1:]
            assert current not in sections, f"section %{current} twice"
            sections[current] = []
        elif current is None:
            key, sep, value = line.partition(":")
            assert sep, f"header line without 'Key: value': {line!r}"
            header[key.strip()] = value.strip()
        else:
            sections[current].append(line)
    return header, sections


def test_apptainer_definition_builds_from_debian_12_packages():
    header, sections = apptainer_sections((REPO / "envs/reprolab.def").read_text())
    assert header == {"Bootstrap": "docker", "From": "debian:12"}
    known = {"files", "post", "environment", "runscript", "test", "labels", "help"}
    assert set(sections) <= known and {"files", "post", "environment", "test"} <= set(sections)
    for section in ("post", "environment", "runscript", "test"):  # sh scripts
        body = "\n".join(sections[section])
        check = subprocess.run(["sh", "-n"], input=body, text=True, capture_output=True)
        assert check.returncode == 0, (section, check.stderr)
    post = "\n".join(sections["post"])
    for pkg in setup_array("DEBIAN_PACKAGES"):
        assert re.search(rf"\b{re.escape(pkg)}\b", post), f"%post does not install {pkg}"
    for line in sections["files"]:
        src, dest = line.split()
        assert (REPO / src).is_file() and dest in post, line
    assert "REPROLAB_PYTHON=/usr/bin/python3" in "\n".join(sections["environment"])


CONDA_STAND_IN = """#!/bin/sh
# Stand-in for the conda CLI (conda-forge is unreachable here): answers the
# questions Snakemake asks before it would create an environment, refuses the rest.
echo "$*" >> "$(dirname "$0")/calls.log"
case "$*" in
  "info --json") printf '{"conda_prefix": "%s", "platform": "linux-64"}\\n' "$0.prefix" ;;
  "--version") echo "conda 24.7.1" ;;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}' ;;
  *) echo "conda stand-in: refusing '$*'" >&2; exit 3 ;;
esac
"""


def dry_run_sdm_conda(tmp_path: Path, target: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "conda").write_text(CONDA_STAND_IN)
    (bin_dir / "conda").chmod(0o755)
    config = {"papers": [{"paper_dir": str(EXAMPLE)}], "provider": {"kind": "replay"}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    return subprocess.run(
        [
            SNAKEMAKE,
            target,
            "-n",
            "--sdm",
            "conda",
            "--cores",
            "1",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(tmp_path / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_sdm_conda_dry_run_gives_the_simulate_rule_its_env(tmp_path):
    stage = f"outputs/{PAPER}/stages/stage1_single_slab"
    sim = dry_run_sdm_conda(tmp_path, f"{stage}/result.json")
    log = sim.stdout + sim.stderr
    assert sim.returncode == 0, log[-3000:]
    envs = re.findall(r"Conda environment (\S+) will be created", log)
    assert [Path(e).resolve() for e in envs] == [REPO / "envs/reprolab.yaml"], log[-3000:]
    assert "rule simulate:" in log
    calls = (tmp_path / "bin/calls.log").read_text().splitlines()
    assert not any(c.startswith(("create", "env")) for c in calls), calls  # a dry run made none
    # The agent steps before it declare none: the env belongs to the simulate rule.
    design = dry_run_sdm_conda(tmp_path, f"{stage}/code.json")
    assert design.returncode == 0, design.stderr[-3000:]
    assert "Conda environment" not in design.stdout + design.stderr


# ---------------------------------------------------------------------------
# setup.sh without Meep: one message, nothing installed


def setup_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "checkout"
    for rel in ("scripts/setup.sh", "requirements.txt", "constraints.txt", "pyproject.toml"):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)
    return dest


def spies(folder: Path) -> Path:
    """apt-get, apt and sudo that only record that they were called."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("apt-get", "apt", "sudo"):
        spy = folder / name
        spy.write_text(f'#!/bin/sh\necho "{name} $*" >> "{folder}/calls.log"\nexit 1\n')
        spy.chmod(0o755)
    return folder


def test_setup_without_meep_stops_with_the_three_ways(tmp_path):
    checkout = setup_copy(tmp_path)
    bare = tmp_path / "bare"  # an interpreter without Meep, mpi4py or h5py
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(bare)], check=True)
    spy = spies(tmp_path / "spy")
    env = dict(os.environ, PATH=f"{spy}:{os.environ['PATH']}", REPROLAB_PYTHON=f"{bare}/bin/python")
    env.pop("CONDA_PREFIX", None)
    proc = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert f"{bare}/bin/python lacks: meep mpi4py h5py" in proc.stderr
    ways = (
        "apt-get install python3-meep-mpi-default",
        "conda env create -f envs/reprolab.yaml",
        "apptainer build reprolab.sif envs/reprolab.def",
    )
    for way in ways:
        assert way in proc.stderr, proc.stderr
    assert not (checkout / ".venv").exists()
    assert not (spy / "calls.log").exists(), "setup.sh called apt or sudo"


# ---------------------------------------------------------------------------
# A real unprivileged user: make demo, a Slurm job, reprolab doctor


def run_as(user: str, home: Path, cmd: list[str], cwd: Path, timeout: float, **extra):
    env = {
        "HOME": str(home),
        "USER": user,
        "LOGNAME": user,
        "LANG": "C.UTF-8",
        "PATH": f"{home}/spy:/usr/local/bin:/usr/bin:/bin",
        **extra,
    }
    return subprocess.run(
        ["runuser", "-u", user, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()], *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wheelhouse(request) -> Path:
    """The pins as wheels, kept between test runs: the user's pip installs from them."""
    key = hashlib.sha256(
        b"".join((REPO / f).read_bytes() for f in ("requirements.txt", "constraints.txt"))
    ).hexdigest()[:12]
    folder = Path(request.config.cache.mkdir(f"wheelhouse-{key}"))
    if not (folder / "complete").is_file():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "-r",
                "requirements.txt",
                "-c",
                "constraints.txt",
                "setuptools",
                "wheel",
                "-w",
                str(folder),
            ],
            cwd=REPO,
            check=True,
            timeout=900,
        )
        (folder / "complete").write_text("ok\n")
    return folder


def copy_tree(dest: Path) -> None:
    """This working tree (tracked and untracked, not ignored), as a clone would hold it."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    tar = subprocess.run(
        ["tar", "--null", "-T", "-", "-cf", "-"],
        cwd=REPO,
        input=files,
        capture_output=True,
        check=True,
    ).stdout
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-xf", "-", "-C", str(dest)], input=tar, check=True)


@pytest.fixture(scope="module")
def user_demo(request):
    if subprocess.run(["id", USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", USER], check=True)
    info = pwd.getpwnam(USER)
    home = Path(info.pw_dir)
    wheels = wheelhouse(request)
    repo = home / f"repo-{os.getpid()}"
    copy_tree(repo)
    spies(home / "spy")
    (home / "spy" / "calls.log").unlink(missing_ok=True)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(repo), str(home / "spy")], check=True)
    # A shared project folder: outputs/ is a setgid folder of the team, the user a member.
    subprocess.run(["groupadd", "-f", TEAM], check=True)
    subprocess.run(["usermod", "-aG", TEAM, USER], check=True)
    subprocess.run(["chgrp", TEAM, str(repo / "outputs")], check=True)
    (repo / "outputs").chmod(0o2775)
    # Interrupted venv creation: python is there, pip never got installed.
    half = run_as(
        USER,
        home,
        ["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", ".venv"],
        repo,
        120,
    )
    assert half.returncode == 0 and not (repo / ".venv/bin/pip").exists(), half.stderr
    started = time.time()
    demo = run_as(
        USER,
        home,
        ["sh", "-c", "umask 002 && exec make demo"],  # as docs/slurm.md "A shared project folder"
        repo,
        1500,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
    )
    yield {
        "repo": repo,
        "home": home,
        "uid": info.pw_uid,
        "demo": demo,
        "seconds": time.time() - started,
    }
    # Its venv and outputs are thousands of files: removed in the background, not timed.
    subprocess.Popen(["rm", "-rf", str(repo)], start_new_session=True)


@pytest.mark.pipeline
def test_make_demo_as_an_unprivileged_user(user_demo):
    demo, repo = user_demo["demo"], user_demo["repo"]
    log = demo.stdout + demo.stderr
    assert demo.returncode == 0, log[-5000:]
    print(f"make demo as {USER}, venv rebuilt included: {user_demo['seconds']:.0f} s")
    assert ".venv is incomplete" in log and "setup: ready" in log  # the half-built venv healed
    assert not (user_demo["home"] / "spy/calls.log").exists(), "apt-get or sudo was called"
    report = repo / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md"
    assert f"reprolab: report: {report}" in log
    index = repo / "outputs" / "REPORTS_INDEX.md"  # the demo is a campaign of two papers
    assert f"reprolab: index of the campaign's reports: {index}" in log
    assert "ag_etalon_2026/REPRODUCTION_REPORT_ag_etalon_2026.md" in index.read_text()
    assert report.stat().st_uid == user_demo["uid"]
    stages = repo / "outputs" / PAPER / "stages"
    records = {p.parent.name: json.loads(p.read_text()) for p in stages.glob("*/result.json")}
    assert len(records) == 4
    for stage, record in records.items():
        assert record["failure"] is None, (stage, record["failure"])
    # Two MPI ranks under mpirun as a user, without --allow-run-as-root, where two cores
    # were idle when it started (else one, and the record says why).
    two = records["stage2_bragg_mirror"]
    assert two["mpi"]["size"] == two["mpi_ranks"], two.get("mpi")
    idle_cap = any("idle core" in n for n in two["resource_notes"])
    assert two["mpi_ranks"] == 2 or (two["mpi_ranks"] == 1 and idle_cap), two["resource_notes"]
    # umask 002 in a setgid group folder: the team may read and write every file of the run.
    files = [p for p in (repo / "outputs" / PAPER).rglob("*") if p.is_file()]
    not_shared = [
        f"{oct(p.stat().st_mode & 0o777)} {p.relative_to(repo)}"
        for p in files
        if p.stat().st_mode & 0o060 != 0o060 or grp.getgrgid(p.stat().st_gid).gr_name != TEAM
    ]
    assert files and not not_shared, not_shared[:20]
    # Each single run went through the OS sandbox (a sweep's record keeps point summaries).
    single = [r for r in records.values() if "points" not in r]
    assert len(single) == 3 and {r["sandbox"]["isolation"] for r in single} == {"bwrap"}


TWO_RANKS = """import json
import meep  # noqa: F401  (the job's interpreter must have it)
from mpi4py import MPI

comm = MPI.COMM_WORLD
with open(f"rank{comm.rank}.json", "w") as f:
    json.dump({"rank": comm.rank, "size": comm.size}, f)
"""
SUBMIT = """import json, sys
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.submit import ClusterSettings, Resources, submit_all

wd = sys.argv[1]
job = SimulationJob(script=f"{wd}/simulation.py", workdir=wd, mpi_ranks=2, timeout_s=120,
                    mpi_launcher="srun --mpi=pmix -n {ranks}")
record = submit_all([job], ClusterSettings(executor="slurm", poll_s=0.5), Resources(2, 1024, 3),
                    f"{wd}/../submitit")[0]
print("RECORD " + json.dumps(record))
"""


@pytest.mark.slurm
def test_slurm_job_as_an_unprivileged_user(user_demo, slurm_cluster):  # noqa: F811
    repo, home = user_demo["repo"], user_demo["home"]
    assert (repo / ".venv/bin/python").is_file(), "make demo did not build the user's venv"
    wd = repo / "slurm-job" / "run"
    wd.mkdir(parents=True)
    (wd / "simulation.py").write_text(TWO_RANKS)
    (repo / "slurm-job" / "submit.py").write_text(SUBMIT)
    subprocess.run(["chown", "-R", USER, str(repo / "slurm-job")], check=True)
    python = str(repo / ".venv/bin/python")
    proc = run_as(USER, home, [python, "slurm-job/submit.py", str(wd)], repo, 300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout.split("RECORD ", 1)[1])
    assert record["failure"] is None, record["failure"]
    assert record["executor"] == "slurm" and record["slurm_env"]["SLURM_JOB_ID"]
    assert record["mpi"]["size"] == 2 and record["sandbox"]["isolation"] == "bwrap"
    ranks = [json.loads((wd / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert ranks == [{"rank": 0, "size": 2}, {"rank": 1, "size": 2}]
    info = subprocess.run(
        ["scontrol", "show", "job", "-o", record["job_id"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"UserId={USER}(" in info and "JobState=COMPLETED" in info, info


@pytest.mark.slurm
def test_doctor_as_an_unprivileged_user(user_demo, slurm_cluster, tmp_path):  # noqa: F811
    repo, home = user_demo["repo"], user_demo["home"]
    doctor = [str(repo / ".venv/bin/reprolab"), "doctor", "--slurm", "--wait-s", "120"]
    ok = run_as(USER, home, doctor, repo, 300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for name in (
        "meep",
        "mpi launcher",
        "sandbox",
        "outputs",
        "slurm",
        "slurm request",
        "shared files",
        "api key",
    ):
        assert re.search(rf"^ok    {name}:", ok.stdout, re.M), (name, ok.stdout)
    # Outputs in a folder this user may not write (root's): the line says so and how.
    (repo / "locked.yaml").write_text(f"outputs_dir: {tmp_path}/outputs\n")
    bad = run_as(USER, home, [*doctor, "--configfile", "locked.yaml"], repo, 300)
    assert bad.returncode == 1, bad.stdout
    assert re.search(r"^FIX   outputs: outputs_dir .* is not writable by uid \d+", bad.stdout, re.M)
    assert "shared files" not in bad.stdout  # no job is sent where nothing can be written
