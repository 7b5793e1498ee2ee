"""The layout holds: every room imports only what the rooms table allows, no import
cycle, small functions, thin scripts.

The rooms table in docs/architecture.md ("Rooms and what they may import") is the rule:
this test reads it from there, so the document and the check cannot drift. Imports are
read from the source (module level and inside functions alike: a lazy import that
closes a circle, or reaches up a floor, counts as much as one at the top).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("reprolab", "agents")
ARCHITECTURE = REPO / "docs" / "architecture.md"
ROOMS_HEADING = "## Rooms and what they may import"
MAX_MODULE_LINES = 800  # modules are split by concept; this only catches a runaway one
MAX_FUNCTION_LINES = 80


def module_name(path: Path, root: Path = REPO) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules(root: Path = REPO) -> dict[str, Path]:
    return {
        module_name(p, root): p
        for pkg in PACKAGES
        for p in sorted((root / pkg).rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module an `ImportFrom` names (a relative one resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported(path: Path, modules: dict[str, Path], name: str = "") -> set[str]:
    """The project modules a file imports (`from a import b` is module a.b when it exists)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = absolute(name, node, path.name == "__init__.py")
            names = [f"{source}.{a.name}" for a in node.names]
            names = [n if n in modules else source for n in names]
        else:
            continue
        for n in names:  # `import a.b.c` of a module that is not ours: its nearest package
            while n and n not in modules and "." in n:
                n = n.rsplit(".", 1)[0]
            if n in modules:
                found.add(n)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {name: imported(path, modules, name) for name, path in modules.items()}
    for name in graph:
        graph[name].discard(name)
    return graph


