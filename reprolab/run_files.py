"""Reading what a simulation left in its run folder, trusting nothing about it.

The generated script can write anything in its run folder: a symbolic link where a
log or an output was expected (to `/proc/self/environ`, the repository, another
paper's data), a FIFO that blocks a reader, a hard link, a folder that is a link, a
small file declaring a huge array. Every host read of a run folder goes through this
module: each path component is opened relative to the folder with `O_NOFOLLOW`
(`openat`), so no link is ever followed, the target must be a regular file with one
name, and every reader has a cap (bytes, rows, columns, elements, rank, pixels).
A refusal is `UnsafeRunFile`, a cap crossed `RunFileTooLarge`; each names the file,
why, and what is allowed. The caps are the constants below (docs/security.md).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any, BinaryIO

from reprolab.errors import RunFileTooLarge, UnsafeRunFile

MiB = 1 << 20
MAX_LOG_BYTES = 16 * MiB
"""A log (stdout.txt, stderr.txt) is read from its end: at most this much of it."""
MAX_CSV_BYTES = 64 * MiB
MAX_CSV_ROWS = 1_000_000
MAX_CSV_COLUMNS = 256
MAX_JSON_BYTES = 16 * MiB
MAX_HDF5_BYTES = 1024 * MiB
MAX_HDF5_ELEMENTS = 4_000_000
"""Elements of one HDF5 dataset read (a 2000 x 2000 field map): 64 MB as complex."""
MAX_HDF5_RANK = 3
MAX_IMAGE_BYTES = 32 * MiB
MAX_IMAGE_PIXELS = 40_000_000
CAPS = {
    "log bytes (read from the end)": MAX_LOG_BYTES,
    "CSV bytes": MAX_CSV_BYTES,
    "CSV rows": MAX_CSV_ROWS,
    "CSV columns": MAX_CSV_COLUMNS,
    "JSON bytes": MAX_JSON_BYTES,
    "HDF5 file bytes": MAX_HDF5_BYTES,
    "HDF5 dataset elements": MAX_HDF5_ELEMENTS,
    "HDF5 dataset rank": MAX_HDF5_RANK,
    "image bytes": MAX_IMAGE_BYTES,
    "image pixels": MAX_IMAGE_PIXELS,
}

ALLOWED = "a regular file inside the run folder, reached without any symbolic link"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused after fstat).
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def _parts(rel: str | os.PathLike) -> list[str]:
    text = os.fspath(rel)
    parts = text.split("/")
    if text.startswith("/") or not text or any(p in ("", ".", "..") for p in parts):
        raise UnsafeRunFile(text, f"is not a plain relative path; allowed: {ALLOWED}")
    return parts


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _why_refused(dir_fd: int, name: str, wanted_dir: bool) -> str:
    """What the entry `name` is, for the error (lstat: nothing followed)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        return f"cannot be opened ({exc.strerror})"
    what = _kind(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            what += f" (to {os.readlink(name, dir_fd=dir_fd)!r})"
    return f"is {what}" + ("; a folder was expected" if wanted_dir else "")


@contextlib.contextmanager
def _folder_fd(folder: str | os.PathLike, dirs: list[str]):
    """A descriptor of `folder`/`dirs`, each component opened without following links."""
    fds = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        for i, name in enumerate(dirs):
            try:
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno == 2:
                    raise FileNotFoundError(2, "no such folder", "/".join(dirs[: i + 1])) from None
                shown = Path(folder, *dirs[: i + 1])
                raise UnsafeRunFile(
                    shown, f"{_why_refused(fds[-1], name, True)}; allowed: {ALLOWED}"
                ) from None
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


def open_run_file(folder: str | os.PathLike, rel: str | os.PathLike, max_bytes: int) -> BinaryIO:
    """`folder`/`rel` opened for reading without following any link: a regular file
    with one name and at most `max_bytes`. FileNotFoundError when there is none."""
    parts = _parts(rel)
    shown = Path(folder, *parts)
    with _folder_fd(folder, parts[:-1]) as dir_fd:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError:
            why = _why_refused(dir_fd, parts[-1], False)
            raise UnsafeRunFile(shown, f"{why}; allowed: {ALLOWED}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeRunFile(shown, f"is {_kind(st.st_mode)}; allowed: {ALLOWED}")
        if st.st_nlink != 1:
            raise UnsafeRunFile(
                shown, f"is a hard link ({st.st_nlink} names); allowed: {ALLOWED}, one name"
            )
        if st.st_size > max_bytes:
            raise RunFileTooLarge(
                shown, f"has {st.st_size} bytes; this reader takes at most {max_bytes}"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_run_bytes(folder, rel, max_bytes: int) -> bytes:
    with open_run_file(folder, rel, max_bytes) as fh:
        return fh.read(max_bytes + 1)[:max_bytes]


def read_run_tail(folder, rel, max_bytes: int = MAX_LOG_BYTES) -> str:
    """The last `max_bytes` of a log; '' when there is none. Refusals raise."""
    try:
        fh = open_run_file(folder, rel, 1 << 62)
    except FileNotFoundError:
        return ""
    with fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - max_bytes))
        return fh.read(max_bytes).decode("utf-8", errors="replace")


def read_run_json(folder, rel, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A JSON record a run left (ValueError when it is not JSON)."""
    return json.loads(read_run_bytes(folder, rel, max_bytes).decode("utf-8"))


def read_run_csv(folder, rel) -> list[list[str]]:
    """The rows of a CSV output, within the byte, row and column caps."""
    shown = Path(folder, *_parts(rel))
    text = read_run_bytes(folder, rel, MAX_CSV_BYTES).decode("utf-8")
    rows = []
    for row in csv.reader(io.StringIO(text, newline="")):
        if len(row) > MAX_CSV_COLUMNS:
            raise RunFileTooLarge(
                shown, f"row {len(rows) + 1} has {len(row)} columns; at most {MAX_CSV_COLUMNS}"
            )
        rows.append(row)
        if len(rows) > MAX_CSV_ROWS + 1:  # the header row is not counted
            raise RunFileTooLarge(shown, f"has over {MAX_CSV_ROWS} data rows; at most that")
    return table_rows(rows)


def table_rows(rows: list[list[str]]) -> list[list[str]]:
    """A CSV's header and data rows as numpy.genfromtxt(names=True) and pandas
    (comment="#") read them: blank rows and rows starting with `#` are comments; where
    the first data row holds numbers, the last comment line before it with as many
    cells names the columns (numpy.savetxt writes its header as `# a,b`)."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    comment = [r[0].lstrip().startswith("#") for r in rows]
    body = [r for r, c in zip(rows, comment, strict=True) if not c]
    if not body or not _any_number(body[0]):
        return body
    leading = list(itertools.takewhile(lambda rc: rc[1], zip(rows, comment, strict=True)))
    named = [r for r, _ in leading if len(r) == len(body[0])]
    if not named:
        return body
    header = [named[-1][0].lstrip().removeprefix("#"), *named[-1][1:]]
    return [[h.strip() for h in header], *body]


def _any_number(row: list[str]) -> bool:
    """A data row, not a header: some cell is a number (a header names its columns)."""
    for c in row:
        try:
            float(c)
        except ValueError:
            continue
        return True
    return False


def refusal(folder, rel) -> str | None:
    """Why `folder`/`rel` would be refused (None: a readable regular file, or none)."""
    try:
        open_run_file(folder, rel, 1 << 62).close()
    except FileNotFoundError:
        return None
    except UnsafeRunFile as exc:
        return exc.problem
    return None


def size_of(folder, rel) -> int | None:
    """Bytes of a regular file `folder`/`rel`; None when there is none or it would be
    refused (what it is: `refusal`)."""
    try:
        with open_run_file(folder, rel, 1 << 62) as fh:
            return os.fstat(fh.fileno()).st_size
    except (FileNotFoundError, UnsafeRunFile):
        return None


def point_folders(workdir: str | os.PathLike) -> list[str]:
    """`points/pNNN` of a sweep's run folder: real folders only (a link is left out;
    a file under it is reached through `open_run_file`, which refuses links)."""
    try:
        with _folder_fd(workdir, ["points"]) as fd, os.scandir(fd) as entries:
            names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError, UnsafeRunFile):
        return []
    return [f"points/{n}" for n in sorted(names) if n.startswith("p")]


def regular_files(folder: str | os.PathLike) -> list[str]:
    """Names of the regular files directly in `folder` (links and the rest left out)."""
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if e.is_file(follow_symlinks=False))


