"""The pipeline's steps: what the workflow scripts call, one module per step family.

`plan` (prompt adaptation, the plan), `design`, `code`, `run` (the simulate step
with its repair loop; `run_failures` for what the cluster stopped), `checks`,
`validate`, `compare` (`visual`: figures without digitized data), `analyze`,
`verdict` and `backtrack` (supervisor decisions), `material` (the material gate),
`convergence`, `debug` (quick-check mode) and `report`; `review` is the author ⇄ reviewer loop
the plan, design and code share, `eligibility` and `blocking` decide and record
that a stage may not run, `static` applies the lint to a stage.

May import: every room but `cli` (`reprolab.physics`, `jobs`, `gates`,
`report`, the run context `artifacts`, `settings`, `smk`, the ground floor and
`agents`; the rooms table in docs/architecture.md is the rule). Nothing below imports
this package: the steps are the top of the library, under only the workflow
scripts and the CLI.
"""
