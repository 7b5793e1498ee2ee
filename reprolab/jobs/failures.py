"""Failure kinds in words a user understands, each with the action it calls for.

Every failure record carries `kind`, `summary`, `action` (`FAILURES`) and
`log_tail`; the simulate step decides from `action` whether to regenerate code,
resubmit, or ask the user (docs/slurm.md lists them)."""

from __future__ import annotations

import re
import signal

from reprolab.jobs.limits import LIMIT_FAILURES

FAILURES = {
    "sandbox_refused": ("regenerate_code", "The sandbox refused the script before it ran"),
    "sandbox_violation": ("regenerate_code", "The script tried something the sandbox forbids"),
    "timeout": ("ask_user", "The simulation ran out of its time limit"),
    "out_of_memory": ("ask_user", "The simulation ran out of memory"),
    "meep_nan": ("regenerate_code", "Meep's fields blew up to NaN/Inf (numerical instability)"),
    "python_exception": ("regenerate_code", "The script stopped with a Python error"),
    "nonzero_exit": ("regenerate_code", "The script exited with a non-zero exit code"),
    "cancelled": ("resubmit", "The job was cancelled (by a user or an administrator)"),
    "node_failure": ("resubmit", "The compute node failed while running the job"),
    "launch_failed": ("resubmit", "Slurm could not start the job's tasks on the node"),
    "preempted": ("resubmit", "The job was preempted by higher-priority work"),
    "job_error": ("ask_user", "The job could not be run (submission or worker error)"),
    "worker_lost": (
        "resubmit",
        "The job's worker was stopped before it recorded the run (killed from outside, "
        "or by a limit of the machine), not by anything the script did",
    ),
    "disk_full": ("ask_user", "The disk the simulation writes to is full (or over quota)"),
    "submission_refused": ("ask_user", "Slurm refused the job at submission"),
    "unschedulable": (
        "ask_user",
        "Slurm can never start the job as requested, so it was cancelled",
    ),
    "queue_timeout": (
        "ask_user",
        "The job waited in the Slurm queue longer than simulation.queue_wait_minutes "
        "and was cancelled",
    ),
}
FAILURES.update(LIMIT_FAILURES)  # the sandbox's limits, each its own kind


ACTIONS = ("regenerate_code", "resubmit", "ask_user")


# Pending reasons the request itself causes: waiting cannot help, the request
# (time, nodes, partition, account, QOS, constraints) must change. Reasons such
# as Resources, Priority, ReqNodeNotAvail, NodeDown, PartitionDown or BeginTime
# can clear on their own; queue_wait_minutes bounds those.
UNSCHEDULABLE_REASONS = {
    "PartitionTimeLimit": "the time limit is above the partition's MaxTime",
    "PartitionNodeLimit": "the node count is outside the partition's limits",
    "PartitionConfig": "the partition cannot give what the job asks for",
    "BadConstraints": "the constraints can never be satisfied",
    "InvalidAccount": "the account is invalid",
    "InvalidQOS": "the QOS is invalid",
    "AccountNotAllowed": "the account may not use the partition",
    "QOSNotAllowed": "the QOS may not be used in the partition",
    "DependencyNeverSatisfied": "a dependency can never be satisfied",
}


PER_JOB_LIMIT = re.compile(r"^(QOS|Assoc)Max\w*PerJob\w*$")


MEMORY_PATTERNS = re.compile(
    r"MemoryError|std::bad_alloc|Cannot allocate memory|out of memory|oom-kill|"
    r"Exceeded (job|step) memory limit",
    re.IGNORECASE,
)


NAN_PATTERNS = re.compile(r"fields are NaN or Inf|NaN or Inf", re.IGNORECASE)


EXCEPTION_LINE = re.compile(r"^(\w+(\.\w+)*(Error|Exception|Exit|Interrupt)\b.*)$", re.MULTILINE)


