"""Running generated simulation code: resources, the sandbox, submitit and Slurm.

`stage_run` turns a stage's design into one job or a job array (sweeps) and
gathers the records; `submit` sends them through submitit (local subprocess or
Slurm) and waits, cancelling what can never run; `launch` is what runs on the
worker (MPI launcher, scrubbed environment, captured logs); `sandbox_run` is the
entry point of every MPI rank; `bwrap` puts every rank behind the OS boundary
(bubblewrap) and `limits` holds the process tree to its memory, processes, disk and
time; `sandbox` refuses scripts statically and guards them at run time;
`failures` names every way a job can fail and what to do; `font_cache` copies
matplotlib's font list into each run so no run scans the fonts again.

May import: the ground floor (`reprolab.errors`, `fileio`), `reprolab.physics`,
the run context, submitit, and `agents.simulation_designer` for the design's type.
Never `reprolab.steps`, `gates` or `report` (the rooms table in
docs/architecture.md is the rule).
"""
