"""`reprolab doctor`: checks the site before a long run, one line per check.

What a run needs, checked where it will happen: Meep (an MPI build) in the
interpreter the simulation jobs will use and the MPI launcher; the sandbox
(bubblewrap, user namespaces: it really starts `bwrap`); the outputs folder
writable; on Slurm (`--slurm`, or `simulation.executor: slurm`) the controller,
the partition/account/qos (`sbatch --test-only`) and a tiny real job that runs
the jobs' interpreter on a compute node and writes a file under the outputs
folder that this process then reads (the checkout, its venv and the outputs must
be on a file system the compute nodes mount at the same path); the API key the
provider needs (never printed). Each line is `ok` or `FIX` with the exact fix;
the exit status is 1 when something a run needs failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PROC_SYS = Path("/proc/sys")
MEEP_PROBE = (
    "import json, meep, mpi4py, h5py; "
    "print('MEEP', json.dumps({'version': meep.__version__, 'mpi': bool(meep.with_mpi())}))"
)
GET_MEEP = (
    "run scripts/setup.sh as the user who runs the pipeline: it finds Meep in an active conda "
    "env, a loaded module or Debian's python, or lists the three ways to get it "
    "(apt as root, `conda env create -f envs/reprolab.yaml`, a container)"
)
# Run on a compute node by the jobs' interpreter: meep imports there, and the file lands.
WRITE_TOKEN = (
    "import socket, sys, meep; "
    "open(sys.argv[1], 'w').write(sys.argv[2] + ' ' + socket.gethostname())"
)
SHARED_FS = (
    "put the checkout (with its .venv) and outputs_dir on a file system every compute node "
    "mounts at the same path (a project or home folder, not /tmp or a login node's disk)"
)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    needed: bool = True
    """False: informational; a failure does not make the exit status non-zero."""

    def line(self) -> str:
        if self.ok:
            return f"ok    {self.name}: {self.detail}"
        mark = "FIX  " if self.needed else "note "
        return f"{mark} {self.name}: {self.detail}\n      fix: {self.fix}"


def _run(cmd: list[str], timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except FileNotFoundError:
        return subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: not found")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"no answer within {timeout:g} s")


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0][:300] if lines else "(no message)"


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no message)"


def check_meep(python: str, ranks: int) -> Check:
    """Meep, mpi4py and h5py in the interpreter the jobs use, and Meep's MPI build."""
    proc = _run([python, "-c", MEEP_PROBE])
    if proc.returncode != 0:
        return Check(
            "meep",
            False,
            f"{python} cannot import meep, mpi4py and h5py: {_last_line(proc.stderr)}",
            GET_MEEP,
        )
    # Meep also prints to stdout ("Using MPI version ..."): find the probe's own line.
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("MEEP {"))
    info = json.loads(line[len("MEEP ") :])
    where = f"Meep {info['version']} in {python}"
    if not info["mpi"] and ranks > 1:
        return Check(
            "meep",
            False,
            f"{where} is a serial build; simulation.max_mpi_ranks is {ranks}",
            "install an MPI build (Debian python3-meep-mpi-default, conda-forge "
            "pymeep=*=mpi_*), or set simulation.max_mpi_ranks: 1",
        )
    return Check("meep", True, f"{where}, {'MPI' if info['mpi'] else 'serial'} build")


# What provides each launcher command (a missing srun is Slurm's, not MPI's).
LAUNCHER_PACKAGES = {
    "srun": "the Slurm client (Debian slurm-client; on a cluster, run from a login node "
    "where srun is on PATH), or set simulation.mpi_launcher to mpirun for local runs",
    "mpirun": "OpenMPI (Debian openmpi-bin; it comes with conda-forge pymeep's MPI build), "
    "load your site's MPI module, or set simulation.mpi_launcher",
    "mpiexec": "an MPI (Debian openmpi-bin or mpich), or load your site's MPI module",
}


def launcher_fix(exe: str) -> str:
    name = Path(exe).name
    return "install " + LAUNCHER_PACKAGES.get(name, LAUNCHER_PACKAGES["mpirun"])


def check_launcher(launcher: str, ranks: int) -> Check:
    exe = shlex.split(launcher)[0]
    found = shutil.which(exe)
    if found:
        return Check("mpi launcher", True, f"{exe} is {found} (simulation.mpi_launcher)")
    return Check(
        "mpi launcher",
        False,
        f"'{exe}' of simulation.mpi_launcher '{launcher}' is not on PATH",
        launcher_fix(exe),
        needed=ranks > 1,
    )


