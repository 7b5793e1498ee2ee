"""What code knows about the physics: thresholds, checks, lint, comparison, convergence.

`thresholds` holds every canonical number (classification bands, check limits);
`checks` judges a run's record and output files; `lint` reads a design and its
generated code before anything runs; `compare` measures a reproduced curve
against the paper's digitized one; `convergence` compares a run with its 2x-resolution
(and, for resonances, 2x-PML) rerun and judges whether it moved. To add a check,
add it to `checks` (run time) or `lint` (static) with its threshold in `thresholds`.

May import: the ground floor (`reprolab.errors`, `fileio`, `knowledge`, `units`)
and numpy. Never the run context, `jobs`, `gates`, `report` or `agents`: these
are pure functions of data, testable without a pipeline (the rooms table in
docs/architecture.md is the rule).
"""
