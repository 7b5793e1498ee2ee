from reprolab.smk import step
from reprolab.steps.validate import validate_run

with step(snakemake) as run:
    validate_run(
        run,
        snakemake.input.result,
        snakemake.input.checks,
        snakemake.input.code,
        snakemake.input.design,
        snakemake.input.plan,
        snakemake.input.adaptations,
        snakemake.output.validation,
    )
