"""The code step: CodeGenerator ⇄ CodeReviewer with the code checks, for the first
version and for every fix."""

from __future__ import annotations

import ast
from pathlib import Path

from agents import (
    code_generator,
    code_reviewer,
)
from agents.code_generator import GeneratedCode
from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import (
    CodeArtifact,
    DesignArtifact,
    load_adaptations,
    load_design,
    write_code,
)
from reprolab.fileio import atomic_write_text
from reprolab.jobs import sandbox
from reprolab.physics import lint
from reprolab.steps.blocking import passed_on_block
from reprolab.steps.review import reviewed_loop
from reprolab.steps.static import static_findings


def code_problems(code: GeneratedCode, design: SimulationDesign) -> list[str]:
    problems = []
    try:
        ast.parse(code.code)
    except SyntaxError as exc:
        return [f"code does not parse: line {exc.lineno}: {exc.msg}"]
    for spec in design.output_specifications:
        if spec.file not in code.expected_outputs:
            problems.append(f"expected_outputs lacks '{spec.file}' from the design")
    if design.sweep is not None and "REPROLAB_SWEEP_VALUE" not in code.code:
        problems.append(
            f"the design sweeps '{design.sweep.parameter}': the script must run one point, "
            "reading its value from os.environ['REPROLAB_SWEEP_VALUE'] (JSON)"
        )
    # Network, subprocess, eval/exec, blocking calls, paths outside the stage dir.
    problems += sandbox.static_problems(code.code)
    return problems


def code_loop(
    run, design_art: DesignArtifact, stage_dir: Path, adaptations: list, **loop_args
) -> CodeArtifact:
    """CodeGenerator ⇄ CodeReviewer with the code checks, for a first version or a fix."""
    design, mats = design_art.output, design_art.materials
    return reviewed_loop(
        run=run,
        stage_id=design.stage_id,
        stage_dir=stage_dir,
        adaptations=adaptations,
        author=code_generator.AGENT,
        reviewer=code_reviewer.AGENT,
        limit=run.limits.max_code_revisions,
        author_context=lambda fb: code_generator.context(design_art.output_json(), mats, fb),
        reviewer_context=lambda art: code_reviewer.context(
            design_art.output_json(), art.output.code, mats
        ),
        code_problems=lambda code: (
            code_problems(code, design)
            + lint.problems(static_findings(design, mats, code.code, run))
        ),
        name="code",
        **loop_args,
    )


def generate_code(run, design_path, adaptations_path, out_code_json, out_script) -> None:
    if passed_on_block(run, out_code_json, design_path):
        atomic_write_text(out_script, "# blocked: this stage does not run (see code.json)\n")
        return
    artifact = code_loop(
        run,
        load_design(design_path),
        Path(out_code_json).parent,
        load_adaptations(adaptations_path),
    )
    atomic_write_text(out_script, artifact.output.code)
    write_code(out_code_json, artifact)