def failure(kind: str, detail: str, log_tail: str = "") -> dict:
    action, words = FAILURES[kind]
    return {
        "kind": kind,
        "summary": f"{words}: {detail}" if detail else words,
        "action": action,
        "log_tail": log_tail[-1500:],
    }


def classify_failure(record: dict, slurm_state: dict | None = None) -> dict | None:
    """None when the run succeeded; otherwise what went wrong, in plain words."""
    state = (slurm_state or {}).get("JobState", "")
    boxed = record.get("sandbox_failure")
    # A job cancelled while its sandbox was being probed killed the probe: the cancel is
    # what happened, not a machine without namespaces.
    cancelled = state.startswith("CANCELLED")
    if boxed and not (cancelled and boxed.get("kind") == "sandbox_unavailable"):
        return boxed  # the sandbox saw the limit crossed: its kind wins
    restarts = int((slurm_state or {}).get("Restarts", "0") or 0)
    out, err = record.get("stdout_tail", ""), record.get("stderr_tail", "")
    log = out + "\n" + err
    tail = err or out
    code = record.get("exit_code")
    if state == "TIMEOUT":
        limit = slurm_state.get("TimeLimit", "?")
        return failure("timeout", f"Slurm stopped it at the job's time limit ({limit})", tail)
    if record.get("timed_out"):
        return failure("timeout", timeout_words(record), tail)
    if state == "OUT_OF_MEMORY" or (code not in (0, None) and MEMORY_PATTERNS.search(log)):
        return failure("out_of_memory", "reduce resolution or cell size, or ask for more", tail)
    if state == "NODE_FAIL":
        return failure("node_failure", f"node {slurm_state.get('NodeList', '?')}", tail)
    if state == "PREEMPTED" or (state.startswith("REQUEUE") and restarts):
        return failure("preempted", f"requeued {restarts} time(s)", tail)
    if state in {"CANCELLED", "DEADLINE"} or state.startswith("CANCELLED"):
        return failure("cancelled", f"Slurm state {state}", tail)
    if code not in (0, None) and (
        DISK_FULL_PATTERNS.search(log)
        or record.get("disk_free_bytes", DISK_LOW_BYTES) < DISK_LOW_BYTES
    ):
        # Not the code's fault, and its own error message may not have fitted on the disk.
        free = record.get("disk_free_bytes")
        where = f"{free} bytes left in the run directory" if free is not None else "see the log"
        return failure("disk_full", f"{where}; free space or move outputs_dir", tail)
    limit = limit_signal(code, log)
    if limit == "SIGXCPU":
        return failure("timeout", "the CPU-time limit (RLIMIT_CPU) stopped it", tail)
    if limit == "SIGXFSZ":
        return failure("disk_quota", "a file reached the run folder's size cap", tail)
    if record.get("worker_lost") and state not in ("FAILED", "BOOT_FAIL"):
        # No record from the worker: whatever a log says, the script was stopped from
        # outside, so neither its traceback nor "no outputs" ask for new code.
        return failure("worker_lost", f"state {state or 'ended locally'}", tail)
    killed = outside_signal(code, log)
    if killed:
        # The code did nothing wrong: resubmit, as for a Slurm cancellation.
        return failure(
            "cancelled",
            f"killed by {killed} from outside the job (or by the kernel's out-of-memory killer)",
            tail,
        )
    if SRUN_LAUNCH_FAILED.search(err):
        # srun exits 0 when no task could start (Slurm 22.05): nothing ran, the code is
        # not to blame, and "no outputs" must not send it back to be regenerated.
        line = SRUN_LAUNCH_FAILED.search(err).group(0)
        return failure("launch_failed", f"srun: {line}", tail)
    if code == 0 and not state.startswith(("FAILED", "BOOT_FAIL")):
        if NAN_PATTERNS.search(log):
            return failure("meep_nan", "the log reports NaN/Inf fields", tail)
        return None
    if "sandbox: " in err and "PermissionError" in err:
        line = next((ln for ln in err.splitlines() if "sandbox: " in ln), "")
        return failure("sandbox_violation", line.split("sandbox: ", 1)[-1], tail)
    if NAN_PATTERNS.search(log):
        return failure("meep_nan", "the log reports NaN/Inf fields", tail)
    if "Traceback (most recent call last)" in err:
        lines = EXCEPTION_LINE.findall(err)
        last = lines[-1][0] if lines else err.strip().splitlines()[-1]
        return failure("python_exception", last.strip()[:300], tail)
    if code is None:
        return failure("job_error", f"Slurm state {state or 'unknown'}", tail)
    return failure("nonzero_exit", f"exit code {code}", tail)


