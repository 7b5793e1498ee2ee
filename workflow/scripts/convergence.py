from reprolab.smk import step
from reprolab.steps.convergence import run_convergence

with step(snakemake) as run:
    run_convergence(
        run,
        snakemake.input.design,
        snakemake.input.code,
        snakemake.input.plan,
        snakemake.output.convergence,
    )
