"""One stage's simulation: resources, sandbox, a job or a job array, gathering.

`run_stage` is what the `simulate` rule does: refuse the script if the sandbox's
static checks object (no job is submitted; the reasons go back to code
regeneration), work out the job's resources from the plan's runtime budget and
the design's performance estimate, submit one job or, for a sweep of one-rank
points, a few packed workers (reprolab.jobs.packed: Meep imported once per worker;
locally one per core the rule was given, on Slurm one job array task each, as many
as the estimate and the limits call for; points of several ranks: one array task
each), wait, gather the points' CSV outputs into the stage's run directory, and return
the result record. Locally the job keeps within the cores its rule declared
(`declared_cores`, `local_cap`), so that --cores counts every rank.

A sweep point that already succeeded with the same script and value is kept:
rerunning the rule resubmits only the failed points, each reported by index.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import psutil

from agents.simulation_designer import SimulationDesign
from reprolab import run_files
from reprolab.artifacts import load_design
from reprolab.errors import InputFileError
from reprolab.fileio import atomic_write_json, atomic_write_text, sha256_file
from reprolab.jobs import failures, job_size, launch, packed, sandbox, sizing, submit

POINT_RECORD = ".point.json"
DEFAULT_LAUNCHER = "mpirun --oversubscribe -np {ranks}"
MIN_POINT_SECONDS = 60  # Slurm's time limits are whole minutes


@dataclass(frozen=True)
class SandboxSettings:
    static_checks: bool = True
    runtime_guard: bool = True
    network: str = "auto"
    virtual_memory_overhead_mb: int = 1024

    @classmethod
    def from_config(cls, sim_cfg: dict) -> SandboxSettings:
        cfg = dict(sim_cfg.get("sandbox") or {})
        network = sandbox.network_mode(cfg.get("network", "auto"))
        if network not in {"auto", "require", "off"}:
            raise ValueError(
                f"simulation.sandbox.network is '{network}'; valid: auto, require, off"
            )
        return cls(
            static_checks=bool(cfg.get("static_checks", True)),
            runtime_guard=bool(cfg.get("runtime_guard", True)),
            network=network,
            virtual_memory_overhead_mb=int(cfg.get("virtual_memory_overhead_mb", 1024)),
        )


def resources_for(
    design: SimulationDesign, budget_minutes: float, sim_cfg: dict
) -> tuple[submit.Resources, float, list[str]]:
    """(resources, run timeout in s, notes) from the design's estimate and the plan's budget.

    The run timeout is the stage's budget; for a sweep it is one point's share:
    budget / ceil(points / max_concurrent_jobs), at least a minute, and the
    design's estimate is read as one point's. The Slurm time limit is a minute
    above the run timeout, so the run's own timeout normally fires first.
    """
    est = design.performance_estimate
    notes = []
    max_ranks = int(sim_cfg.get("max_mpi_ranks", 2))
    ranks = min(est.mpi_ranks, max_ranks)
    if ranks < est.mpi_ranks:
        notes.append(f"design asks {est.mpi_ranks} MPI ranks; capped at max_mpi_ranks={max_ranks}")
    factor = float(sim_cfg.get("memory_safety_factor", 2.0))
    lo, hi = sizing.memory_bounds(sim_cfg)
    mem = math.ceil(est.memory_mb * factor)
    if mem > hi:
        notes.append(f"design estimates {est.memory_mb:g} MB; capped at max_memory_mb={hi}")
    mem = granted_memory(max(lo, min(hi, mem)), sim_cfg, notes)
    budget_s = float(budget_minutes) * 60
    timeout_s, share = budget_s, "the plan's budget"
    if design.sweep is not None:
        # The budget is the whole stage's: points run in waves of at most
        # max_concurrent_jobs, and each point gets its wave's share of it.
        points = len(design.sweep.values)
        waves = math.ceil(points / max(1, int(sim_cfg.get("max_concurrent_jobs", 8))))
        timeout_s = max(MIN_POINT_SECONDS, budget_s / waves)
        share = f"one point's share of the {budget_s:g} s budget"
        notes.append(
            f"sweep of {points} points in {waves} wave(s) of max_concurrent_jobs: "
            f"{timeout_s:g} s per point"
            + (f" (at least {MIN_POINT_SECONDS} s)" if timeout_s > budget_s / waves else "")
        )
    if est.runtime_seconds > timeout_s:
        notes.append(
            f"design estimates {est.runtime_seconds:g} s, over {share} of "
            f"{timeout_s:g} s; that is the limit"
        )
    return submit.Resources(ranks, mem, math.ceil(timeout_s / 60) + 1), timeout_s, notes


def sized_resources(
    job: job_size.JobSize, design: SimulationDesign, budget_minutes: float, sim_cfg: dict
) -> tuple[submit.Resources, float, list[str]]:
    """(resources, run timeout in s, notes) from the job's size (reprolab.jobs.job_size):
    its ranks, its memory with the margin (within min/max_memory_mb) and its time limit
    with the margin, never above the plan's budget (`resources_for`: the stage's, a sweep
    point's share), which a run ending on a field decay (its length a guess) keeps. A
    rerun the user granted more time or memory (`rerun_time_factor`,
    `rerun_memory_factor`) has them on the sized figures too. Sized by the agent:
    `resources_for`."""
    planned, plan_timeout, notes = resources_for(design, budget_minutes, sim_cfg)
    if job.source != "design":
        return planned, plan_timeout, notes
    lo, hi = sizing.memory_bounds(sim_cfg)
    mem = math.ceil(job.request["mem_mb"])
    # the agent's guesses, and the plan's memory (sized again below)
    notes = [n for n in notes if not n.startswith(("design ", "rerun granted", "capped at max"))]
    if mem > hi:
        notes.append(f"sized at {mem} MB; capped at max_memory_mb={hi}")
    mem = granted_memory(max(lo, min(hi, mem)), sim_cfg, notes)
    sized_s = job.request["time_min"] * 60.0 * float(sim_cfg.get("rerun_time_factor", 1.0))
    timeout_s = plan_timeout
    if not job.bounded:
        notes.append(f"the run ends on a field decay: its time limit is the plan's {timeout_s:g} s")
    elif sized_s < plan_timeout:
        timeout_s = sized_s
        notes.append(f"time limit {sized_s:g} s: the estimate with its margin")
    notes.append(f"sized from the design: {job.core_seconds:.3g} core-s, {job.memory_mb:.0f} MB")
    res = submit.Resources(job.ranks, mem, math.ceil(timeout_s / 60) + 1)
    return res, timeout_s, notes


def granted_memory(asked_mb: int, sim_cfg: dict, notes: list[str]) -> int:
    """The memory a run asks for after a rerun the user granted "twice the memory"
    (`rerun_memory_factor`): that factor times what the failed run asked, floor and
    all, up to max_memory_mb (a note says when the cap holds it back)."""
    factor = float(sim_cfg.get("rerun_memory_factor", 1.0))
    if factor == 1.0:
        return asked_mb
    hi = sizing.memory_bounds(sim_cfg)[1]
    mem = math.ceil(asked_mb * factor)
    notes.append(f"rerun granted {factor:g}x the memory: {asked_mb} MB -> {min(mem, hi)} MB")
    if mem > hi:
        notes.append(f"capped at max_memory_mb={hi}")
    return min(mem, hi)


def size_and_check(design: SimulationDesign, script, budget_minutes: float, sim_cfg: dict):
    """(job size, resources, run timeout in s, notes); raises job_size.JobTooLarge when
    the request exceeds the partition's limits, so that nothing is submitted."""
    settings = submit.ClusterSettings.from_config(sim_cfg)
    job = job_size.for_stage(design, Path(script).read_text(encoding="utf-8"), sim_cfg)
    resources, timeout_s, notes = sized_resources(job, design, budget_minutes, sim_cfg)
    over_site_memory(job, design, sim_cfg, f"{design.stage_id} ({script})")
    request = {"time_min": resources.time_min, "mem_mb": resources.mem_mb, "ranks": resources.ranks}
    limits = job_size.partition_limits(sim_cfg, settings.partition, settings.executor)
    job_size.check_partition(job, request, limits, f"{design.stage_id} ({script})")
    job.request = {**request, "timeout_s": timeout_s, "sized": job.request}  # what was asked
    return job, resources, timeout_s, notes


