from reprolab.smk import step
from reprolab.steps.design import design_stage

with step(snakemake) as run:
    design_stage(
        run,
        snakemake.input.plan,
        snakemake.input.adaptations,
        snakemake.wildcards.stage,
        snakemake.input.deps,
        snakemake.input.get("validated"),
        snakemake.output.design,
        invalidation=snakemake.input.get("invalidation"),
        hierarchy_verdicts=snakemake.input.hierarchy,
    )