SRUN_LAUNCH_FAILED = re.compile(
    r"task \d+ launch failed[^\n]*|aborted before step completely launched"
)
DISK_FULL_PATTERNS = re.compile(r"No space left on device|Disk quota exceeded")


DISK_LOW_BYTES = 1 << 20  # less than this free after a failed run: the disk filled up


# Signals that stop a job from outside (kill, Ctrl-C, a closed terminal, shutdown);
# a crash (SIGSEGV, SIGABRT, SIGFPE) stays a failure of the code.
OUTSIDE_SIGNALS = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


MPIRUN_SIGNAL = re.compile(r"exited on signal (\d+)")


def outside_signal(code: int | None, log: str) -> str | None:
    """The signal's name when the script (or one MPI rank, as mpirun reports it) was
    stopped from outside; None otherwise."""
    if code in (0, None):
        return None
    found = MPIRUN_SIGNAL.search(log)
    signum = int(found.group(1)) if found else (-code if code < 0 else None)
    if signum not in OUTSIDE_SIGNALS:
        return None
    return signal.Signals(signum).name


# Signals the kernel sends when a resource limit is reached: a limit, never the code's crash.
LIMIT_SIGNALS = {signal.SIGXCPU, signal.SIGXFSZ}


def limit_signal(code: int | None, log: str) -> str | None:
    """The signal's name when the script (or one rank) was stopped by a resource limit
    (RLIMIT_CPU, RLIMIT_FSIZE): as a negative status, a shell's or bubblewrap's 128+N,
    or mpirun's words; None otherwise."""
    if code in (0, None):
        return None
    found = MPIRUN_SIGNAL.search(log)
    candidates = [int(found.group(1))] if found else []
    candidates += [-code] if code < 0 else [code - 128] if code > 128 else []
    for signum in candidates:
        if signum in LIMIT_SIGNALS:
            return signal.Signals(signum).name
    return None


def unschedulable_reason(reason: str) -> str | None:
    """Plain words when a pending job's Slurm reason can never clear, else None."""
    if reason in UNSCHEDULABLE_REASONS:
        return UNSCHEDULABLE_REASONS[reason]
    if PER_JOB_LIMIT.match(reason):
        return "the job is larger than a per-job limit of its QOS or association"
    return None


def pending_verdict(state: dict, queued_s: float, queue_wait_min: float) -> dict | None:
    """A failure for a pending job that must not wait any longer, else None."""
    reason = state.get("Reason", "") or "None"
    why = unschedulable_reason(reason)
    if why:
        return failure("unschedulable", f"Slurm's reason {reason}: {why}")
    if queue_wait_min and queued_s > queue_wait_min * 60:
        return failure(
            "queue_timeout",
            f"pending {queued_s / 60:.1f} min (limit {queue_wait_min:g} min), "
            f"Slurm's reason {reason}",
        )
    return None


def timeout_words(record: dict) -> str:
    """What stopped the run: its limit, and on the CPU-share clock the CPU time it got
    against the wall time it waited."""
    limit = f"stopped after {record.get('timeout_s', '?')} s (limit)"
    clock = record.get("time_limit") or {}
    if clock.get("clock") == "cpu_share":
        limit += (
            f", judged on the CPU it got: {clock.get('charged_s')} s charged over "
            f"{clock.get('wall_s')} s of wall time"
        )
    return limit
