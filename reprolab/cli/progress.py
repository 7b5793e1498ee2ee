"""The console of a run at verbosity `normal`: what moves, in a few lines.

Snakemake's own output (rule blocks, reasons, job stats) is read, not shown: each step
gets a line when it starts and when it ends, with "n of N", the paper and the stage;
errors and the pipeline's own `[reprolab]` lines pass through. While simulations run,
a status line names each with its job (local process or Slurm job), its elapsed time
and Meep's own progress, refreshed in place on a terminal and once a minute otherwise.
`reprolab status` reads the same running-job facts (`running_simulation`).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

MEEP_PROGRESS = re.compile(
    r"(Meep progress: .*?done in [\d.]+s)|on time step (\d+) \(time=([\d.eE+-]+)\)"
)
RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
STEPS = re.compile(r"^(\d+) of (\d+) steps \(\d+%\) done")
FINISHED = re.compile(r"Finished jobid: (\w+)")
TOTAL = re.compile(r"^total\s+(\d+)\s*$")
ERROR = re.compile(r"^(Error in rule|\w*(Error|Exception)\b|Exiting because|WorkflowError)")


# The rules that write a setting or a stamp (workflow/rules/settings.smk): their ends
# are counted, never listed.
BOOKKEEPING = frozenset(
    {
        "simulation_settings",
        "figure_x_range",
        "figure_data",
        "figure_image",
        "stated_result",
        "stage_inputs",
    }
)


def clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def local_jobs(stage_dir: Path) -> list[tuple[str, float]]:
    """(job id, start time) of the stage's local jobs still running: submitit names a
    local job's logs after the process that runs it."""
    out = []
    folder = stage_dir / "submitit"
    if (stage_dir / "result.json").is_file() or not folder.is_dir():
        return out
    for log in folder.glob("*_0_log.err"):
        pid = log.name.split("_", 1)[0]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            try:
                out.append((pid, log.stat().st_ctime))
            except OSError:
                continue
    return sorted(out, key=lambda j: j[1])


