from reprolab.planning import make_plan
from reprolab.smk import step

with step(snakemake) as run:
    make_plan(run, snakemake.input.adaptations, snakemake.output.plan)