def over_site_memory(job: job_size.JobSize, design: SimulationDesign, sim_cfg: dict, where):
    """Raise JobTooLarge (nothing submitted) when the job's own estimate needs more memory
    than `simulation.max_memory_mb`: capped silently, it would run out of memory, or the
    estimate is wrong (2e9 MB was submitted as 8 GB). The user decides: raise the limit,
    take the cap (`simulation.cap_to_limits: true`) or redo the design."""
    hi = sizing.memory_bounds(sim_cfg)[1]
    if job.source == "design":
        needed, source = math.ceil(job.request["mem_mb"]), "sized from the design"
    else:
        factor = float(sim_cfg.get("memory_safety_factor", 2.0))
        needed = math.ceil(design.performance_estimate.memory_mb * factor)
        source = f"the design's estimate x memory_safety_factor {factor:g}"
    if needed <= hi or sim_cfg.get("cap_to_limits"):
        return
    raise job_size.JobTooLarge(
        f"{where}: not submitted: it needs {needed} MB ({source}), over "
        f"simulation.max_memory_mb = {hi}. To go on, either raise simulation.max_memory_mb "
        f"to {needed} or more, or set simulation.cap_to_limits: true to run it with "
        f"{hi} MB, then `reprolab run` again; or redo the design smaller: `reprolab "
        f"invalidate PAPER {design.stage_id} --reason 'memory over the site limit'`."
    )


