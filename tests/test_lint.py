"""Style is part of the build: ruff (format + check) and snakefmt must be clean."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "cmd",
    [
        ["ruff", "format", "--check", "."],
        ["ruff", "check", "."],
        ["snakefmt", "--check", "Snakefile", "workflow/rules"],
    ],
    ids=["ruff-format", "ruff-check", "snakefmt"],
)
def test_lint_clean(cmd):
    run = subprocess.run([str(BIN / cmd[0]), *cmd[1:]], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
