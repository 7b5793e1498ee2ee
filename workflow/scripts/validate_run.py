from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.validate import validate_run

with step(snakemake) as run:
    validate_run(
        run,
        snakemake.input.result,
        snakemake.input.checks,
        snakemake.input.code,
        snakemake.input.design,
        snakemake.input.plan,
        snakemake.input.adaptations,
        snakemake.output.validation,
    )