def rooms_table(text: str) -> dict[str, dict]:
    """{room: {"modules": [module or package prefix], "may_import": {room}}} from the
    rooms table of docs/architecture.md (a row: | room | modules | holds | may import |)."""
    section = text.split(ROOMS_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    header, *body = rows
    assert header == ["room", "modules", "holds", "may import"], header
    rooms = {}
    for room, modules, _holds, may in body:
        paths = re.findall(r"`([^`]+)`", modules)
        assert paths, f"room {room}: no module listed"
        rooms[room] = {"modules": [path_to_module(p) for p in paths], "may": may}
    for room, entry in rooms.items():
        if entry["may"] == "anything":
            entry["may_import"] = set(rooms)
        elif entry["may"] == "—":
            entry["may_import"] = {room}
        else:
            names = [n.strip() for n in entry["may"].split(",")]
            unknown = [n for n in names if n not in rooms]
            assert not unknown, f"room {room} may import unknown rooms {unknown}"
            entry["may_import"] = {room, *names}
    return rooms


def path_to_module(path: str) -> str:
    """`reprolab/physics/` -> "reprolab.physics." (a package prefix); `reprolab/units.py`
    -> "reprolab.units"; `reprolab/__init__.py` -> "reprolab"."""
    if path.endswith("/"):
        return path.rstrip("/").replace("/", ".") + "."
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def room_of(module: str, rooms: dict[str, dict]) -> list[str]:
    """Every room whose module list claims this module (the rule: exactly one)."""
    return [
        room
        for room, entry in rooms.items()
        for m in entry["modules"]
        if module == m or (m.endswith(".") and (module + ".").startswith(m))
    ]


def layering_violations(graph: dict[str, set[str]], rooms: dict[str, dict]) -> list[str]:
    """Each module outside exactly one room, and each import the table does not allow."""
    wrong, where = [], {}
    for module in sorted(graph):
        claimed = room_of(module, rooms)
        if len(claimed) != 1:
            wrong.append(f"{module} is in {len(claimed)} rooms of the table {claimed}")
        else:
            where[module] = claimed[0]
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if module not in where or dep not in where:
                continue
            if where[dep] not in rooms[where[module]]["may_import"]:
                wrong.append(
                    f"{module} ({where[module]}) imports {dep} ({where[dep]}); "
                    f"{where[module]} may import {rooms[where[module]]['may']}"
                )
    return wrong


def doc_rooms() -> dict[str, dict]:
    return rooms_table(ARCHITECTURE.read_text(encoding="utf-8"))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_reprolab_or_agents():
    found = cycles(import_graph(all_modules()))
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_room_imports_only_what_the_rooms_table_allows():
    wrong = layering_violations(import_graph(all_modules()), doc_rooms())
    assert not wrong, "\n".join(wrong)


def test_the_rooms_table_is_a_stack_of_floors():
    """No two rooms may import each other: the allowed imports form no circle."""
    rooms = doc_rooms()
    graph = {room: entry["may_import"] - {room} for room, entry in rooms.items()}
    graph["cli"] = set()  # the top may import anything: that closes no circle below it
    assert cycles(graph) == [], cycles(graph)
    below_steps = [r for r in rooms if r not in ("steps", "cli")]
    assert all({"steps", "cli"}.isdisjoint(rooms[r]["may_import"]) for r in below_steps)
    assert "cli" not in rooms["steps"]["may_import"]


def plant(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return import_graph(all_modules(root))


def test_the_layering_check_fails_on_a_planted_violation(tmp_path):
    """The check itself is checked: a back-edge (lazy, inside a function), a relative
    import up a floor and a module the table does not place are each reported."""
    graph = plant(
        tmp_path,
        {
            "reprolab/__init__.py": "",
            "reprolab/errors.py": "",
            "reprolab/artifacts.py": "from reprolab.errors import x\n",
            "reprolab/gates/__init__.py": "",
            "reprolab/gates/material.py": (
                "from reprolab.errors import x\n\n"
                "def payload():\n    from reprolab.artifacts import load_plan\n"
            ),
            "reprolab/physics/__init__.py": "",
            "reprolab/physics/checks.py": "from ..steps import run\n",
            "reprolab/steps/__init__.py": "",
            "reprolab/steps/run.py": "import reprolab.physics.checks\n",
            "reprolab/unplaced.py": "",
            "agents/__init__.py": "",
        },
    )
    assert graph["reprolab.physics.checks"] == {"reprolab.steps.run"}
    wrong = layering_violations(graph, doc_rooms())
    assert len(wrong) == 3, wrong
    assert "reprolab.gates.material (gates) imports reprolab.artifacts (run-context)" in wrong[1]
    assert "reprolab.physics.checks (physics) imports reprolab.steps.run (steps)" in wrong[2]
    assert wrong[0].startswith("reprolab.unplaced is in 0 rooms")
    # the same tree without the back-edges passes
    (tmp_path / "reprolab/gates/material.py").write_text("from reprolab.errors import x\n")
    (tmp_path / "reprolab/physics/checks.py").write_text("")
    (tmp_path / "reprolab/unplaced.py").unlink()
    assert layering_violations(import_graph(all_modules(tmp_path)), doc_rooms()) == []


def test_the_rooms_table_is_read_strictly():
    table = (
        ROOMS_HEADING + "\n\n| room | modules | holds | may import |\n|---|---|---|---|\n"
        "| low | `a/` | x | — |\n| high | `b.py` | y | low, attic |\n"
    )
    with pytest.raises(AssertionError, match="unknown rooms \\['attic'\\]"):
        rooms_table(table)
    rooms = rooms_table(table.replace(", attic", ""))
    assert rooms["high"]["may_import"] == {"high", "low"}
    assert rooms["low"]["modules"] == ["a."] and rooms["high"]["modules"] == ["b"]


def test_every_subpackage_says_what_lives_there_and_what_it_may_import():
    for init in sorted((REPO / "reprolab").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc and len(doc) > 150, f"{init}: docstring missing or too short"


@pytest.mark.parametrize("name", sorted(all_modules()))
def test_modules_and_functions_stay_small(name):
    path = all_modules()[name]
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES, f"{path}: over {MAX_MODULE_LINES} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{path}:{node.lineno} {node.name}: {length} lines"


BRIDGES = {"reprolab.smk"}


def test_workflow_scripts_call_the_steps():
    for script in sorted((REPO / "workflow" / "scripts").glob("*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        sources = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert sources - BRIDGES, f"{script}: imports nothing but the bridges"
        assert all(s.startswith("reprolab.steps") for s in sources - BRIDGES), (
            f"{script}: imports {sorted(sources)}; scripts call reprolab.steps only"
        )


# What a step job may import at start-up (every step is a fresh interpreter, and its
# imports are most of its cost). numpy only where curves are compared or
# fields read; an agent's module only where that agent is called or its model read.
HEAVY_AT_START = {
    "numpy": {"compare"},
    "matplotlib": set(),
    "h5py": set(),
    "agents.supervisor": {"verdict"},
    "agents.code_reviewer": {"code", "run"},
}


@pytest.mark.parametrize(
    "step",
    [
        "plan",
        "design",
        "code",
        "run",
        "checks",
        "validate",
        "compare",
        "analyze",
        "verdict",
        "material",
        "report",
    ],
)
def test_a_step_job_imports_only_what_it_uses(step):
    import json
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        f"import reprolab.smk, reprolab.steps.{step}\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True
    )
    loaded = set(json.loads(out.stdout))
    wrong = [m for m, allowed in HEAVY_AT_START.items() if m in loaded and step not in allowed]
    assert not wrong, f"reprolab.steps.{step} imports {wrong} at start-up"


def test_the_agent_registry_is_the_one_list_of_agents():
    """Each registered agent is a module of `agents` with that `AGENT` and that output
    model, and has a prompt; each prompt (but the global rules) is a registered agent."""
    from agents import prompts, registry, runner

    for name, spec in registry.AGENTS.items():
        tree = ast.parse((REPO / "agents" / f"{name}.py").read_text(encoding="utf-8"))
        consts = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        assert consts.get("AGENT") == name, f"agents/{name}.py: AGENT is not {name!r}"
        assert spec.model in classes, f"agents/{name}.py has no class {spec.model}"
        assert spec.prompt.is_file(), spec.prompt
        assert spec.reviews is None or spec.reviews in registry.AGENTS, spec
    assert prompts.known_agents() == set(registry.AGENTS)
    assert runner.OUTPUT_MODELS is registry.OUTPUT_MODELS
    assert registry.OUTPUT_MODELS["supervisor"].__name__ == "SupervisorOutput"
