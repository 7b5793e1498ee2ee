"""The launcher's end of the run-time record's channel.

`RecordChannel(workdirs)` makes a FIFO in a fresh private folder of the host (mode
0700, never inside a run folder), reads it on a thread while the job runs, and on
`close()` writes each run folder's record under `record_store.record_home`, where the
sandbox has no mount. A FIFO rather than an inherited descriptor: `mpirun` closes its
children's extra descriptors and `srun` starts each rank itself, while a path bound
into every sandbox (`bwrap_args`) reaches rank 0 however it was started (on the
launcher's node). The rank opens it before the script runs (`as_built.open_channel`);
what it has sent is out of the script's reach, so a record cannot be deleted or
rewritten after the fact, and the script writing `as_built.json` itself changes
nothing.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import tempfile
import threading
from pathlib import Path

from reprolab.physics import record_store
from reprolab.physics.record_store import CHANNEL_ENV

SANDBOX_PATH = "/run/reprolab-record"
"""Where the FIFO appears inside the sandbox."""


class RecordChannel:
    """One job's channel: `env(sandboxed)` for the ranks, `bwrap_args()` for the box."""

    def __init__(self, workdirs: list[str | Path]):
        self.workdirs = [str(Path(w).absolute()) for w in workdirs]
        record_store.clear(self.workdirs)
        self.folder = Path(tempfile.mkdtemp(prefix="reprolab-record-"))
        self.fifo = self.folder / "channel"
        os.mkfifo(self.fifo, 0o600)
        # Read-write: the open never waits for a writer and no EOF comes between ranks.
        self.fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
        self.assembler = record_store.Assembler(self.workdirs)
        self._stop_r, self._stop_w = os.pipe()
        self._buf = b""
        self._closed = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def env(self, sandboxed: bool) -> dict[str, str]:
        return {CHANNEL_ENV: SANDBOX_PATH if sandboxed else str(self.fifo)}

    def bwrap_args(self) -> list[str]:
        return ["--bind-try", str(self.fifo), SANDBOX_PATH]

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd, self._stop_r], [], [])
            if self.fd in ready:
                self._drain()
            if self._stop_r in ready:
                self._drain()
                return

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                return
            self._buf += chunk
            if b"\n" not in chunk:  # one long event coming in pieces: no rescanning
                if len(self._buf) > record_store.MAX_EVENT_BYTES:
                    self.assembler.feed(self._buf)  # refused as too long
                    self._buf = b""
                continue
            *lines, self._buf = self._buf.split(b"\n")
            for line in lines:
                if line.strip():
                    self.assembler.feed(line)
            if len(self._buf) > record_store.MAX_EVENT_BYTES:
                self.assembler.feed(self._buf)  # refused as too long
                self._buf = b""

    def close(self) -> list[Path]:
        """Stop reading (after the job's processes ended) and write the records."""
        if self._closed:
            return []
        self._closed = True
        if self._thread.is_alive():
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=30)
        for fd in (self.fd, self._stop_r, self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.folder, ignore_errors=True)
        return self.assembler.write()

    def __enter__(self) -> RecordChannel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def through(cmd: list[str], channel: RecordChannel) -> list[str]:
    """`cmd` with the channel bound into its sandbox (before the root goes read-only);
    a command without bubblewrap (`isolation: unsafe_none`) is returned as it is."""
    if "--remount-ro" not in cmd:
        return cmd
    at = cmd.index("--remount-ro")
    return [*cmd[:at], *channel.bwrap_args(), *cmd[at:]]


def job_with(job, channel: RecordChannel):
    """The job with the channel's path in its environment (the sandbox's or the host's)."""
    from dataclasses import replace

    sandboxed = job.isolation != "unsafe_none"
    return replace(job, env=(*job.env, *channel.env(sandboxed).items()))
