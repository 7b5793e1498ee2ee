"""Which environment variables are secrets, and processes that never hold them.

The provider's key is needed only where a model is called (the agents' steps). Every
other process that reads what a simulation left (the checks, the comparison, the
convergence step, the report, the submitit worker that starts the sandbox) runs with
the secrets removed from its environment, so that not even a read of its own
`/proc/self/environ` (the environment a process started with, which removing a name
from `os.environ` does not change) can show them.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
"""A variable whose name says it holds a secret (the sandbox drops the same names)."""
DEFAULT_KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
_CONFIGURED: set[str] = set()
"""`provider.api_key_env` of every config seen in this process (any name may hold a key)."""


def note_config(config: Mapping | None) -> None:
    """Remember the config's `provider.api_key_env` as a secret name."""
    provider = (config or {}).get("provider") or {}
    name = provider.get("api_key_env") if isinstance(provider, Mapping) else None
    if isinstance(name, str) and name:
        _CONFIGURED.add(name)


def secret_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The names in `environ` (default: this process's) that hold secrets."""
    environ = os.environ if environ is None else environ
    known = {*DEFAULT_KEY_ENVS, *_CONFIGURED}
    return sorted(k for k in environ if k in known or SECRET_NAME.search(k))


def scrubbed(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    environ = dict(os.environ if environ is None else environ)
    drop = set(secret_names(environ))
    return {k: v for k, v in environ.items() if k not in drop}


@contextlib.contextmanager
def withheld() -> Iterator[None]:
    """The secrets out of `os.environ` while processes are started (a submitit worker,
    `sbatch`, which passes the environment on to the job), put back afterwards for the
    agents of this process."""
    saved = {k: os.environ.pop(k) for k in secret_names()}
    try:
        yield
    finally:
        os.environ.update(saved)


def started_with_secrets() -> bool:
    """Whether this process's initial environment (/proc/self/environ) holds one."""
    try:
        block = Path("/proc/self/environ").read_bytes()
    except OSError:
        return bool(secret_names())
    names = [e.split(b"=", 1)[0].decode(errors="replace") for e in block.split(b"\0") if e]
    return bool(secret_names(dict.fromkeys(names, "")))


def restart_without_secrets(script: str) -> None:
    """Start this Python script again, in place (same pid), without the secrets, when it
    started with any; else only drop them from `os.environ`. Only for a script run as
    its own process (`script` is sys.argv[0], an existing file)."""
    if started_with_secrets() and script and Path(script).is_file():
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], scrubbed())
    for name in secret_names():
        os.environ.pop(name, None)