def declared_cores(design_path: str | Path, sim_cfg: dict) -> int:
    """The cores the simulate rule declares (its `threads:`), so that Snakemake's
    `--cores` accounting sees the ranks its job starts on this machine: the MPI
    ranks, times the sweep points that run at once. On Slurm the rule only waits
    (Slurm allocates the ranks it asks for): 1. Snakemake caps it at --cores, and
    the job then runs no more than that (`local_cap`). 1 while the design is not
    there yet (a dry run before it exists; Snakemake asks again once it is)."""
    if sim_cfg.get("executor", "local") == "slurm":
        return 1
    try:
        design = load_design(design_path).output
    except InputFileError:  # not there yet, or blocked
        return 1
    ranks = max(1, min(design.performance_estimate.mpi_ranks, _max_ranks(sim_cfg)))
    points = len(design.sweep.values) if design.sweep else 1
    return ranks * max(1, min(points, int(sim_cfg.get("max_concurrent_jobs", 8))))


def _max_ranks(sim_cfg: dict) -> int:
    return int(sim_cfg.get("max_mpi_ranks", 2))


def local_cap(sim_cfg: dict) -> tuple[dict, list[str]]:
    """The settings a local job runs with inside the cores its rule was given
    (`job_cores`, set by the simulate step from Snakemake's threads): no more ranks
    than cores, and only as many sweep points at once as fit. The per-point time
    share stays the configured one (`max_concurrent_jobs`): it is a run setting."""
    cores = sim_cfg.get("job_cores")
    if not cores or sim_cfg.get("executor", "local") == "slurm":
        return sim_cfg, []
    cores, notes = max(1, int(cores)), []
    capped = dict(sim_cfg)
    if _max_ranks(sim_cfg) > cores:
        capped["max_mpi_ranks"] = cores
        notes.append(f"max_mpi_ranks {_max_ranks(sim_cfg)} capped at the job's {cores} core(s)")
    free = free_cores() if _max_ranks(capped) > 1 else 1
    if _max_ranks(capped) > free:
        # Ranks beyond the idle cores wait on each other (each rank's turn comes only
        # when its peer's time slice ends): more CPU for the same run, not less time.
        notes.append(
            f"max_mpi_ranks {_max_ranks(capped)} capped at the machine's {free} idle core(s)"
        )
        capped["max_mpi_ranks"] = free
    capped["concurrent_cap"] = cores
    return capped, notes


