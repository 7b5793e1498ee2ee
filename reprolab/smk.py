"""The bridge from a Snakemake `script:` to library code.

A step's stdout/stderr go to the rule's log; a ReproLabError (a waiting gate, a
bad input file) is printed as its message alone, to the log and the console,
and fails the job so that only this branch stops.
"""

from __future__ import annotations

import contextlib
import sys
import traceback

from reprolab.errors import ReproLabError
from reprolab.settings import PaperRun, paper_run


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
            print(message, file=log, flush=True)
            print(message, file=sys.__stderr__, flush=True)
            sys.exit(1)
        except Exception:
            traceback.print_exc(file=log)
            raise
