"""What `reprolab status|approve|reject|edit|invalidate` do, on the files alone.

Everything is read from (and written to) the paper's results folder; nothing
here starts Snakemake. Answers are written atomically as a valid Decision for
the gate's current sha256, so the next run of the same command picks them up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from pathlib import Path

from reprolab.artifacts import load_plan, load_result, load_verdict, plan_stage_ids
from reprolab.errors import GateError, InputFileError, ReproLabError
from reprolab.fileio import atomic_write_json, read_json, read_model, validate_as
from reprolab.gates import consent, material, protocol
from reprolab.paper import strict_json

STAGE_FILES = ("verdict.json", "result.json", "design.json")


def add_commands(sub) -> None:
    def with_config(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--configfile", default="config/config.yaml", help="the run's config file")
        return p

    status = with_config(sub.add_parser("status", help="stages, pending gates, cost, runtime"))
    status.add_argument("paper", nargs="?", help="one paper_id (default: every paper)")
    for action in ("approve", "reject", "edit"):
        p = with_config(sub.add_parser(action, help=f"{action} a pending gate"))
        p.add_argument("paper", help="the paper_id, as `reprolab status` lists it")
        p.add_argument("gate", help="gate id, as `reprolab status` lists it")
        p.add_argument("--note", default="", help="your reasons (a reject's feedback)")
        if action == "approve":
            p.add_argument("--verdict", help="material checkpoint only (default: approve)")
        if action == "reject":
            p.add_argument(
                "--verdict",
                help="material checkpoint: change_database, change_material or need_help",
            )
        if action == "edit":
            p.add_argument("--file", required=True, help="JSON file with your version")
    ans = with_config(
        sub.add_parser("answer", help="answer a pending gate with one of its options")
    )
    ans.add_argument("paper", nargs="?", help="paper_id (default: walk every open gate)")
    ans.add_argument("gate", nargs="?", help="gate id, as `reprolab status` lists it")
    ans.add_argument("option", nargs="?", help="the option chosen (status lists them)")
    ans.add_argument("--note", default="", help="your reasons (a reject's feedback)")
    ans.add_argument("--file", help="edit: JSON file with your version")
    ans.add_argument("--model", help="larger_model: the model to use for this agent")
    ans.add_argument("--window", type=int, help="larger_model: its context window in tokens")
    inv = with_config(sub.add_parser("invalidate", help="redo a stage and its dependents"))
    inv.add_argument("paper", help="the paper_id")
    inv.add_argument("stage", help="the stage_id, as `reprolab status` lists it")
    inv.add_argument("--reason", required=True, help="why it is redone (kept in the log)")


RUN_MARKER = Path(".snakemake") / "reprolab_run.json"
"""Written by `reprolab run` and `reprolab demo` while their Snakemake runs: its config."""


@contextlib.contextmanager
def run_in_progress(configfile: str):
    """Say, while the pipeline runs, which config it runs (`reprolab status` reads it)."""
    atomic_write_json(
        RUN_MARKER, {"configfile": configfile, "pid": os.getpid(), "started": time.time()}
    )
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if json.loads(RUN_MARKER.read_text(encoding="utf-8")).get("pid") == os.getpid():
                RUN_MARKER.unlink()


def running_config_line(configfile: str) -> str:
    """One line naming the config of the run in progress, and how to see its papers when
    this status reads another config; '' when no `reprolab run` or `demo` runs."""
    try:
        marker = json.loads(RUN_MARKER.read_text(encoding="utf-8"))
        pid, running = int(marker["pid"]), str(marker["configfile"])
        os.kill(pid, 0)  # alive (a killed run's marker is stale)
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if Path(running).resolve() == Path(configfile).resolve():
        return f"a run in progress (pid {pid}) uses {running}"
    return (
        f"a run in progress (pid {pid}) uses {running}; this shows {configfile}'s papers: "
        f"reprolab status --configfile {running}"
    )


def paper_out(config: dict, paper_id: str) -> Path:
    from reprolab.settings import paper_entries

    papers = paper_entries(config)
    if paper_id not in papers:
        raise ReproLabError(f"unknown paper '{paper_id}' (config papers: {sorted(papers)})")
    return Path(config.get("outputs_dir", "outputs")) / paper_id


def run_command(args, config: dict) -> int:
    if args.command == "status":
        running = running_config_line(args.configfile)
        print((running + "\n" if running else "") + status_text(config, args.paper))
        return 0
    if args.command == "answer" and not (args.paper and args.gate):
        return answer_walk(config, args.paper)
    out = paper_out(config, args.paper)
    if args.command == "invalidate":
        return invalidate(out, args.stage, args.reason)
    if args.command == "answer":
        return answer_option(out, args)
    return answer(out, args)


def answer_option(out: Path, args) -> int:
    """`reprolab answer PAPER GATE OPTION`: a choice gate's option, or an action of any
    other gate (approve, reject, edit)."""
    cp = find_gate(out, args.gate)
    if not cp.choices:
        if args.option not in cp.actions:
            raise GateError(f"gate '{cp.gate_id}' is answered with one of {cp.actions}")
        return answer(out, argparse.Namespace(**{**vars(args), "command": args.option}))
    if args.option not in cp.choices:
        raise GateError(
            f"gate '{cp.gate_id}': option {args.option!r} is not offered (valid: {cp.choices})"
        )
    decision = {
        "action": "approve",
        "option": args.option,
        "sha256": cp.sha256,
        "note": args.note,
        "paper_id": cp.paper_id,
        "gate_id": cp.gate_id,
        "nonce": cp.nonce,
    }
    if args.option == "larger_model":
        if not args.model or not args.window:
            raise GateError("larger_model needs --model NAME and --window TOKENS")
        decision["revised_data"] = {"model": args.model, "context_window_tokens": args.window}
    validate_as(protocol.Decision, decision, "the answer")
    target = protocol.gate_decision_path(out, cp.gate_id)
    atomic_write_json(target, decision)
    print(f"reprolab: wrote {target}; run the same snakemake command again to go on.")
    return 0


def answer_walk(config: dict, only: str | None) -> int:
    """Interactive: every open gate in turn, its question and options; an empty line skips."""
    from reprolab.settings import paper_entries

    for paper_id in [only] if only else sorted(paper_entries(config)):
        out = paper_out(config, paper_id)
        for cp in protocol.pending_gates(out):
            print(f"\n{paper_id} {cp.gate_id} ({cp.kind.value}): {cp.question}")
            for option in cp.options:
                print(f"  - {option}")
            valid = cp.choices or cp.actions
            choice = input(f"answer ({' | '.join(valid)}; empty skips): ").strip()
            if not choice:
                continue
            note = input("note (optional; a reject needs one): ").strip()
            extra = {"file": None, "model": None, "window": None}
            if choice == "edit":
                extra["file"] = input("JSON file with your version: ").strip()
            if choice == "larger_model":
                extra["model"] = input("model: ").strip()
                extra["window"] = int(input("its context window (tokens): ").strip())
            answer_option(
                out,
                argparse.Namespace(gate=cp.gate_id, option=choice, note=note, **extra),
            )
    return 0


def running_jobs(sd: Path) -> str | None:
    """'simulating: Slurm job 12 RUNNING 00:01:05, ...' while the stage's jobs are
    submitted and not yet collected (one scontrol call for all of them)."""
    from reprolab.jobs import submit

    path = sd / "submitit" / submit.SUBMISSION
    try:
        job_ids = json.loads(path.read_text(encoding="utf-8"))["job_ids"]
    except (OSError, ValueError, KeyError):
        return None
    states = submit.slurm_states(job_ids)
    jobs = [
        f"{j} {states.get(j, {}).get('JobState', 'unknown')} {states.get(j, {}).get('RunTime', '')}"
        for j in job_ids
    ]
    return "simulating: Slurm job " + ", ".join(j.strip() for j in jobs)


def local_running(sd: Path) -> str | None:
    """'simulating: local job 1234, running 1m05s, Meep progress: ...' while it runs."""
    from reprolab.cli.progress import running_simulation

    running = running_simulation(sd)
    return f"simulating: {running}" if running else None


def stage_line(out: Path, stage_id: str) -> str:
    sd = out / "stages" / stage_id
    verdict = sd / "verdict.json"
    running = running_jobs(sd) or local_running(sd)
    if running:
        state = running
    elif verdict.is_file():
        v = load_verdict(verdict)
        state = f"{v.status}: {v.reason}"
        inv = sd / "invalidation.json"
        if inv.is_file() and inv.stat().st_mtime > verdict.stat().st_mtime:
            state = (
                "invalidated (reruns on the next run): " + read_json(inv)["records"][-1]["reason"]
            )
    elif (sd / "result.json").is_file():
        state = "simulated; checks/analysis pending"
    elif (sd / "design.json").is_file():
        state = "designed; code/simulation pending"
    else:
        state = "not started"
    return f"  {stage_id:<32} {state}"


def invalidated(out: Path, stage_id: str) -> bool:
    """Marked to be redone and not redone since."""
    sd = out / "stages" / stage_id
    inv, verdict = sd / "invalidation.json", sd / "verdict.json"
    return inv.is_file() and (
        not verdict.is_file() or inv.stat().st_mtime > verdict.stat().st_mtime
    )


def stage_lines(out: Path, stages: list[str]) -> list[str]:
    """One line per stage; a stage downstream of an invalidated one is never shown as
    completed (it is redone when its dependency is)."""
    deps = (
        {s.stage_id: s.dependencies for s in load_plan(out / "plan.json").stages} if stages else {}
    )
    stale: set[str] = set()
    lines = []
    for stage_id in stages:
        upstream = [d for d in deps.get(stage_id, []) if d in stale or invalidated(out, d)]
        if invalidated(out, stage_id) or upstream:
            stale.add(stage_id)
        if upstream and not invalidated(out, stage_id):
            lines.append(
                f"  {stage_id:<32} out of date: waits for invalidated {', '.join(upstream)}"
            )
        else:
            lines.append(stage_line(out, stage_id))
    return lines


def runtime_s(out: Path) -> float:
    total = 0.0
    for path in (out / "stages").glob("*/result.json"):
        total += load_result(path).runtime_seconds or 0.0
    return total


def status_text(config: dict, only: str | None = None) -> str:
    from reprolab.settings import paper_entries

    papers = paper_entries(config)
    if only is not None and only not in papers:
        raise ReproLabError(f"unknown paper '{only}' (config papers: {sorted(papers)})")
    lines = []
    for paper_id in [only] if only else papers:
        out = Path(config.get("outputs_dir", "outputs")) / paper_id
        lines.append(f"{paper_id}  ({out})")
        stages = plan_stage_ids(out / "plan.json")
        lines += stage_lines(out, stages) or ["  no plan yet"]
        pending = protocol.pending_gates(out)
        for cp in pending:
            lines.append(f"  WAITING: {cp.gate_id} ({cp.kind.value}) - {cp.question}")
            refused = protocol.refused_answer(cp)
            if refused:
                lines.append(f"    ANSWER REFUSED: {refused}")
            if cp.choices or "approve" not in cp.actions:
                lines += [f"      - {o}" for o in cp.options]
                lines.append(f"    answer: {protocol.answer_command(cp)}")
                continue
            lines.append(f"    answer: reprolab approve {paper_id} {cp.gate_id}")
            others = [a for a in cp.actions if a != "approve"]
            if others:
                lines.append(
                    "        or: "
                    + " | ".join(
                        f"reprolab {a} {paper_id} {cp.gate_id}"
                        + (" --file my.json" if a == "edit" else " --note '...'")
                        for a in others
                    )
                )
            lines.append(f"    or write {cp.answer_file}: {json.dumps(cp.answer_example)}")
        history = history_counts(out)
        if history:
            lines.append("  so far: " + "; ".join(history))
        cost = out / "cost_summary.json"
        total = read_json(cost)["total"] if cost.is_file() else {}
        spent = total.get("cost_text") or f"${total.get('cost_usd', 0.0):.4f}"
        lines.append(
            f"  cost so far: {spent} spent "
            f"({total.get('paid_calls', 0)} paid calls, {total.get('cache_hits', 0)} cache "
            f"hits, {total.get('replays', 0)} replays); "
            f"simulation time so far: {runtime_s(out):.1f} s"
        )
        lines += flagged_lines(out)
        lines += report_lines(out)
        if not pending:
            lines.append("  nothing waits on you")
        lines.append("")
    return "\n".join(lines).rstrip()


def history_counts(out: Path) -> list[str]:
    """Backtracks, failed runs and refused duplicate attempts so far."""

    def lines(name: str) -> list[dict]:
        path = out / name
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    failures = lines("run_failures.jsonl")
    dups = sum(f.get("kind") == "duplicate" for f in failures)
    counts = [
        ("backtracks/replans", len(lines("backtracks.jsonl"))),
        ("failed runs", len(failures) - dups),
        ("duplicate attempts refused", dups),
    ]
    return [f"{what}: {n}" for what, n in counts if n]


def report_lines(out: Path) -> list[str]:
    """Failed steps with their error line, then the report as it stands."""
    from reprolab.report import partial

    lines = [
        f"  FAILED: {log}: {error.splitlines()[0][:300]}"
        for log, error in partial.failed_steps(out)
        if not error.startswith("WAITING FOR YOU")
    ]
    state, path = partial.report_state(out)
    if state == "final":
        lines.append(f"  report: {path}")
    elif state == "partial":
        lines.append(f"  report: PARTIAL (did not finish): {path}")
    return lines


def flagged_lines(out: Path) -> list[str]:
    """`reprolab status` lines for instruction-like passages found in the paper and in
    the agents' other inputs (the report lists the same)."""
    from reprolab.report import security

    def flagged(where: str, f: dict, count: str) -> str:
        excerpt = " ".join(str(f["excerpt"]).split())[:100]
        return f'  FLAGGED in {where}: {f["pattern"]} in {f["field"]} ({count}): "{excerpt}"'

    lines = [flagged("the paper", f, f"{f['count']}x") for f in security.paper_flags(out)]
    if lines:
        lines.append(f"    (passed to the agents as data; see {out / 'adaptation_log.md'})")
    inputs = [
        flagged("agent input", f, f"{len(f['calls'])} call(s)")
        for f in security.agent_input_flags(out)
    ]
    if inputs:
        inputs.append(f"    (passed to the agents as data; see {out / 'events.jsonl'})")
    return lines + inputs


