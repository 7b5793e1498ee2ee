"""Paper-folder commands: `check` (the whole folder, every problem at once),
`check-recordings` (a replay folder against the agents' models and the plan's
stages), `new-paper` (a PDF or markdown into a paper-folder skeleton) and
`paper-schema` (the JSON schema of metadata.yaml, generated from the models) and
`digitize` (a raster figure's curve as a CSV: reprolab.cli.digitize)."""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

from agents import registry

COMMANDS = ("check", "check-recordings", "new-paper", "paper-schema", "digitize")

# From the agent registry: author and reviewer (a reviewer's needs_revision at attempt
# N asks for attempt N+1 of both); the agents called once per paper, and those every
# stage of the plan calls once at least.
PAIRS = registry.review_pairs()
PAPER_AGENTS = registry.agents_called("paper")
STAGE_AGENTS = registry.agents_called("stage")
NAME = re.compile(r"^(?P<agent>[a-z_]+)\.(?:round(?P<round>\d+)\.)?a(?P<attempt>\d+)\.yaml$")


def add_commands(sub) -> None:
    chk = sub.add_parser("check", help="validate a paper folder; list every problem at once")
    chk.add_argument("paper", help="the paper folder (with metadata.yaml)")
    rec = sub.add_parser(
        "check-recordings", help="validate a paper's replay recordings before a run"
    )
    rec.add_argument("paper", help="the paper folder (recordings/ inside it)")
    rec.add_argument("--recordings", help="a recordings folder elsewhere")
    new = sub.add_parser("new-paper", help="a PDF or markdown file into a paper-folder skeleton")
    new.add_argument("source", help="the paper as PDF or markdown")
    new.add_argument("--id", required=True, help="paper id (letters, digits, _)")
    new.add_argument("--out", help="the folder to create (default papers/ID)")
    from reprolab.cli.digitize import add_command

    add_command(sub)  # `reprolab digitize`: a raster figure's curve from its calibration
    schema = sub.add_parser("paper-schema", help="print the JSON schema of metadata.yaml")
    schema.add_argument("--write", action="store_true", help="write docs/paper-format.schema.json")


def run(args) -> int:
    if args.command == "check":
        return print_problems(check_paper(args.paper), f"paper folder {args.paper}")
    if args.command == "check-recordings":
        folder = Path(args.recordings or Path(args.paper) / "recordings")
        return print_problems(check_recordings(folder), f"recordings {folder}")
    if args.command == "digitize":
        from reprolab.cli.digitize import digitize_command

        return digitize_command(args)
    if args.command == "paper-schema":
        from reprolab.paper_format import SCHEMA_PATH, schema_text

        if args.write:
            SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
            print(f"reprolab: wrote {SCHEMA_PATH}")
        else:
            sys.stdout.write(schema_text())
        return 0
    from reprolab.cli.new_paper import new_paper_command

    return new_paper_command(args)


def print_problems(problems: list[tuple[str, str]], what: str) -> int:
    if not problems:
        print(f"reprolab: {what}: OK")
        return 0
    for path, message in problems:
        print(f"{path}: {message}", file=sys.stderr)
    print(f"reprolab: {what}: {len(problems)} problem(s), listed above", file=sys.stderr)
    return 1


def check_paper(folder: str | Path) -> list[tuple[str, str]]:
    """Every problem of the folder; how each digitized CSV's header is read goes to
    stdout (a header that states no unit is in its axis's unit)."""
    from reprolab.cli.pdf_intake import unplaced
    from reprolab.paper import check_folder

    meta, problems = check_folder(folder)
    for line in header_readings(Path(folder), meta):
        print(line)
    return grouped_todos(problems) + unplaced(Path(folder)) + equation_todos(Path(folder))


def equation_todos(folder: Path) -> list[tuple[str, str]]:
    """The equations new-paper could only keep as images (their glyphs came without
    characters), each an item until typed as text in paper.md."""
    path = folder / "paper.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [
        (str(path), f"{m[1]}: {m[2]} (replace the image link with the equation as text)")
        for m in re.finditer(
            r"!\[(TODO: type this equation of page \d+ as text)\]\(([^)]*)\)", text
        )
    ]


TODO_LINE = re.compile(r"^field '(?P<field>[^']+)' still has a TODO marker \((?P<text>.*)\): ")


