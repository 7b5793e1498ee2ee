"""ReproLab: staged reproduction of computational-photonics papers with Meep.

Rooms, from the top down (each subpackage's docstring says what it may import):

- `cli`: the `reprolab` command (status, approve/reject/edit, invalidate).
- `steps`: what the workflow scripts call, one module per step family.
- `physics`, `jobs`, `gates`, `report`: checks and thresholds; running the
  simulations; the human gates and the consent log; rendering the report.
- the core, used by all of them: `artifacts` (typed readers of the pipeline's
  files), `errors`, `events`, `fileio`, `knowledge`, `paper`, `settings`, and
  `smk` (the bridge from a Snakemake script to a step).

No module imports one above it; `tests/test_architecture.py` checks it.
"""

__version__ = "0.1.0"