# sysctl switches that keep a user out of user namespaces: (value that forbids, fix,
# whether it binds root too). AppArmor's switch is consulted only when bwrap fails:
# distributions that set it ship a profile that lets bwrap through.
USERNS_SWITCHES = {
    "user/max_user_namespaces": ("0", "sysctl -w user.max_user_namespaces=15000", True),
    "kernel/unprivileged_userns_clone": (
        "0",
        "sysctl -w kernel.unprivileged_userns_clone=1",
        False,
    ),
}
APPARMOR_SWITCH = (
    "kernel/apparmor_restrict_unprivileged_userns",
    ("1", "an AppArmor profile allowing userns for bwrap, or "
     "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", False),
)  # fmt: skip


def userns_switched_off(proc_sys: Path, uid: int, switches: dict) -> tuple[str, str] | None:
    """(what is off, the administrator's fix) for the first switch that forbids, if any."""
    for knob, (forbids, fix, binds_root) in switches.items():
        path = proc_sys / knob
        try:
            value = path.read_text().strip()
        except OSError:
            continue  # this kernel has no such switch
        if value == forbids and (uid != 0 or binds_root):
            return (
                f"user namespaces are off for uid {uid} ({path} is {value})",
                f"an administrator runs: {fix} (and makes it permanent in /etc/sysctl.d/)",
            )
    return None


def check_sandbox(needed: bool = True, proc_sys: Path = PROC_SYS, uid: int | None = None) -> Check:
    """bwrap installed, user namespaces allowed, and the jobs' own bwrap probe passing."""
    from reprolab.jobs import bwrap

    uid = os.getuid() if uid is None else uid
    exe = shutil.which("bwrap")
    if not exe:
        return Check(
            "sandbox",
            False,
            "bubblewrap is not installed (no bwrap on PATH): simulations refuse to run",
            "as root: apt-get install bubblewrap (dnf install bubblewrap), or ask your site; "
            "or, knowing generated code then runs with your rights, "
            "simulation.sandbox.isolation: unsafe_none",
            needed,
        )
    off = userns_switched_off(proc_sys, uid, USERNS_SWITCHES)
    if off is not None:
        return Check("sandbox", False, *off, needed)
    usable, why = bwrap.availability()
    if not usable:
        off = userns_switched_off(proc_sys, uid, dict([APPARMOR_SWITCH]))
        return Check("sandbox", False, *(off or (why, bwrap.UNAVAILABLE_HELP)), needed)
    return Check("sandbox", True, f"{exe} starts processes in new namespaces (user, net, ...)")


def check_outputs(out: Path) -> list[Check]:
    probe = out / f".doctor-{os.getpid()}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_text("doctor\n")
        probe.read_text()
        probe.unlink()
    except OSError as exc:
        return [
            Check(
                "outputs",
                False,
                f"outputs_dir {out.resolve()} is not writable by {_user()}: {exc.strerror or exc}",
                f"make it yours or your group's (chgrp GROUP {out}; chmod g+ws {out}), "
                "or set outputs_dir in the config to a folder you can write",
            )
        ]
    checks = [Check("outputs", True, f"{out.resolve()} is writable by {_user()}")]
    mask = os.umask(0)
    os.umask(mask)
    if mask & 0o070:
        checks.append(
            Check(
                "group access",
                False,
                f"umask {mask:03o}: your group cannot write what a run creates",
                "for a shared project folder: umask 002 before starting the driver, and a "
                "setgid group folder (chgrp GROUP DIR; chmod g+ws DIR)",
                needed=False,
            )
        )
    return checks


def _user() -> str:
    return f"uid {os.getuid()}"


def check_api_key(provider: dict) -> Check:
    kind = provider.get("kind", "replay")
    if kind == "replay":
        return Check("api key", True, "not needed (provider.kind: replay)")
    default = {"anthropic": "ANTHROPIC_API_KEY", "openai_compatible": "OPENAI_API_KEY"}
    env = provider.get("api_key_env", default.get(kind, "API_KEY"))
    if os.environ.get(env):
        return Check("api key", True, f"{env} is set (provider.kind: {kind}; value not shown)")
    return Check(
        "api key",
        False,
        f"provider.kind {kind} reads its key from {env}, which is not set",
        f"export {env}=... in the shell (or batch script) that starts the driver; never in "
        "the config",
        needed=kind == "anthropic",
    )


LIVE = (
    "a new paper has no recordings: run it with a live model (provider.kind: anthropic in "
    "the config, and export ANTHROPIC_API_KEY=... in the shell that starts the run)"
)


