"""Atomic file writes and validated reads.

Every artifact is written to a temporary file in the same directory and renamed
into place, so a crash never leaves a truncated JSON behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reprolab.errors import InputFileError, OutputFileError, ReproLabError

M = TypeVar("M", bound=BaseModel)


def current_umask() -> int:
    """The process's umask: from /proc (no change), else by setting it straight back."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write to a temporary file beside `path`, then rename: a crash or a full disk
    leaves the previous version (or nothing), never a truncated file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputFileError(path, f"cannot be written: {exc.strerror} ({exc.filename})") from None
    try:
        # mkstemp makes the file 0600; an artifact gets the mode any new file gets
        # (0666 less the umask), so a group can read a shared project folder.
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            kept = "the previous version is kept" if path.exists() else "nothing was written"
            raise OutputFileError(
                path, f"cannot be written ({exc.strerror}, {len(data)} bytes); {kept}"
            ) from None
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_text(path: str | os.PathLike) -> str:
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(path, "file does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"cannot be read ({exc})") from None


def read_json(path: str | os.PathLike) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputFileError(
            path, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def read_yaml(path: str | os.PathLike) -> Any:
    """Safe YAML through libyaml's C parser where PyYAML has it (several times faster
    than the pure-Python one); the same safe subset and errors naming line and column."""
    import yaml  # only the steps that read YAML pay for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(read_text(path), Loader=loader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise InputFileError(path, f"is not valid YAML ({exc})") from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: `field.path: message (got value)`."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        got = err.get("input")
        shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
        lines.append(f"  field '{loc}': {err['msg']} (got {shown[:80]})")
    return "\n".join(lines)


def validate_as(model: type[M], data: Any, source: str | os.PathLike) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputFileError(
            source, f"does not match {model.__name__}:\n{describe_validation_error(exc)}"
        ) from None


def read_model(path: str | os.PathLike, model: type[M], key: str | None = None) -> M:
    """Read a JSON/YAML file and validate it (or its `key` entry) against a model."""
    path = Path(path)
    data = read_yaml(path) if path.suffix in {".yaml", ".yml"} else read_json(path)
    if key is not None:
        if not isinstance(data, dict) or key not in data:
            raise InputFileError(path, f"has no top-level field '{key}'")
        data = data[key]
    return validate_as(model, data, path)


_HELD_LOCKS: list[int] = []  # open for the whole run: the lock ends with the process


def lock_outputs_dir(outputs_dir: str | Path) -> Path:
    """One run at a time per outputs folder, whatever its working directory: Snakemake's
    own lock is per working directory, and two runs writing one paper's files would
    count its cost twice and break each other's steps. Released when the process ends
    (flock), so a killed run never leaves it behind."""
    import fcntl

    folder = Path(outputs_dir)
    path = folder / ".reprolab.lock"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = _open_lock_file(path)
    except OSError as exc:
        raise OutputFileError(
            path,
            f"cannot write in the outputs folder {folder} ({exc.strerror}); nothing was "
            "written. Make it writable (or set outputs_dir to a folder you can write) and "
            "run the same command again.",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = path.read_text(encoding="utf-8", errors="replace").strip() or "unknown"
        os.close(fd)
        raise ReproLabError(
            f"{path}: another run is writing to the outputs folder {folder.resolve()} "
            f"(held by: {holder}). Wait for it to end (reprolab status shows its progress) "
            "or stop it, then run the same command again; two runs may not share one "
            "outputs_dir."
        ) from None
    with contextlib.suppress(OSError):  # who holds it, where this user may write it
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} in {Path.cwd()} (uid {os.getuid()})\n".encode())
    _HELD_LOCKS.append(fd)
    return path


def _open_lock_file(path: Path) -> int:
    """The lock file, for flock. In a group's shared folder another member made it
    (mode 0644 under umask 022): flock needs no write access, so it is opened to read."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # not inherited by exec'd children
    except PermissionError:
        if not path.is_file():
            raise
        return os.open(path, os.O_RDONLY)
