from reprolab.smk import step
from reprolab.steps.verdict import stage_verdict

with step(snakemake) as run:
    stage_verdict(
        run,
        snakemake.input.plan,
        snakemake.input.checks,
        snakemake.input.comparison,
        snakemake.input.analysis,
        snakemake.input.validation,
        snakemake.input.adaptations,
        snakemake.output.verdict,
        snakemake.input.get("convergence"),
    )