def check_papers_answerable(config: dict) -> list[Check]:
    """Replay: every configured paper has the recordings its run replays (what
    `reprolab check-recordings` checks). A live provider answers any paper once its key
    is set (check_api_key)."""
    kind = (config.get("provider") or {}).get("kind", "replay")
    if kind != "replay" or not config.get("papers"):
        return []
    from reprolab.cli.paper_tools import check_recordings

    out = []
    for entry in config["papers"]:
        folder = Path(entry.get("recordings") or Path(entry["paper_dir"]) / "recordings")
        name = Path(entry["paper_dir"]).name
        problems = check_recordings(folder) if folder.is_dir() else [(str(folder), "missing")]
        if not problems:
            out.append(Check(f"recordings {name}", True, f"{folder} replays the whole run"))
            continue
        first = f"{problems[0][0]}: {problems[0][1]}"[:160]
        out.append(
            Check(
                f"recordings {name}",
                False,
                f"provider.kind replay, but {len(problems)} recording(s) of {folder} are "
                f"missing or invalid (first: {first}); reprolab check-recordings "
                f"{entry['paper_dir']} lists them",
                LIVE,
            )
        )
    return out


def sbatch_options(slurm: dict) -> list[str]:
    """The sbatch options a run's jobs get from `simulation.slurm`."""
    opts = [f"--{key}={slurm[key]}" for key in ("partition", "account", "qos") if slurm.get(key)]
    for key, value in (slurm.get("extra_sbatch") or {}).items():
        opts.append(f"--{str(key).replace('_', '-')}={value}")
    return opts


def check_slurm_unused() -> Check:
    """Local runs: Slurm is not used, but a Slurm client configured for a controller
    that does not answer still costs every snakemake start: Snakemake's Slurm executor
    plugin runs `scontrol show config` when it is imported, and every run imports it."""
    unused = "not used (simulation.executor: local; --slurm checks it as for --profile slurm)"
    conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
    if not shutil.which("scontrol") or not conf.is_file():
        return Check("slurm", True, unused)
    if "is UP" in _run(["scontrol", "ping"], timeout=30).stdout:
        return Check("slurm", True, unused)
    start = time.monotonic()
    _run(["scontrol", "show", "config"], timeout=30)
    waited = time.monotonic() - start
    if waited < 1:  # the client gives up at once: nothing to note
        return Check("slurm", True, unused)
    return Check(
        "slurm",
        False,
        f"{unused}; {conf} names a controller that does not answer, and every snakemake "
        f"start waits {waited:.0f} s for it (Snakemake's Slurm plugin runs `scontrol show "
        "config` on import)",
        f"start the controller, or move {conf} away on a machine that does not use Slurm "
        "(scripts/slurm_down.sh removes the one scripts/slurm_up.sh wrote)",
        needed=False,
    )


def check_slurm(slurm: dict, ranks: int, mem_mb: int) -> list[Check]:
    """sbatch found, the controller up, and the request accepted (`sbatch --test-only`)."""
    if not shutil.which("sbatch"):
        return [
            Check(
                "slurm",
                False,
                "no sbatch on PATH",
                "run the driver on a login node, or load your site's Slurm module",
            )
        ]
    ping = _run(["scontrol", "ping"], timeout=30)
    if "is UP" not in ping.stdout:
        return [
            Check(
                "slurm",
                False,
                f"the Slurm controller does not answer: {_first_line(ping.stdout + ping.stderr)}",
                "ask your site; `scontrol ping` must say UP",
            )
        ]
    opts = sbatch_options(slurm)
    test = _run(
        [
            "sbatch",
            "--test-only",
            f"--ntasks={ranks}",
            f"--mem={mem_mb}M",
            "--time=2",
            *opts,
            "--wrap",
            "true",
        ],
        timeout=60,
    )
    asked = " ".join(opts) or "the default partition"
    if test.returncode != 0:
        parts = _run(["sinfo", "-h", "-o", "%P"]).stdout.split()
        return [
            Check(
                "slurm request",
                False,
                f"sbatch --test-only refused {asked} with {ranks} tasks: {_last_line(test.stderr)}",
                "set simulation.slurm.partition/account/qos to values you may use "
                f"(partitions here: {', '.join(parts) or 'none listed'}; your accounts and QoS: "
                "sacctmgr show assoc user=$USER)",
            )
        ]
    return [
        Check("slurm", True, "the controller answers (scontrol ping)"),
        Check("slurm request", True, f"sbatch --test-only accepts {asked}, {ranks} tasks"),
    ]