def find_gate(out: Path, gate_id: str) -> protocol.Checkpoint:
    """The open request of this paper's gate; its own fields must name this paper and gate."""
    request = protocol.gate_request_path(out, gate_id)  # refuses an unsafe id first
    if not request.is_file():
        known = [cp.gate_id for cp in protocol.pending_gates(out)]
        raise GateError(f"no gate '{gate_id}' for {out.name} (pending gates: {known or 'none'})")
    cp = read_model(request, protocol.Checkpoint)
    for field, want in (("paper_id", out.name), ("gate_id", gate_id)):
        if getattr(cp, field) != want:
            raise GateError(
                f"{request}: field {field!r} is {getattr(cp, field)!r}, not {want!r}: the "
                "request was not written for this gate; nothing was answered"
            )
    return cp


def answer(out: Path, args) -> int:
    cp = find_gate(out, args.gate)
    if args.command not in cp.actions:
        raise GateError(f"gate '{cp.gate_id}' accepts {cp.actions}, not '{args.command}'")
    decision = {
        "action": args.command,
        "sha256": cp.sha256,
        "note": args.note,
        "paper_id": cp.paper_id,
        "gate_id": cp.gate_id,
        "nonce": cp.nonce,
    }
    if cp.kind is protocol.GateKind.MATERIAL_CHECKPOINT:
        verdict = getattr(args, "verdict", None) or (
            "approve" if args.command == "approve" else "need_help"
        )
        if verdict not in material.MATERIAL_OPTIONS:
            raise GateError(f"--verdict {verdict!r}: valid: {list(material.MATERIAL_OPTIONS)}")
        decision["verdict"] = verdict
    if args.command == "reject" and not args.note.strip():
        raise GateError("reject needs --note: it is the feedback for what is redone")
    if args.command == "edit":
        path = Path(args.file)
        try:
            decision["revised_data"] = strict_json(path.read_text(encoding="utf-8"), path)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFileError(path, f"cannot be read as JSON: {exc}") from None
    validate_as(protocol.Decision, decision, getattr(args, "file", None) or "the answer")
    target = protocol.gate_decision_path(out, cp.gate_id)  # never the request's answer_file
    atomic_write_json(target, decision)
    print(f"reprolab: wrote {target}; run the same snakemake command again to go on.")
    return 0


def invalidate(out: Path, stage_id: str, reason: str) -> int:
    protocol.check_id("stage id", stage_id)
    stages = plan_stage_ids(out / "plan.json")
    if stage_id not in stages:
        raise ReproLabError(
            f"unknown stage '{stage_id}' of {out.name} (plan stages: {stages or 'no plan yet'})"
        )
    path = consent.invalidate_stage(out, stage_id, reason, source="user (reprolab invalidate)")
    print(
        f"reprolab: wrote {path}; the next run of the same command redoes {stage_id} and "
        "every stage that depends on it."
    )
    return 0
