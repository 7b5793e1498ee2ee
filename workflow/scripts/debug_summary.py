from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.debug import write_summary

with step(snakemake) as run:
    write_summary(run, snakemake.input, snakemake.output.summary)
