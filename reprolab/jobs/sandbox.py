"""The sandbox for generated simulation code, which is untrusted.

The wall is the OS boundary: every rank runs inside bubblewrap with the run folder
as its only writable path, and limits hold for the whole process tree
(`reprolab.jobs.bwrap`, `reprolab.jobs.limits`; `simulation.sandbox.isolation`).
The layers here come first and give the code generator readable reasons; the
guarantees do not rest on them:

1. `static_problems(code)`: AST checks before anything is submitted. A refused
   script never runs; its reasons go back to code regeneration as problems.
2. `runtime_guard(workdir)`: a Python audit hook installed in every rank by
   `reprolab.jobs.sandbox_run` (refuses writes outside the run folder, sockets,
   subprocesses) and memory/CPU rlimits.
3. `network_plan`: whether the job gets a network namespace (loopback only): locally
   yes where the OS allows it; under `srun` with several ranks no, as the ranks reach
   slurmstepd's PMIx server over TCP. With `isolation: unsafe_none` the namespace is
   made with `unshare -n` (`isolate_network`).

`job_settings` reads the OS sandbox's settings (and checks the memory settings).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from reprolab.jobs import sizing

# Imports a simulation script never needs; each is a way out of the sandbox.
FORBIDDEN_MODULES = {
    "socket": "network access",
    "ssl": "network access",
    "urllib": "network access",
    "urllib3": "network access",
    "requests": "network access",
    "httpx": "network access",
    "http": "network access",
    "ftplib": "network access",
    "smtplib": "network access",
    "asyncio": "network/subprocess access",
    "subprocess": "starting other programs",
    "multiprocessing": "starting other processes (use MPI ranks instead)",
    "pty": "starting other programs",
    "ctypes": "calling native code directly",
    "cffi": "calling native code directly",
    "importlib": "importing modules by computed name",
    "anthropic": "the LLM API",
    "shutil": "copying or deleting whole trees (write files with open/np.savetxt)",
    # The run-time recorder lives in the script's process: these reach it by name.
    "reprolab": "the pipeline's own recorder and checks (a script needs meep, numpy, "
    "scipy, h5py and matplotlib only)",
    "gc": "reaching every object of the process, the run-time recorder's included",
    "builtins": "replacing or reaching the interpreter's built-in functions",
    "inspect": "reaching other code's frames and globals",
}
# Names that lead from the script's objects to the recorder beside it (its functions'
# globals, the loaded modules, the callers' frames), refused as an attribute, a
# `getattr` string or any string constant: a simulation script never needs them.
FORBIDDEN_NAMES = {
    "modules": "the interpreter's loaded modules (sys.modules)",
    "meta_path": "the interpreter's import machinery",
    "_getframe": "the callers' frames",
    "_current_frames": "the other threads' frames",
    "__import__": "importing modules by computed name",
    "__builtins__": "the interpreter's built-in functions",
    "__globals__": "a function's module globals",
    "__closure__": "a function's hidden variables",
    "__code__": "a function's code",
    "__wrapped__": "the function under a wrapper",
    "__dict__": "an object's or module's whole namespace",
    "__subclasses__": "every class of the process",
    "__loader__": "the import machinery",
    "__spec__": "the import machinery",
    "__doc__": "reading text the script does not run",
    "f_globals": "a frame's module globals",
    "f_locals": "a frame's variables",
    "f_back": "the calling frame",
    "f_builtins": "a frame's built-in functions",
    "tb_frame": "a traceback's frames",
    "gi_frame": "a generator's frame",
    "cr_frame": "a coroutine's frame",
}
# A string holding one of these names the recorder's package, channel or state (the
# REPROLAB_*_SCALE variables a script reads are not among them).
FORBIDDEN_TEXT = re.compile(r"\breprolab\b|RECORD_CHANNEL|\b_STATE\b|\b_send\b")
# Calls refused wherever they appear (name as written: `os.system`, `eval`).
FORBIDDEN_CALLS = {
    "os.system": "runs a shell command",
    "os.popen": "runs a shell command",
    "os.chdir": "leaves the stage directory",
    "os.fork": "starts processes",
    "os.kill": "signals other processes",
    "os.execv": "replaces the process",
    "os.execvp": "replaces the process",
    "os.execl": "replaces the process",
    "os.execlp": "replaces the process",
    "os.spawnl": "starts processes",
    "os.spawnv": "starts processes",
    "os.posix_spawn": "starts processes",
    "os.path.expanduser": "reaches into the home directory",
    "Path.home": "reaches into the home directory",
    "pathlib.Path.home": "reaches into the home directory",
    "__import__": "imports modules by computed name",
    "compile": "compiles code from strings",
    "eval": "evaluates code from strings",
    "exec": "executes code from strings",
    "input": "waits for keyboard input that never comes in a batch job",
    "plt.show": "opens a window and blocks a batch job (use savefig)",
    "pyplot.show": "opens a window and blocks a batch job (use savefig)",
    "breakpoint": "stops in a debugger",
}
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def path_problem(text: str) -> str | None:
    """Why a file path literal leaves the stage directory, or None if it does not."""
    if text.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", text):
        return "is an absolute path outside the stage directory"
    if ".." in re.split(r"[\\/]", text):
        return "climbs out of the stage directory with '..'"
    return None


def static_problems(code: str) -> list[str]:
    """Reasons to refuse this script, each naming the line and what to do instead."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [f"code does not parse: line {exc.lineno}: {exc.msg}"]
    problems: list[str] = []

    def refuse(node: ast.AST, what: str) -> None:
        problems.append(f"line {getattr(node, 'lineno', '?')}: sandbox refuses {what}")

    # A docstring or bare string does nothing (and `__doc__` is refused): it may name us.
    docs = {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top in FORBIDDEN_MODULES:
                    refuse(node, f"import of '{name}' ({FORBIDDEN_MODULES[top]})")
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in FORBIDDEN_NAMES:
                        refuse(node, f"importing '{alias.name}' ({FORBIDDEN_NAMES[alias.name]})")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            refuse(node, f"the attribute '{node.attr}' ({FORBIDDEN_NAMES[node.attr]})")
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id in FORBIDDEN_NAMES:
            refuse(node, f"the name '{node.id}' ({FORBIDDEN_NAMES[node.id]})")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            if node.value in FORBIDDEN_NAMES:
                refuse(node, f"the string '{node.value}' ({FORBIDDEN_NAMES[node.value]})")
            elif FORBIDDEN_TEXT.search(node.value):
                refuse(
                    node,
                    f"a string naming the pipeline's recorder ('{node.value[:60]}'): "
                    "the run-time record is the launcher's, never the script's",
                )
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            short = ".".join(name.split(".")[-2:]) if "." in name else name
            for candidate in (name, short):
                if candidate in FORBIDDEN_CALLS:
                    refuse(node, f"{candidate}() ({FORBIDDEN_CALLS[candidate]})")
                    break
            args = list(node.args) + [k.value for k in node.keywords]
            for arg in args:
                for text in _string_parts(arg):
                    why = path_problem(text)
                    if why:
                        refuse(node, f"file path '{text}': it {why}; write into the cwd")
                    if name.endswith(("environ.get", "getenv")) and SECRET_NAME.search(text):
                        refuse(node, f"reading the secret-like variable '{text}'")
        elif isinstance(node, ast.Subscript) and _dotted(node.value).endswith("environ"):
            for text in _string_parts(node.slice):
                if SECRET_NAME.search(text):
                    refuse(node, f"reading the secret-like variable '{text}'")
    problems += _patching_problems(tree)
    return sorted(problems, key=lambda p: int(p.split(":")[0].split()[1]))


# Settings objects of the libraries a script may set by assignment (`mp.verbosity.meep
# = 0`, `matplotlib.rcParams`): their attributes are values, not what Meep measures.
SETTINGS_OBJECTS = {"verbosity", "rcParams"}


def _patching_problems(tree: ast.AST) -> list[str]:
    """Assignments into an imported module or class (`mp.get_fluxes = ...`,
    `mp.Simulation.run = ...`, `setattr(mp, ...)`): the recorder reads what Meep measured
    through those functions, and a script replacing them would feed it made-up values.
    A simulation's own objects (`sim.k_point = ...`) and `plt.rcParams[...]` stay free."""
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    out = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and _dotted(node.func) in ("setattr", "delattr"):
            targets = node.args[:1]
            if targets and _dotted(targets[0]).split(".")[0] in imported:
                out.append(
                    f"line {node.lineno}: sandbox refuses {_dotted(node.func)}() on "
                    f"'{_dotted(targets[0])}' (replacing what an imported module does)"
                )
            continue
        for target in targets:
            settings = set(_dotted(target).split(".")) & SETTINGS_OBJECTS
            if settings or not isinstance(target, ast.Attribute):
                continue
            if _dotted(target).split(".")[0] in imported:
                out.append(
                    f"line {node.lineno}: sandbox refuses assigning '{_dotted(target)}' "
                    "(replacing what an imported module does; keep your own names)"
                )
    return out


def _string_parts(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)][:1]
    return []


