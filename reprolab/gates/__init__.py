"""Human gates: the one request/decision protocol, the material checkpoint, the consent log.

`protocol` is the `Checkpoint` request and the `Decision` answer (bound by
sha256), writing a request, reading and validating an answer, waiting; `material`
builds the material checkpoint's request from stage 0's files; `consent` appends
what a person (or the configured auto-approval) decided to
`user_interactions.jsonl` and records invalidations; `clarify` asks the questions an agent
raised, one gate per round. To add a gate kind, add it to `protocol.GateKind` (the
closed set), build a `Checkpoint` of that kind in the step that asks, resolve it with
`protocol.resolve_gate` and log the answer with `consent.log_interaction`.

May import: the ground floor (`reprolab.errors`, `events`, `fileio`, `paper`) and
`reprolab.physics`; never the run context (`artifacts`, `settings`), `agents` or
anything above (the rooms table in docs/architecture.md is the rule).
"""
