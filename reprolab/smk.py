"""The bridge from a Snakemake `script:` to library code.

A step's stdout/stderr go to the rule's log; a ReproLabError (a waiting gate, a
bad input file) is printed as its message alone, to the log and the console,
and fails the job so that only this branch stops.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import traceback
from pathlib import Path

from reprolab.errors import ReproLabError
from reprolab.settings import PaperRun, paper_run


def driver_command(pid: int | None = None) -> str | None:
    """The snakemake command line the user ran (this step's nearest snakemake
    ancestor, from /proc), so a hint can print exactly what to run again."""
    pid = os.getppid() if pid is None else pid
    for _ in range(4):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        except OSError:
            return None
        words = [a.decode(errors="replace") for a in args]
        for i, word in enumerate(words[:3]):
            if os.path.basename(word) == "snakemake":
                return shlex.join(words[i:])
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's pid
        if pid <= 1:
            return None
    return None


@contextlib.contextmanager
def step(snakemake):
    """Yield the PaperRun for the job's paper, with output sent to the rule's log."""
    with (
        open(snakemake.log[0], "w", encoding="utf-8") as log,
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
    ):
        try:
            run: PaperRun = paper_run(snakemake.config, snakemake.wildcards.paper)
            yield run
        except ReproLabError as exc:
            message = f"[reprolab] {exc}"
            command = driver_command()
            if command:
                message += f"\n[reprolab] to go on afterwards, run again: {command}"
            print(message, file=log, flush=True)
            print(message, file=sys.__stderr__, flush=True)
            sys.exit(1)
        except Exception:
            traceback.print_exc(file=log)
            raise