def _wait_for(job_id: str, wait_s: float) -> tuple[dict, bool]:
    """(last `scontrol` state, ended) of a job, waiting at most wait_s."""
    from reprolab.jobs.submit import ACTIVE_STATES, slurm_state

    state, deadline = {}, time.time() + wait_s
    while time.time() < deadline:
        state = slurm_state(job_id) or state
        if state and state.get("JobState") not in ACTIVE_STATES:
            return state, True
        time.sleep(1)
    return state, False


def check_shared_files(slurm: dict, python: str, out: Path, wait_s: float) -> Check:
    """A tiny real job runs the jobs' interpreter on a compute node and writes under outputs."""
    folder = (out / ".doctor").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(8)
    target = folder / f"{token}.txt"
    code = WRITE_TOKEN
    sub = _run(
        ["sbatch", "--parsable", "--job-name=reprolab-doctor", "--ntasks=1", "--mem=512M",
         "--time=2", f"--output={folder}/slurm-%j.out", *sbatch_options(slurm),
         "--wrap", shlex.join([python, "-c", code, str(target), token])]
    )  # fmt: skip
    if sub.returncode != 0:
        why = f"sbatch refused the test job: {_last_line(sub.stderr)}"
        return Check("shared files", False, why, "see the slurm request line")
    job_id = sub.stdout.strip().split(";")[0]
    state, ended = _wait_for(job_id, wait_s)
    if not ended:
        _run(["scancel", job_id])
        why = (
            f"test job {job_id} did not finish within {wait_s:g} s (JobState="
            f"{state.get('JobState')}, Reason={state.get('Reason')}); cancelled"
        )
        fix = (
            "run doctor again when the queue is quieter (--wait-s), or a partition with free nodes"
        )
        return Check("shared files", False, why, fix)
    log = folder / f"slurm-{job_id}.out"
    seen = target.read_text().split() if target.is_file() else []
    job_log = log.read_text(errors="replace") if log.is_file() else ""
    for path in (target, log):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when empty: another doctor may be running
    node = state.get("NodeList", "?")
    if seen[:1] == [token]:
        done = (
            f"job {job_id} on {node} ran {python} and wrote under {out.resolve()}; read back here"
        )
        return Check("shared files", True, done)
    why = (
        f"job {job_id} on {node} ended {state.get('JobState')} and this machine does not see "
        f"{target} (job log: {_last_line(job_log) if job_log.strip() else 'none'})"
    )
    return Check("shared files", False, why, SHARED_FS)


def add_command(sub) -> None:
    p = sub.add_parser("doctor", help="check this site before a long run (one line per check)")
    p.add_argument("--configfile", default="config/config.yaml", help="the run's config file")
    p.add_argument(
        "--slurm", action="store_true", help="check as for --profile slurm (executor slurm)"
    )
    p.add_argument("--python", default=sys.executable, help="the jobs' interpreter")
    p.add_argument("--wait-s", type=float, default=300, help="longest wait for the test job")


def run(args: argparse.Namespace, config: dict) -> int:
    sim = dict(config.get("simulation") or {})
    ranks = int(sim.get("max_mpi_ranks", 2))
    slurm_on = args.slurm or sim.get("executor") == "slurm"
    launcher = sim.get("mpi_launcher", "mpirun --oversubscribe -np {ranks}")
    if args.slurm and "srun" not in launcher:
        from reprolab.settings import SLURM_LAUNCHER

        launcher = SLURM_LAUNCHER
    isolation = (sim.get("sandbox") or {}).get("isolation", "bwrap")
    out = Path(config.get("outputs_dir", "outputs"))
    checks = [
        check_meep(args.python, ranks),
        check_launcher(launcher, ranks),
        check_sandbox(needed=isolation != "unsafe_none"),
        *check_outputs(out),
    ]
    if slurm_on:
        slurm = dict(sim.get("slurm") or {})
        from reprolab.jobs.sizing import MIN_MEMORY_MB

        mem = int(sim.get("min_memory_mb", MIN_MEMORY_MB))
        checks += check_slurm(slurm, ranks, mem)
        if all(c.ok for c in checks if c.name.startswith("slurm") or c.name == "outputs"):
            checks.append(check_shared_files(slurm, args.python, out, args.wait_s))
    else:
        checks.append(check_slurm_unused())
    checks.append(check_api_key(dict(config.get("provider") or {})))
    checks += check_papers_answerable(config)
    for check in checks:
        print(check.line(), flush=True)
    failed = [c.name for c in checks if not c.ok and c.needed]
    if failed:
        print(f"doctor: {len(failed)} to fix before a run: {', '.join(failed)}")
        return 1
    notes = sum(not c.ok for c in checks)
    print(f"doctor: nothing to fix before a run ({len(checks)} checks, {notes} note(s))")
    return 0
