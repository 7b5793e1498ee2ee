from reprolab.smk import step
from reprolab.steps.plan import make_plan

with step(snakemake) as run:
    make_plan(
        run,
        snakemake.input.adaptations,
        snakemake.output.plan,
        replan=snakemake.input.replan[0] if snakemake.input.replan else None,
    )