def grouped_todos(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The TODO markers of one entry (a figure, a table, a key value) as one item of
    what is left to do, naming each field and what was found; a lone marker as is."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    out: list = []
    for path, message in problems:
        m = TODO_LINE.match(message)
        if not m:
            out.append((path, message))
            continue
        entry = re.match(r"^[a-z_]+(?:\[\d+\])?", m["field"])[0]
        if (path, entry) not in groups:
            groups[(path, entry)] = []
            out.append((path, entry))  # its place in the list, filled in below
        groups[(path, entry)].append((m["field"], m["text"], message))
    result = []
    for item in out:
        todos = groups.get(item)
        if todos is None:
            result.append(item)
        elif len(todos) == 1:
            result.append((item[0], todos[0][2]))
        else:
            fields = "; ".join(f"{f.removeprefix(item[1]).lstrip('.')} {t}" for f, t, _ in todos)
            result.append(
                (
                    item[0],
                    f"field '{item[1]}' still has {len(todos)} TODO markers ({fields}): replace "
                    "each with the paper's value, keeping what a 'TODO confirm:' found where it "
                    "is right (docs/paper-format.md)",
                )
            )
    return result


def header_readings(folder: Path, meta) -> list[str]:
    """One line per digitized CSV: each of its two columns, the unit read from its
    header or the axis unit it is taken to be in."""
    from reprolab import units
    from reprolab.errors import InputFileError
    from reprolab.paper import csv_lines

    out = []
    for fig in meta.figures if meta else []:
        if fig.band_diagram is not None:
            continue
        for c in fig.curves:
            path = folder / (c.digitized or "")
            if not c.digitized or not path.is_file():
                continue
            try:
                header = csv_lines(path)[0][:2]
            except (InputFileError, IndexError):  # check_folder names the problem
                continue
            y_axis = fig.y_axes.right if c.y_axis == "right" else fig.y_axes.left
            parts = []
            for col, axis in zip(header, (fig.x_axis, y_axis or fig.y_axes.left), strict=False):
                try:
                    src = units.column_unit(col.strip(), axis.quantity)
                except units.UnitError:
                    continue
                if src is None:
                    parts.append(f"'{col.strip()}' in the axis unit '{axis.unit}'")
                else:
                    parts.append(f"'{col.strip()}' in '{src[1]}' (axis unit '{axis.unit}')")
            if parts:
                out.append(f"reprolab: {c.digitized}: " + ", ".join(parts))
    return out


def check_recordings(folder: Path) -> list[tuple[str, str]]:
    """Every missing or invalid recording at once: each file against its agent's model,
    the stages against the plan the planner's recording makes."""
    if not folder.is_dir():
        return [(str(folder), "is not a folder of recordings (docs/replay.md)")]
    problems: list[tuple[str, str]] = []
    found: dict[str, dict[tuple[str, int, int], dict]] = {}
    for stage_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for path in sorted(stage_dir.iterdir()):
            parsed, problem = read_recording(path, stage_dir.name)
            if problem:
                problems.append((str(path), problem))
            elif parsed is not None:
                found.setdefault(stage_dir.name, {})[parsed[0]] = parsed[1]
    plan = found.get("paper", {}).get(("planner", 1, 1))
    stages = [s["stage_id"] for s in plan["stages"]] if plan else []
    problems += expected_missing(folder, "paper", PAPER_AGENTS, found.get("paper", {}))
    for stage in stages:
        problems += expected_missing(folder, stage, STAGE_AGENTS, found.get(stage, {}))
    dirs = {p.name for p in folder.iterdir() if p.is_dir()}
    for name in sorted(dirs - {"paper", *stages}):
        if plan:
            problems.append(
                (str(folder / name), f"is not a stage of the recorded plan; valid: {stages}")
            )
    return problems


def read_recording(path: Path, stage: str):
    """((agent, round, attempt), output) of a valid recording, or a problem."""
    from agents.providers import Usage
    from agents.registry import OUTPUT_MODELS
    from reprolab.errors import ReproLabError
    from reprolab.fileio import read_yaml, validate_as

    m = NAME.match(path.name)
    if not m or m["agent"] not in OUTPUT_MODELS:
        agent = path.name.split(".")[0]
        close = difflib.get_close_matches(agent, list(OUTPUT_MODELS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return None, (
            f"is not named <agent>.a<attempt>.yaml (or <agent>.round<N>.a<attempt>.yaml) with "
            f"an agent of {sorted(OUTPUT_MODELS)}{hint}"
        )
    agent = m["agent"]
    try:
        data = read_yaml(path)
        if not isinstance(data, dict) or "output" not in data:
            return None, "has no top-level 'output' field"
        for key, want in (("agent", agent), ("stage_id", stage)):
            if data.get(key) != want:
                return None, f"field '{key}' is {data.get(key)!r}; valid: {want!r}"
        output = validate_as(OUTPUT_MODELS[agent], data["output"], path)
        Usage.from_mapping(data.get("usage"), f"{path} field 'usage'")
    except (ReproLabError, ValueError) as exc:
        return None, str(exc).removeprefix(f"{path}: ")
    key = (agent, int(m["round"] or 1), int(m["attempt"]))
    return (key, output.model_dump(mode="json")), None


def expected_missing(folder: Path, stage: str, agents: tuple, found: dict) -> list:
    """The first attempt of each agent, and the next attempt of author and reviewer
    wherever a recorded review asked for a revision."""
    want = {(a, 1, 1): "is missing" for a in agents}
    for (agent, rnd, attempt), output in found.items():
        if agent in PAIRS and output.get("verdict") == "needs_revision":
            why = f"is missing: {agent} attempt {attempt} asked for a revision"
            want |= {(agent, rnd, attempt + 1): why, (PAIRS[agent], rnd, attempt + 1): why}
    return [
        (str(folder / stage / f"{a}.{f'round{r}.' if r > 1 else ''}a{n}.yaml"), want[(a, r, n)])
        for a, r, n in sorted(set(want) - set(found))
    ]
