"""Rendering what the pipeline found: markdown sections, the HTML page, the plots.

`markdown` builds the report's sections from the files (tables, figures side by
side, checks, convergence, history, cost); `html` turns the markdown into one
self-contained page (images inlined, no scripts, no network); `plots` draws the
overlays (matplotlib, loaded only where a plot is drawn); `security` says how
generated code was isolated and lists passages flagged in the paper. The report step in
`reprolab.steps.report` decides what goes in and in what order.

May import: the ground floor (`reprolab.fileio`, `paper`), `reprolab.physics`
(thresholds, reading data files), `reprolab.gates`, `agents` (the ledger) and the
run context. Never `reprolab.steps`, `jobs` or `cli` (the rooms table in
docs/architecture.md is the rule).
"""
