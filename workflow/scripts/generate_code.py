from reprolab.smk import step
from reprolab.steps.code import generate_code

with step(snakemake) as run:
    generate_code(
        run,
        snakemake.input.design,
        snakemake.input.adaptations,
        snakemake.output.code,
        snakemake.output.script,
    )