@functools.cache
def network_isolation_available() -> tuple[bool, str]:
    """Whether `unshare -n` with loopback up works here, and why not if it does not."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    if not unshare:
        return False, "no unshare command (util-linux)"
    if not Path(ip).exists():
        return False, "no ip command (iproute2) to bring loopback up"
    try:
        proc = subprocess.run(
            [unshare, "-n", "sh", "-c", f"{ip} link set lo up"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"unshare -n failed: {exc}"
    if proc.returncode != 0:
        return False, f"unshare -n not permitted here: {proc.stderr.strip()[:200]}"
    return True, "unshare -n (new network namespace, loopback only)"


def isolate_network(cmd: list[str]) -> list[str]:
    ip = shutil.which("ip") or "/usr/sbin/ip"
    return ["unshare", "-n", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sandbox", *cmd]


ISOLATIONS = ("bwrap", "unsafe_none")


def job_settings(sim_cfg: dict) -> dict:
    """The OS sandbox's fields of a SimulationJob, from `simulation.sandbox` of the config."""
    cfg = dict(sim_cfg.get("sandbox") or {})
    isolation = cfg.get("isolation", "bwrap")
    if isolation not in ISOLATIONS:
        raise ValueError(
            f"simulation.sandbox.isolation is {isolation!r}; valid: {', '.join(ISOLATIONS)}"
        )
    folder_mb = int(cfg.get("run_folder_mb", 4096))
    if folder_mb < 1:
        raise ValueError(f"simulation.sandbox.run_folder_mb is {folder_mb}; valid: 1 or more")
    lo, hi = sizing.memory_bounds(sim_cfg)
    if lo > hi:
        raise ValueError(
            f"simulation.min_memory_mb ({lo}) is above simulation.max_memory_mb ({hi}); "
            "valid: min_memory_mb <= max_memory_mb"
        )
    factor = float(sim_cfg.get("memory_safety_factor", 2.0))
    if not 0 < factor <= 20:
        raise ValueError(
            f"simulation.memory_safety_factor is {factor:g}; valid: above 0, at most 20 "
            "(it multiplies the design's memory estimate)"
        )
    return {"isolation": isolation, "folder_mb": folder_mb}


