from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.compare import compare_stage

with step(snakemake) as run:
    compare_stage(run, snakemake.input.design, snakemake.input.checks, snakemake.output.comparison)