def free_cores(sample_s: float = 0.25) -> int:
    """Cores this machine leaves idle now (at least 1): its CPU use over `sample_s`."""
    busy = psutil.cpu_percent(interval=sample_s) / 100.0
    count = psutil.cpu_count() or 1
    return max(1, int(count * (1.0 - busy) + 0.25))


def refused_record(problems: list[str], script: Path) -> dict:
    text = "sandbox refused the script before it ran:\n" + "\n".join(f"- {p}" for p in problems)
    record = {
        "command": [],
        "exit_code": None,
        "timed_out": False,
        "runtime_seconds": 0.0,
        "stdout_tail": "",
        "stderr_tail": text,
        "output_files": [],
        "executor": None,
        "job_id": None,
        "script_sha256": sha256_file(script),
        "sandbox_problems": problems,
    }
    record["failure"] = failures.failure("sandbox_refused", "; ".join(problems[:5]), text)
    return record


def _clear_run_folder(folder: Path) -> None:
    """Each attempt starts from an empty run folder: everything an earlier attempt left
    goes (links as links, folders with all they hold), but a sweep's real `points`
    folder, whose points that succeeded with the same script are kept
    (`_kept_point`); in it only the real `pNNN` folders stay."""
    run_files.empty_folder(folder, keep=("points",))
    points = folder / "points"
    if points.is_dir() and not points.is_symlink():
        run_files.empty_folder(points, keep=[Path(p).name for p in run_files.point_folders(folder)])


def job_pending(stage_dir: Path) -> bool:
    """Whether a submitted job of this stage is still to be collected (a waiter that
    died left it: the next run reattaches to it); its run folder is the job's."""
    return (stage_dir / "submitit" / submit.SUBMISSION).is_file()


