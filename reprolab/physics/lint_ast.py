"""Reading a generated Meep script with `ast`, for the code lint (`lint_code`, `lint_films`).

`Consts` resolves module-level numeric constants (`RESOLUTION = 2 * 400`,
`float(os.environ.get("X", 1)) * 800` → its default) so a lint judges what the script
will do without running it; `calls`, `kwarg` and `dotted` find calls and their
arguments; `run_invocations` counts simulation runs; `finding` names a code-lint `Check`.
"""

from __future__ import annotations

import ast
import operator

from reprolab.physics.checks import Check

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}


def finding(name: str, status: str, detail: str, value=None, threshold: str = "") -> Check:
    """A code-lint `Check`, named `lint:<name>`."""
    return Check(f"lint:{name}", status, detail, value, threshold)


def dotted(node: ast.AST) -> str:
    """`a.b.c` of a name or attribute chain; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


class Consts:
    """Module-level numeric constants of a script, evaluated without running it.

    `env_names` collects the environment variables read through `os.environ.get` /
    `os.getenv`, by the module-level assignments and by every later `eval`.
    """

    def __init__(self, tree: ast.Module):
        self.values: dict[str, float] = {}
        self.calls: dict[str, ast.Call] = {}
        self.env_names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if isinstance(value, ast.Tuple) and len(targets) == 1:
                tgt = targets[0]
                if isinstance(tgt, ast.Tuple) and len(tgt.elts) == len(value.elts):
                    for t, v in zip(tgt.elts, value.elts, strict=True):
                        self._assign(t, v)
                continue
            for t in targets:
                self._assign(t, value)

        # Names bound by `from meep.materials import Ag` (dispersive media).
        self.meep_materials: set[str] = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "meep.materials"
            for alias in node.names
        }

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            self.calls[target.id] = value
        if isinstance(target, ast.Name):
            v = self.eval(value)
            if v is not None:
                self.values[target.id] = v

    def eval(self, node: ast.AST | None) -> float | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return float(node.value)
            except ValueError:
                return None
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.eval(node.operand)
            return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = self.eval(node.left), self.eval(node.right)
            if left is None or right is None:
                return None
            try:
                return float(_BINOPS[type(node.op)](left, right))
            except (ZeroDivisionError, OverflowError, TypeError):  # TypeError: complex result
                return None
        if isinstance(node, ast.Call):
            fn = dotted(node.func)
            if fn in {"float", "int", "round", "abs"} and node.args:
                return self.eval(node.args[0])
            if fn in {"os.environ.get", "os.getenv", "environ.get", "getenv"}:
                if node.args and isinstance(node.args[0], ast.Constant):
                    self.env_names.add(str(node.args[0].value))
                return self.eval(node.args[1]) if len(node.args) > 1 else None
        return None


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    """The value of keyword argument `name` of a call, or None."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def calls(tree: ast.AST, *names: str) -> list[ast.Call]:
    """Calls whose function is `name` or `<anything>.name`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            short = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if short in names:
                out.append(node)
    return out


def run_invocations(tree: ast.Module) -> int:
    """How many simulation runs the script performs, counting calls of helper functions
    that contain `.run(` and runs inside loops twice."""
    runners = {
        f.name
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(c.func, ast.Attribute) and c.func.attr == "run" for c in calls(f, "run"))
    }
    count = 0
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    in_loop = {id(c) for loop in loops for c in ast.walk(loop) if isinstance(c, ast.Call)}
    inside_runner = {
        id(c)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and f.name in runners
        for c in ast.walk(f)
        if isinstance(c, ast.Call)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside_runner:
            continue
        fn = node.func
        is_run = isinstance(fn, ast.Attribute) and fn.attr == "run"
        is_runner = isinstance(fn, ast.Name) and fn.id in runners
        if is_run or is_runner:
            count += 2 if id(node) in in_loop else 1
    return count
