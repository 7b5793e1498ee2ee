from reprolab.smk import step
from reprolab.stage_steps import analyze_stage

with step(snakemake) as run:
    analyze_stage(
        run,
        snakemake.input.plan,
        snakemake.input.comparison,
        snakemake.input.checks,
        snakemake.input.adaptations,
        snakemake.output.analysis,
    )
