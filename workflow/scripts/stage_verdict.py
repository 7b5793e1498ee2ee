from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.verdict import stage_verdict

with step(snakemake) as run:
    stage_verdict(
        run,
        snakemake.input.plan,
        snakemake.input.checks,
        snakemake.input.comparison,
        snakemake.input.analysis,
        snakemake.input.validation,
        snakemake.input.adaptations,
        snakemake.output.verdict,
        snakemake.input.get("convergence"),
    )