def slurm_jobs(stage_dir: Path) -> list[str]:
    from reprolab.jobs import submit

    try:
        rec = json.loads((stage_dir / "submitit" / submit.SUBMISSION).read_text("utf-8"))
        return [str(j) for j in rec["job_ids"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def meep_progress(stage_dir: Path) -> str | None:
    """The last progress line Meep printed in the stage's run (a sweep: its newest point)."""
    logs = [stage_dir / "run" / "stdout.txt", *(stage_dir / "run").glob("*/*/stdout.txt")]
    found = []
    for log in logs:
        try:
            found.append((log.stat().st_mtime, log))
        except OSError:
            continue
    if not found:
        return None
    try:
        with open(max(found)[1], "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - 4096))
            tail = fh.read().decode(errors="replace")
    except OSError:
        return None
    hits = list(MEEP_PROGRESS.finditer(tail))
    if not hits:
        return None
    last = hits[-1]
    return last[1] if last[1] else f"Meep at time step {last[2]} (t = {last[3]})"


def running_simulation(stage_dir: Path) -> str | None:
    """'local job 1234, running 1m05s, Meep progress: ...' while the stage's simulation
    runs locally; None when none does (Slurm jobs: `reprolab status` asks Slurm)."""
    jobs = local_jobs(stage_dir)
    if not jobs:
        return None
    ids = ", ".join(j for j, _ in jobs)
    text = f"local job {ids}, running {clock(time.time() - jobs[0][1])}"
    meep = meep_progress(stage_dir)
    return f"{text}, {meep}" if meep else text


class ProgressConsole:
    """A filter for the pipeline's output lines: `__call__(line)` returns what to show
    (or None); `status()` the line of what is running now."""

    def __init__(self, outputs: Path, tty: bool):
        self.outputs, self.tty = Path(outputs), tty
        self.total = 0
        self.done = 0
        self.jobs: dict[str, dict] = {}  # jobid -> rule, where, started
        self.block: dict | None = None
        self.finished: list[dict] = []
        self.keep_indented = False
        self.seen: set[str] = set()  # the pipeline's lines and errors already shown
        self.lock = threading.Lock()

    def __call__(self, line: str) -> str | None:
        with self.lock:
            return self.filter(line.rstrip("\n"))

    def filter(self, text: str) -> str | None:
        shown = []
        if self.block is not None and not text.startswith("    "):
            shown.append(self.started(self.block))
            self.block = None
        m = TOTAL.match(text)
        if m and not self.total:
            self.total = int(m[1])
        rule = RULE.match(text)
        if rule:
            # Timed from here: Snakemake may print nothing more until the step ends.
            self.block = {"rule": rule[1], "where": "", "id": None, "started": time.time()}
        elif self.block is not None and text.strip().startswith(("jobid:", "wildcards:")):
            key, _, value = text.strip().partition(":")
            self.block["id" if key == "jobid" else "where"] = value.strip()
            if self.block["id"] is not None:
                self.jobs[self.block["id"]] = self.block  # running now: the status names it
        done = FINISHED.search(text)
        if done and done[1] in self.jobs:
            self.finished.append(self.jobs.pop(done[1]))
        steps = STEPS.match(text)
        if steps:
            grown = self.total and int(steps[2]) != self.total
            if grown:
                shown.append(
                    f"[reprolab] {int(steps[2])} steps in all now, not {self.total}: the "
                    "plan's stages (or a rerun's) add their steps as they are known"
                )
            self.done, self.total = int(steps[1]), int(steps[2])
            shown += [self.ended(job) for job in self.finished]
            self.finished = []
        passed = self.passes(text)
        if passed is not None:
            shown.append(passed)
        return "".join(s + "\n" for s in shown if s) or None

    def passes(self, text: str) -> str | None:
        """The pipeline's own lines (and their indented continuation) and errors."""
        if text.startswith(("[reprolab]", "reprolab:")):
            # A line said again (a step's error, then Snakemake's summary of it) is shown
            # once, with its indented continuation.
            self.keep_indented = text not in self.seen
            self.seen.add(text)
            return text if self.keep_indented else None
        if self.keep_indented and text.startswith("  ") and not text.startswith("    "):
            return text
        self.keep_indented = False
        if ERROR.match(text) and not text.startswith(("RuleException", "CalledProcessError")):
            if text in self.seen:
                return None
            self.seen.add(text)
            return text
        return None

    def where(self, job: dict) -> str:
        """'silica_bragg_2026 / stage1_single_slab' from the job's wildcards."""
        parts = dict(p.split("=", 1) for p in job["where"].split(", ") if "=" in p)
        paper = parts.pop("paper", "")
        stage = parts.pop("stage", parts.pop("stage_id", ""))
        rest = ", ".join(f"{k}={v}" for k, v in parts.items())
        return " / ".join(p for p in (paper, stage, rest) if p)

    def name(self, job: dict) -> str:
        where = self.where(job)
        return f"{job['rule']} {where}" if where else job["rule"]

    def started(self, block: dict) -> str | None:
        job = {**block, "started": block.get("started", time.time())}
        if block["id"] is None:
            return None
        self.jobs[block["id"]] = job
        if (self.tty and job["rule"] != "simulate") or job["rule"] in BOOKKEEPING:
            return None  # a terminal sees it in the status line, refreshed in place
        return f"[{self.done + 1:>3} of {self.total or '?'}] start {self.name(job)}"

    def ended(self, job: dict) -> str | None:
        if job["rule"] in BOOKKEEPING:
            return None  # counted in "n of N", not worth a line of its own
        took = clock(time.time() - job["started"])
        return f"[{self.done:>3} of {self.total}] done  {self.name(job)} ({took})"

    def status(self) -> str | None:
        """What runs now: each step, and each simulation with its job and Meep's progress."""
        with self.lock:
            jobs = list(self.jobs.values())
        if not jobs:
            return None
        parts = []
        for job in jobs:
            text = f"{self.name(job)} {clock(time.time() - job['started'])}"
            if job["rule"] == "simulate":
                parts.append(text + self.simulation(job))
            else:
                parts.append(text)
        return "running: " + "; ".join(parts)

    def simulation(self, job: dict) -> str:
        parts = dict(p.split("=", 1) for p in job["where"].split(", ") if "=" in p)
        stage_dir = self.outputs / parts.get("paper", "") / "stages" / parts.get("stage", "")
        local = running_simulation(stage_dir)
        if local:
            return f" ({local})"
        slurm = slurm_jobs(stage_dir)
        return f" (Slurm job {', '.join(slurm)})" if slurm else ""


class Screen:
    """Writes permanent lines and, on a terminal, one status line rewritten in place
    below them (wiped before the next permanent line)."""

    def __init__(self, stream, tty: bool):
        self.stream, self.tty = stream, tty
        self.lock = threading.Lock()
        self.status_shown = False

    def write(self, text: str) -> None:
        with self.lock:
            if self.status_shown:
                self.stream.write("\r\033[K")
                self.status_shown = False
            self.stream.write(text)
            self.stream.flush()

    def status(self, text: str) -> None:
        with self.lock:
            if self.tty:
                self.stream.write("\r\033[K" + text[:240])
                self.status_shown = True
            else:
                self.stream.write(text + "\n")
            self.stream.flush()


class Ticker(threading.Thread):
    """Shows `console.status()`: in place every 2 s on a terminal, else every 60 s and
    once FIRST_STATUS_S into a run, so that a short simulation that is the only thing
    running is still seen."""

    FIRST_STATUS_S = 10.0

    def __init__(self, console: ProgressConsole, screen: Screen, period_s: float | None = None):
        super().__init__(daemon=True)
        self.console, self.screen = console, screen
        self.period_s = period_s or (2.0 if screen.tty else 60.0)
        self.halt = threading.Event()

    def run(self) -> None:
        wait = min(self.period_s, self.FIRST_STATUS_S)
        while not self.halt.wait(wait):
            wait = self.period_s
            line = self.console.status()
            if line:
                self.screen.status(line)

    def stop(self) -> None:
        self.halt.set()
        self.join()
        self.screen.write("")  # the status line wiped
