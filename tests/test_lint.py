"""Style is part of the build: ruff (format + check) and snakefmt must be clean."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.pipeline import REPO

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


def test_plane_wave_lint_false_alarms_are_gone():
    """A compact source across a waveguide is no plane wave, and a named constant
    INTEGRATED = True is as good as a literal (the code prompt asks for names); a plane
    wave without the flag, literal or named, still fails."""
    from reprolab.physics import lint as lint_mod
    from tests.support.planted.corpus import PLANTED, named_true_plane_wave
    from tests.support.planted.scripts2d import bend_script

    def plane(code_design):
        code, design = code_design
        return [c.status for c in lint_mod.code_findings(code, design) if "plane_wave" in c.name]

    assert plane(bend_script()) == [] and plane(named_true_plane_wave()) == []
    assert plane(PLANTED["plane_wave_named_false"][0]) == ["fail"]
    assert plane(PLANTED["plane_wave_not_integrated"][0]) == ["fail"]
