"""A stage's script run again with other scale variables (the convergence step's coarser
runs), several runs in one sandboxed process where they can share one.

`run_variants(design, budget_minutes, sim_cfg, script, runs, shared_dir)` takes `runs`,
a list of (folder, env): each run's folder (its run folder is `<folder>/run`, as
`reprolab.jobs.stage_run.run_stage` makes it) and the scale variables it exports
(`job_size.SCALE_ENVS`; those not named are "1"). It returns each run's record in
order, the same fields `run_stage` returns for that folder with that environment: its
exit, failure, time limit, its own CPU and peak (`rank_usage`), outputs, MPI and
as-built records, its own job size beside its use. Nothing is written beside the runs
but `shared_dir` (the worker's folder and the job's logs).

Runs of one rank in the OS sandbox with the runtime guard, of a stage without a sweep,
go through one packed worker (`reprolab.jobs.packed`): one interpreter and one
`import meep` for all of them (about 0.7 core-s each saved on a small 2D stage, where
the run itself costs a few), each still sized, timed and limited on its own; a run that
raises, is stopped by its limit or takes the worker down is recorded so and the runs
after it go on (in a fresh worker when it died). Other runs (several ranks, a sweep:
its points are packed already, no sandbox) run one `run_stage` each. A submission a
waiter that died left behind is not reattached to here: the runs start again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path

from reprolab import run_files
from reprolab.jobs import job_size, packed, sandbox, stage_run, submit
from reprolab.jobs.launch import SimulationJob

SCALE_DEFAULT = "1"


@contextlib.contextmanager
def exported(env: dict):
    """This process's environment with the scale variables of `env` (the others at 1):
    what sizing reads and a run of its own inherits."""
    saved = {k: os.environ.get(k) for k in point_env(env)}
    os.environ.update(point_env(env))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def point_env(env: dict) -> dict:
    """Every scale variable a run sees: `env`'s, the others at 1 (a packed worker keeps
    what the run before set, so each run names them all)."""
    return {**{k: SCALE_DEFAULT for k in job_size.SCALE_ENVS}, **env}


def run_variants(design, budget_minutes: float, sim_cfg: dict, script, runs, shared_dir) -> list:
    """Each (folder, env) run's record, in order (see the module's docstring)."""
    capped, cap_notes = stage_run.local_cap(sim_cfg)
    box = stage_run.SandboxSettings.from_config(capped)
    sized = []
    for _folder, env in runs:
        with exported(env):  # sized as the run will mesh: the script reads the scales
            sized.append(stage_run.size_and_check(design, script, budget_minutes, capped))
    one_rank = all(s[1].ranks == 1 for s in sized)
    jobs = [sandbox.job_settings(capped)["isolation"] == "bwrap", box.runtime_guard]
    if design.sweep is not None or not one_rank or not all(jobs) or len(runs) < 2:
        return [_alone(design, budget_minutes, sim_cfg, script, f, env) for f, env in runs]
    return _packed(
        design, budget_minutes, (capped, cap_notes, box), script, runs, sized, shared_dir
    )


def _alone(design, budget_minutes, sim_cfg, script, folder, env) -> dict:
    with exported(env):
        return stage_run.run_stage(design, budget_minutes, sim_cfg, Path(script), Path(folder))


def _packed(design, budget_minutes, cfg, script, runs, sized, shared_dir) -> list:
    """The runs through one packed worker (a refused script is refused for each run)."""
    sim_cfg, cap_notes, box = cfg
    settings = submit.ClusterSettings.from_config(sim_cfg)
    records: list[dict | None] = [None] * len(runs)
    jobs, todo = [], []
    for i, ((folder, env), (size, res, timeout_s, notes)) in enumerate(
        zip(runs, sized, strict=True)
    ):
        workdir = _fresh_run_folder(Path(folder), Path(script))
        target = workdir / "simulation.py"
        if box.static_checks:
            problems = sandbox.static_problems(target.read_text(encoding="utf-8"))
            if problems:
                records[i] = _finished(stage_run.refused_record(problems, target), size)
                continue
        base, net_note = stage_run.job_fields(sim_cfg, box, settings, res, timeout_s, target)
        label = ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "the run's scales"
        job = SimulationJob(
            **base, workdir=str(workdir), env=tuple(point_env(env).items()), label=label
        )
        jobs.append(job)
        todo.append((i, size, res, cap_notes + notes, net_note))
    if jobs:
        shared = Path(shared_dir).resolve()  # bound in the sandbox: an absolute path
        shared.mkdir(parents=True, exist_ok=True)
        worker = run_files.make_real_dir(shared, "worker")
        run_files.empty_folder(worker)
        # The job's request holds the largest run (the record's `resources`: what the
        # scheduler gave the worker); each run keeps its own limits and size.
        whole = max((t[2] for t in todo), key=lambda r: r.mem_mb)
        settings = dataclasses.replace(settings, max_concurrent=1)
        found = packed.submit_packed([jobs], [str(worker)], settings, whole, shared / "submitit")
        for (i, size, _res, notes, net_note), rec in zip(todo, found[0], strict=True):
            rec.update(network_note=net_note, resource_notes=notes)
            rec["packed_worker"] = {"folder": str(worker), "runs": len(jobs)}
            records[i] = _finished(rec, size, design, budget_minutes)
    return records


def _fresh_run_folder(folder: Path, script: Path) -> Path:
    """`<folder>/run`, emptied of what an earlier attempt left, with the script in it
    (a new file: never written through a link a run planted)."""
    workdir = (folder / "run").resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    run_files.empty_folder(workdir)
    run_files.create_run_file(workdir, "simulation.py", script.read_bytes())
    return workdir


def _finished(record: dict, size, design=None, budget_minutes=None) -> dict:
    if design is not None:
        record.update(
            performance_estimate=design.performance_estimate.model_dump(),
            budget_minutes=budget_minutes,
        )
    record["job_size"] = job_size.beside_actual(size, record)
    return record
