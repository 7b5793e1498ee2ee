from reprolab.smk import step
from reprolab.steps.analyze import analyze_stage

with step(snakemake) as run:
    analyze_stage(
        run,
        snakemake.input.plan,
        snakemake.input.comparison,
        snakemake.input.checks,
        snakemake.input.validation,
        snakemake.input.design,
        snakemake.input.adaptations,
        snakemake.output.analysis,
    )