def run_stage(
    design: SimulationDesign,
    budget_minutes: float,
    sim_cfg: dict,
    script: Path,
    stage_dir: Path,
) -> dict:
    """Run the stage's script (a job, or a job array for a sweep); the result record."""
    sim_cfg, cap_notes = local_cap(sim_cfg)
    settings = submit.ClusterSettings.from_config(sim_cfg)
    box = SandboxSettings.from_config(sim_cfg)
    # Sized and checked against the partition before anything is made or submitted.
    sized, resources, timeout_s, notes = size_and_check(design, script, budget_minutes, sim_cfg)
    workdir = (stage_dir / "run").resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    # Jobs a waiter that died left running or finished are waited on, not resubmitted.
    attached = submit.reattach(stage_dir / "submitit", sha256_file(script), settings.round)
    if attached[0] and design.sweep is None:
        sims, jobs, resources, _ = attached
        record = submit.wait_and_finish(sims, jobs, settings, resources, stage_dir / "submitit")[0]
        return {**record, "reattached": True, "job_size": job_size.beside_actual(sized, record)}
    # Only this run's files may be judged: clear what an earlier attempt left, but not
    # under the sweep points a waiter that died left running (their workers' folders).
    if not attached[0]:
        _clear_run_folder(workdir)
    target = workdir / "simulation.py"
    target.unlink(missing_ok=True)  # a new file, never written through a planted link
    target.write_bytes(Path(script).read_bytes())
    if box.static_checks:
        problems = sandbox.static_problems(target.read_text(encoding="utf-8"))
        if problems:
            return refused_record(problems, target)
    notes = cap_notes + notes
    if sim_cfg.get("concurrent_cap"):
        # Only as many points at once as the rule's declared cores hold.
        fit = max(1, int(sim_cfg["concurrent_cap"]) // resources.ranks)
        settings = dataclasses.replace(settings, max_concurrent=min(settings.max_concurrent, fit))
    base, net_note = job_fields(sim_cfg, box, settings, resources, timeout_s, target)
    if design.sweep is None:
        job = launch.SimulationJob(workdir=str(workdir), **base)
        record = submit.submit_all([job], settings, resources, stage_dir / "submitit")[0]
    else:
        record = run_sweep(design, base, settings, resources, workdir, stage_dir, attached)
    record.update(
        {
            "network_note": net_note,
            "resource_notes": notes,
            "performance_estimate": design.performance_estimate.model_dump(),
            "budget_minutes": budget_minutes,
            "job_size": job_size.beside_actual(sized, record),
        }
    )
    return record


def job_fields(sim_cfg: dict, box: SandboxSettings, settings, resources, timeout_s, target):
    """(the SimulationJob fields of a run of `target` but its folder, the network note):
    launcher, ranks, limits, sandbox."""
    launcher = sim_cfg.get("mpi_launcher", DEFAULT_LAUNCHER)
    isolate, net_note = sandbox.network_plan(
        box.network, resources.ranks > 1 and launcher.split()[0] == "srun"
    )
    if resources.ranks == 1 and settings.executor == "slurm" and box.network != "off":
        # One rank still initialises MPI (singleton); a namespace with loopback works.
        isolate, net_note = sandbox.network_plan(box.network, False)
    base = dict(
        script=str(target),
        mpi_ranks=resources.ranks,
        timeout_s=timeout_s,
        mpi_launcher=launcher,
        memory_mb=(resources.mem_mb // resources.ranks + box.virtual_memory_overhead_mb)
        if box.runtime_guard
        else 0,
        # the watchdog's cap is the request itself: the headroom is the address space's
        resident_mb=resources.mem_mb // resources.ranks if box.runtime_guard else 0,
        sandbox=box.runtime_guard,
        isolate_network=isolate,
        **sandbox.job_settings(sim_cfg),
    )
    return base, net_note


def point_dir(workdir: Path, index: int) -> Path:
    return workdir / "points" / f"p{index:03d}"


def run_sweep(design, base, settings, resources, workdir, stage_dir, attached=None) -> dict:
    sweep = design.sweep
    script_sha = sha256_file(base["script"])
    records: list[dict | None] = []
    jobs, todo = [], []
    waiting = _reattached_points(design, workdir, settings, stage_dir, attached)
    for i, value in enumerate(sweep.values):
        pdir = point_dir(workdir, i)
        kept = waiting.get(i) or _kept_point(pdir, script_sha, value)
        records.append(kept)
        if kept is not None:
            continue
        if pdir.is_dir() and not pdir.is_symlink():
            shutil.rmtree(pdir)
        # Made without following a link, and the script a new file: never written
        # outside the run folder through a `points` link an earlier run planted.
        run_files.make_real_dir(workdir, pdir.relative_to(workdir).as_posix())
        script = pdir / "simulation.py"
        run_files.create_run_file(pdir, "simulation.py", Path(base["script"]).read_bytes())
        env = (
            ("REPROLAB_SWEEP_INDEX", str(i)),
            ("REPROLAB_SWEEP_PARAMETER", sweep.parameter),
            ("REPROLAB_SWEEP_VALUE", json.dumps(value)),
        )
        label = f"point {i} ({sweep.parameter}={value})"
        jobs.append(
            launch.SimulationJob(
                **{**base, "script": str(script)}, workdir=str(pdir), env=env, label=label
            )
        )
        todo.append(i)
    if jobs:
        est = design.performance_estimate.runtime_seconds
        fresh = _run_points(jobs, todo, settings, resources, workdir, stage_dir, est)
        for i, rec in zip(todo, fresh, strict=True):
            rec.update(index=i, value=sweep.values[i], reused=False)
            atomic_write_json(point_dir(workdir, i) / POINT_RECORD, rec)
            records[i] = rec
    return gather(design, [r for r in records if r is not None], workdir)


def _run_points(jobs, todo, settings, resources, workdir: Path, stage_dir: Path, est_s=0.0):
    """The points' records in order. Points of one rank run packed (reprolab.jobs.packed:
    a few long-lived workers, Meep imported once per worker): locally one worker per
    core the job was given, on Slurm one array task per worker, as many as the points'
    estimated runtime (`est_s` each) and the limits call for. Points of several ranks
    run one job (array task) each."""
    if not packed.packable(jobs):
        return submit.submit_all(jobs, settings, resources, stage_dir / "submitit")
    count = settings.max_concurrent
    if settings.executor == "slurm":
        count = packed.worker_count(len(jobs), est_s, jobs[0].timeout_s, settings)
    workers = packed.plan_workers(list(zip(todo, jobs, strict=True)), count)
    # Inside the points folder: its HOME and caches lie where the worker may write.
    dirs = [str(workdir / "points" / f".w{k}") for k in range(len(workers))]
    found = packed.submit_packed(
        [[job for _, job in w] for w in workers], dirs, settings, resources, stage_dir / "submitit"
    )
    return _by_point(workers, found, todo)


def _by_point(workers, found, todo) -> list[dict]:
    """The workers' records in the points' order, each naming its worker."""
    by_index = {
        i: rec
        for w, recs in zip(workers, found, strict=True)
        for (i, _), rec in zip(w, recs, strict=True)
    }
    for k, w in enumerate(workers):
        for i, _ in w:
            by_index[i]["sandbox"] = {**(by_index[i].get("sandbox") or {}), "worker": k}
    return [by_index[i] for i in todo]


def _reattached_points(design, workdir: Path, settings, stage_dir: Path, attached) -> dict:
    """The points whose jobs a waiter that died left behind: waited on and collected
    (each index's record), so that only the points still missing are submitted."""
    sims, jobs, resources, sizes = attached or ([], [], None, None)
    if not sims:
        return {}
    index = {str(point_dir(workdir, i)): i for i in range(len(design.sweep.values))}
    folder = stage_dir / "submitit"
    if sizes:  # a packed sweep: a job per worker, its points in order
        pairs = packed.reattached(sims, jobs, sizes, settings, resources, folder)
    else:
        mine = [(sim, job) for sim, job in zip(sims, jobs, strict=True) if sim.workdir in index]
        if not mine:
            return {}
        recs = submit.wait_and_finish(
            [m[0] for m in mine], [m[1] for m in mine], settings, resources, folder
        )
        pairs = [(m[0], rec) for m, rec in zip(mine, recs, strict=True)]
    found_at = {}
    for sim, rec in pairs:
        i = index.get(sim.workdir)
        if i is None:
            continue
        rec.update(index=i, value=design.sweep.values[i], reused=False, reattached=True)
        atomic_write_json(point_dir(workdir, i) / POINT_RECORD, rec)
        found_at[i] = rec
    return found_at


def _kept_point(pdir: Path, script_sha: str, value) -> dict | None:
    try:
        rec = run_files.read_run_json(pdir, POINT_RECORD)
    except (OSError, ValueError, InputFileError):
        return None
    if not isinstance(rec, dict):
        return None
    if rec.get("failure") or rec.get("script_sha256") != script_sha or rec.get("value") != value:
        return None
    return {**rec, "reused": True}


def gather(design: SimulationDesign, records: list[dict], workdir: Path) -> dict:
    """One stage record from the points' records; CSV outputs concatenated in point order."""
    sweep = design.sweep
    failed = [r for r in records if r.get("failure")]
    problems = _concatenate_csv_outputs(design, records, workdir, write=not failed)
    head = records[0] if records else {}
    # A kept point keeps its original runtime: the record says what the results cost,
    # and which points were reused rather than run again.
    reused = [r["index"] for r in records if r.get("reused")]
    runtime = sum(r.get("runtime_seconds") or 0 for r in records)
    fresh = sum(r.get("runtime_seconds") or 0 for r in records if not r.get("reused"))
    return {
        "command": head.get("command"),
        "exit_code": next((r.get("exit_code") for r in failed), 0) if records else None,
        "timed_out": any(r.get("timed_out") for r in records),
        "runtime_seconds": round(runtime, 3),
        "runtime_seconds_this_run": round(fresh, 3),
        "reused_points": reused,
        "reused": bool(records) and len(reused) == len(records),
        "stdout_tail": "\n".join(
            f"--- {r.get('label')}\n{r.get('stdout_tail', '')[-300:]}" for r in records
        )[-launch.TAIL_CHARS :],
        "stderr_tail": _failed_tails(failed)[-launch.TAIL_CHARS :],
        "output_files": launch.collect_outputs(workdir, "simulation.py"),
        "executor": head.get("executor"),
        "job_id": head.get("array_job_id") or head.get("job_id"),
        "array_job_id": head.get("array_job_id"),
        "mpi_ranks": head.get("mpi_ranks"),
        "timeout_s": head.get("timeout_s"),
        "resources": head.get("resources"),
        "script_sha256": head.get("script_sha256"),
        "sweep": {
            "parameter": sweep.parameter,
            "values": sweep.values,
            "failed_points": [r["index"] for r in failed],
            "gather_problems": problems,
        },
        "points": [_point_summary(r) for r in records],
        "failure": _sweep_failure(sweep, records, failed),
    }


def _concatenate_csv_outputs(
    design: SimulationDesign, records: list[dict], workdir: Path, write: bool
) -> list[str]:
    """Each CSV output over the points, in point order, into `workdir` when `write`.

    Returns the problems: points whose header differs from the first point's.
    """
    problems = []
    for spec in design.output_specifications:
        if not spec.file.endswith(".csv"):
            continue
        header, rows, mismatches = _csv_rows(spec.file, records, workdir)
        problems += mismatches
        if header is not None and write:
            text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
            atomic_write_text(workdir / spec.file, text)
    return problems


def _csv_rows(
    name: str, records: list[dict], workdir: Path
) -> tuple[list[str] | None, list[list[str]], list[str]]:
    """(header, data rows, header mismatches) of one CSV output over the succeeded points."""
    header, rows, mismatches = None, [], []
    for rec in records:
        pdir = point_dir(workdir, rec["index"])
        if rec.get("failure") or run_files.size_of(pdir, name) is None:
            continue
        try:
            lines = run_files.read_run_csv(pdir, name)
        except (ValueError, InputFileError) as exc:
            mismatches.append(f"point {rec['index']}: {name} not read: {exc}")
            continue
        if not lines:
            continue
        if header is None:
            header = lines[0]
        elif lines[0] != header:
            mismatches.append(
                f"point {rec['index']}: {name} header {lines[0]} differs from {header}"
            )
            continue
        rows += [row for row in lines[1:] if row]
    return header, rows, mismatches


def _point_summary(rec: dict) -> dict:
    """What the stage record keeps of one point's record."""
    return {
        "index": rec["index"],
        "value": rec["value"],
        "label": rec.get("label"),
        "job_id": rec.get("job_id"),
        "exit_code": rec.get("exit_code"),
        "runtime_seconds": rec.get("runtime_seconds"),
        "started_at": rec.get("started_at"),
        "reused": rec.get("reused", False),
        "failure": rec.get("failure"),
        "mpi": rec.get("mpi"),
        "slurm_env": rec.get("slurm_env"),
        "hostname": rec.get("hostname"),
        # What the point used (job_size.actual_use): its ranks' report, else the watchdog's.
        "rank_usage": rec.get("rank_usage") or [],
        "time_limit": rec.get("time_limit"),
        "sandbox": {"peak_resident_mb": (rec.get("sandbox") or {}).get("peak_resident_mb")},
    }


def _sweep_failure(sweep, records: list[dict], failed: list[dict]) -> dict | None:
    """The stage's failure: the first failed point's, summarising which points failed."""
    if not failed:
        return None
    first = failed[0]["failure"]
    which = ", ".join(f"point {r['index']} ({sweep.parameter}={r['value']})" for r in failed)
    return {
        **first,
        "summary": f"{len(failed)} of {len(records)} sweep points failed: {which}. "
        f"First: {first['summary']}. Rerunning the rule resubmits only these points.",
        "failed_points": [r["index"] for r in failed],
    }


def _failed_tails(failed: list[dict]) -> str:
    """Each failed point's failure summary and the end of its stderr."""
    return "\n".join(
        f"--- {r.get('label')}: {r['failure']['summary']}\n{r.get('stderr_tail', '')[-800:]}"
        for r in failed
    )
