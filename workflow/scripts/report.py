from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.report import write_report

with step(snakemake) as run:
    write_report(run, snakemake.input, snakemake.output.report, snakemake.output.html)
