from reprolab.smk import step
from reprolab.steps.checks import run_checks

with step(snakemake) as run:
    run_checks(
        run,
        snakemake.input.result,
        snakemake.input.code,
        snakemake.input.design,
        snakemake.output.checks,
    )