def network_mode(value) -> str:
    """YAML reads an unquoted `off` as false: take it as the documented 'off'."""
    return "off" if value is False else value


def network_plan(mode: str, launcher_uses_srun: bool) -> tuple[bool, str]:
    """(isolate?, reason) for network mode `auto` | `require` | `off`."""
    mode = network_mode(mode)
    if mode == "off":
        return False, "network isolation is off in the config (simulation.sandbox.network)"
    if launcher_uses_srun:
        reason = (
            "srun ranks must reach slurmstepd's PMIx server, so no network namespace; "
            "Python-level sockets are still refused by the runtime guard"
        )
    else:
        ok, reason = network_isolation_available()
        if ok:
            return True, reason
    if mode == "require":
        raise RuntimeError(
            f"simulation.sandbox.network is 'require' but isolation is not possible: {reason}. "
            "Set it to 'auto' to run with the runtime guard only."
        )
    return False, reason


# ---------------------------------------------------------------------------
# Runtime guard, installed inside each rank before the script runs.

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_BLOCKED_EVENTS = {
    "socket.__new__": "opening a network socket",
    "socket.connect": "opening a network connection",
    "socket.bind": "listening on the network",
    "socket.getaddrinfo": "resolving a network name",
    "urllib.Request": "a URL request",
    "subprocess.Popen": "starting another program",
    "os.system": "running a shell command",
    "os.exec": "replacing the process",
    "os.posix_spawn": "starting another program",
    "os.spawn": "starting another program",
    "os.fork": "forking the process",
    "os.kill": "signalling another process",
    "os.chdir": "leaving the stage directory",
}


def runtime_guard(
    workdir: str | Path | list, memory_mb: int | None, cpu_seconds: int | None
) -> None:
    """Limits and an audit hook for this process; call once, before the script.
    `workdir`: the folder it may write in, or a list of them (a packed worker's)."""
    import resource

    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 5))
    folders = workdir if isinstance(workdir, list | tuple) else [workdir]
    roots = [os.path.realpath(f) for f in folders]
    root = " and ".join(roots)
    allowed_write = (*(r + os.sep for r in roots), "/dev/null", "/dev/shm/")

    def hook(event: str, args: tuple) -> None:
        if event in _BLOCKED_EVENTS:
            raise PermissionError(f"sandbox: {_BLOCKED_EVENTS[event]} is not allowed ({event})")
        if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
            path, mode, flags = args[0], args[1], args[2]
            writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing:
                real = os.path.realpath(os.fsdecode(path))
                if not (real + os.sep).startswith(allowed_write) and real not in allowed_write:
                    raise PermissionError(
                        f"sandbox: writing '{os.fsdecode(path)}' outside the stage "
                        f"directory {root} is not allowed"
                    )

    sys.addaudithook(hook)
