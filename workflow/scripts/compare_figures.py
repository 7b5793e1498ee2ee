from reprolab.smk import step
from reprolab.steps.compare import compare_stage

with step(snakemake) as run:
    compare_stage(run, snakemake.input.design, snakemake.input.checks, snakemake.output.comparison)
