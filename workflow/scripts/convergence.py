# No hand_over() (reprolab.steps.warm): a convergence check runs simulations for
# minutes, through the same jobs as simulate.py, which watch their own parent
# (Snakemake) to tell a driver that died.
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