def make_real_dir(folder: str | os.PathLike, rel: str | os.PathLike) -> Path:
    """Create `folder`/`rel` (and the folders on the way) without following a link:
    a component that exists and is not a real folder is refused. Its path."""
    parts = _parts(rel)
    for i in range(len(parts)):
        with _folder_fd(folder, parts[:i]) as dir_fd, contextlib.suppress(FileExistsError):
            os.mkdir(parts[i], dir_fd=dir_fd)
    with _folder_fd(folder, parts):
        pass
    return Path(folder, *parts)


def create_run_file(folder, rel, data: bytes) -> None:
    """Write a new file `folder`/`rel` (its folders made by `make_real_dir`); an entry
    already there (a file, or a link the run planted) is refused, never written through."""
    parts = _parts(rel)
    if parts[:-1]:
        make_real_dir(folder, "/".join(parts[:-1]))
    with _folder_fd(folder, parts[:-1]) as dir_fd:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, 0o666, dir_fd=dir_fd)  # the umask decides
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def empty_folder(folder: str | os.PathLike, keep=()) -> None:
    """Remove everything in `folder` but the real folders named in `keep`; links are
    removed as links (nothing is followed), folders with all they hold."""
    with os.scandir(folder) as entries:
        for entry in list(entries):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in keep:
                    shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _special(src: str, names: list[str]) -> list[str]:
    """Entries a copy leaves out: FIFOs, sockets, devices (never opened)."""
    left = []
    for name in names:
        mode = os.lstat(os.path.join(src, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            left.append(name)
    return left


LEFT_OUT_FILE = "left_out.txt"
"""In a capped copy of a run folder: the files not copied, one a line."""


def copy_run_tree(
    src: str | os.PathLike, dst: str | os.PathLike, cap_bytes: int | None = None
) -> list[str]:
    """A copy of a run folder that follows no link: links are copied as links, FIFOs,
    sockets and devices are left out. With `cap_bytes`, files are copied while the
    bytes the copy writes stay within it, counted by each file's apparent size (a sparse
    file of 1 GB holding 1 MB on disk becomes 1 GB in a copy); the rest are left out
    and named in `left_out.txt`. Returns the names left out."""
    left: list[str] = []
    budget = [cap_bytes]

    def copy(source: str, target: str) -> None:
        size = os.lstat(source).st_size
        if budget[0] is not None:
            if size > budget[0]:
                left.append(os.path.relpath(source, src))
                return
            budget[0] -= size
        shutil.copy2(source, target, follow_symlinks=False)

    shutil.copytree(src, dst, symlinks=True, ignore=_special, copy_function=copy)
    if left:
        text = "".join(f"{name}\n" for name in left)
        Path(dst, LEFT_OUT_FILE).write_text(
            f"# over the copy's cap of {cap_bytes} bytes, not kept:\n{text}", encoding="utf-8"
        )
    return left


def check_real_dir(path: str | os.PathLike, must_exist: bool = True) -> None:
    """`path` is a folder reached without any link: refused otherwise, so that nothing
    is mounted or written where a run's link points (`must_exist=False`: a path not
    made yet passes, as long as no link is on its way)."""
    real = os.path.realpath(path)
    if real != os.path.abspath(path):
        raise UnsafeRunFile(path, f"goes through a link (to {real}); allowed: a real folder")
    if (must_exist or os.path.lexists(real)) and not os.path.isdir(real):
        raise UnsafeRunFile(path, "is not a folder; allowed: a real folder, no link")


def hdf5_dataset(h5, name: str, shown: str | os.PathLike):
    """The dataset `name` of an open h5py file, its data read only within the caps:
    a hard link in the file itself (no external or soft link, no virtual dataset, no
    external storage), rank <= MAX_HDF5_RANK, elements <= MAX_HDF5_ELEMENTS."""
    import h5py
    import numpy as np

    where = f"{shown}:{name}"
    link = h5.get(name, getlink=True)
    if link is None:
        raise KeyError(f"{shown} has no dataset '{name}'")
    if not isinstance(link, h5py.HardLink):
        raise UnsafeRunFile(where, f"is {type(link).__name__}; allowed: a dataset in the file")
    ds = h5[name]
    if not isinstance(ds, h5py.Dataset):
        raise UnsafeRunFile(where, "is not a dataset; allowed: a numeric dataset")
    if ds.is_virtual or ds.external:
        raise UnsafeRunFile(where, "takes its data from other files; allowed: data in the file")
    if ds.ndim > MAX_HDF5_RANK or ds.size > MAX_HDF5_ELEMENTS:
        raise RunFileTooLarge(
            where,
            f"has shape {list(ds.shape)} ({ds.size} elements); at most {MAX_HDF5_ELEMENTS} "
            f"elements and rank {MAX_HDF5_RANK}",
        )
    if ds.dtype.kind not in "biufc" or ds.dtype.itemsize > 16:
        raise UnsafeRunFile(where, f"has type {ds.dtype}; allowed: numbers")
    return np.asarray(ds[()])


def is_image(folder, rel) -> bool:
    """A regular file whose header PIL reads as an image within the caps."""
    try:
        image_size(folder, rel)
    except (OSError, ValueError, UnsafeRunFile, RunFileTooLarge):
        return False
    return True


def image_size(folder, rel) -> tuple[int, int]:
    """An image's (width, height) from its header, within the byte and pixel caps."""
    from PIL import Image

    shown = Path(folder, *_parts(rel))
    with open_run_file(folder, rel, MAX_IMAGE_BYTES) as fh, Image.open(fh) as img:
        width, height = img.size
    if width * height > MAX_IMAGE_PIXELS:
        raise RunFileTooLarge(
            shown, f"is {width} x {height} pixels; at most {MAX_IMAGE_PIXELS} pixels"
        )
    return width, height
