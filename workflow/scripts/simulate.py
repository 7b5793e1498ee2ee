from reprolab.smk import step
from reprolab.steps.run import run_simulation

with step(snakemake) as run:
    run_simulation(
        run,
        snakemake.input.code,
        snakemake.input.script,
        snakemake.input.design,
        snakemake.input.plan,
        snakemake.output.result,
    )
