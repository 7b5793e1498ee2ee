"""ReproLab: staged reproduction of computational-photonics papers with Meep.

Rooms, from the top down (docs/architecture.md's rooms table is the rule, and
`tests/test_architecture.py` checks every import against it):

- `cli`: the `reprolab` command (status, approve/reject/edit, invalidate).
- `steps`: what the workflow scripts call, one module per step family.
- `report` and `jobs`: rendering the report; running the simulations.
- the run context: `settings` (the run's settings, the loop limits), `artifacts`
  (typed readers of the pipeline's files) and `smk` (the bridge from a Snakemake
  script to a step).
- `agents` (beside this package): the agents and the calling machinery.
- `gates`: the human gates and the consent log; `physics`: checks and thresholds.
- the ground floor, used by all of them: `errors`, `units`, `fileio`, `events`,
  `run_files`, `secret_env`, `paper_format`, `paper_results`, `paper`, `knowledge`.

No module imports one above it.
"""

__version__ = "0.1.0"
