"""The layout holds: no import cycle, dependencies one way, small modules, thin scripts.

Imports are read from the source (module level and inside functions alike: a
lazy import that closes a circle is still a circle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("reprolab", "agents")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# Layers below the steps; none of them may import reprolab.steps or reprolab.cli.
LOWER = ("reprolab.physics", "reprolab.jobs", "reprolab.gates", "reprolab.report", "agents")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {
        module_name(p): p
        for pkg in PACKAGES
        for p in sorted((REPO / pkg).rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def imported(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules a file imports (`from a import b` is module a.b when it exists)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
            names = [n if n in modules else node.module for n in names]
        else:
            continue
        found.update(n for n in names if n in modules)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {name: imported(path, modules) for name, path in modules.items()}
    for name in graph:
        graph[name].discard(name)
    return graph


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


def test_dependencies_run_one_way():
    graph = import_graph(all_modules())
    wrong = [
        f"{mod} imports {dep}"
        for mod, deps in graph.items()
        if mod.startswith(LOWER)
        for dep in deps
        if dep.startswith(("reprolab.steps", "reprolab.cli"))
    ]
    wrong += [
        f"{mod} imports {dep}"
        for mod, deps in graph.items()
        if mod.startswith("reprolab.steps")
        for dep in deps
        if dep.startswith("reprolab.cli")
    ]
    assert not wrong, wrong


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
