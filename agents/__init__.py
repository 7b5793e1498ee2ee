"""The agent layer: one module per agent role, its output model and its context.

`registry` lists every agent once (name, output model, prompt, what it reviews);
the runner, the config schema's agent names and `reprolab check-recordings` read it.
`runner` calls one agent; `providers`, `llm_providers`, `cache`, `ledger`,
`session`, `prompts`, `context_window` and `untrusted` are its machinery;
`context_gate` and `output_gate` open gates when a prompt overflows or an answer
stays invalid.

May import: the ground floor (`reprolab.errors`, `events`, `fileio`),
`reprolab.physics` (the thresholds a prompt shows) and `reprolab.gates`; never the
run context (`reprolab.settings`, `artifacts`) or anything above (the rooms table in
docs/architecture.md is the rule).
"""
