"""The bridge from a Snakemake `script:` to library code.

A step's stdout/stderr go to the rule's log; a ReproLabError (a waiting gate, a
bad input file) is printed as its message alone, to the log and the console,
and fails the job so that only this branch stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from reprolab.errors import ReproLabError

if TYPE_CHECKING:
    from reprolab.paper import Paper
    from reprolab.settings import PaperRun

_CACHE: dict[tuple, object] = {}
"""Input functions' reads, keyed by file and its (mtime, size): one Snakemake invocation
calls them hundreds of times per paper, and a file rewritten during the run (the plan,
a design) is read again."""


def _stamp(path: str | os.PathLike) -> tuple:
    st = os.stat(path)
    return (str(path), st.st_mtime_ns, st.st_size)


def cached_json(path: str | os.PathLike):
    """The parsed JSON file, read once per version of the file in this process."""
    key = ("json", *_stamp(path))
    if key not in _CACHE:
        _CACHE[key] = json.loads(Path(path).read_text(encoding="utf-8"))
    return _CACHE[key]


def cached_paper(paper_dir: str | os.PathLike) -> Paper:
    """The paper's `Paper` (metadata validated, files checked), built once per version of
    its metadata.yaml in this process (Snakemake's input functions ask for it ~80
    times per paper)."""
    from reprolab.paper import Paper

    try:
        key = ("paper", *_stamp(Path(paper_dir) / "metadata.yaml"))
    except OSError:
        return Paper(paper_dir)  # its own error names the file and what is wrong
    if key not in _CACHE:
        _CACHE[key] = Paper(paper_dir)
    return _CACHE[key]  # type: ignore[return-value]


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


def job_config(snakemake) -> dict:
    """The config a step sees: only its own paper listed (settings.paper_run validates
    every listed paper, milliseconds each, in every job of a campaign), and for a
    simulation the cores its rule was given (`simulation.job_cores`, its threads),
    which its job keeps within (reprolab.jobs.stage_run.local_cap)."""
    config = dict(snakemake.config)
    entry = _paper_entry(config, snakemake.wildcards.paper)
    if entry is not None:
        config["papers"] = [entry]
    if snakemake.rule == "simulate":
        config["simulation"] = {**(config.get("simulation") or {}), "job_cores": snakemake.threads}
    return config


def _paper_entry(config: dict, paper_id: str) -> dict | None:
    """The config's entry of this paper, by its metadata's paper_id (read, not validated:
    the workflow validated every paper before any job ran); None when not found."""
    from reprolab.fileio import read_yaml

    for entry in config.get("papers") or []:
        try:
            meta = read_yaml(Path(entry["paper_dir"]) / "metadata.yaml")
        except (ReproLabError, KeyError, TypeError):
            continue
        if isinstance(meta, dict) and meta.get("paper_id") == paper_id:
            return entry
    return None


KEY_RULES = frozenset(
    {
        "adapt_prompts",
        "plan",
        "design",
        "generate_code",
        "simulate",
        "validate_run",
        "analyze",
        "stage_verdict",
    }
)
"""The rules whose step calls a model: only their processes keep the provider's key."""


def drop_secrets(snakemake) -> None:
    """A step that calls no model runs without the secrets in its environment: the
    script starts again in place without them (its /proc/self/environ then holds none),
    or, called in a process of its own making, only loses them from os.environ."""
    from reprolab import secret_env

    secret_env.note_config(snakemake.config)
    if snakemake.rule in KEY_RULES:
        return
    script = sys.argv[0] if sys.argv else ""
    ours = Path(script).parent.parts[-2:] == (".snakemake", "scripts")
    secret_env.restart_without_secrets(script if ours else "")


@contextlib.contextmanager
def step(snakemake):
    """Yield the PaperRun for the job's paper, with output sent to the rule's log."""
    drop_secrets(snakemake)
    with (
        open(snakemake.log[0], "w", encoding="utf-8") as log,
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
    ):
        try:
            from reprolab.settings import paper_run

            config = job_config(snakemake)
            run: PaperRun = paper_run(config, snakemake.wildcards.paper)
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
