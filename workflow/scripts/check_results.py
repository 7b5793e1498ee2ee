from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.checks import run_checks

with step(snakemake) as run:
    run_checks(
        run,
        snakemake.input.result,
        snakemake.input.code,
        snakemake.input.design,
        snakemake.output.checks,
    )
