from reprolab.smk import step
from reprolab.steps.debug import write_summary

with step(snakemake) as run:
    write_summary(run, snakemake.input, snakemake.output.summary)
