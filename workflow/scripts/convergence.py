from reprolab.convergence import run_convergence
from reprolab.smk import step

with step(snakemake) as run:
    run_convergence(
        run,
        snakemake.input.design,
        snakemake.input.code,
        snakemake.input.plan,
        snakemake.output.convergence,
    )
