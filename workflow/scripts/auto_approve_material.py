from reprolab.smk import step
from reprolab.steps.material import auto_approve

with step(snakemake) as run:
    auto_approve(
        run.paper_id, snakemake.input.plan, snakemake.input.stage0, snakemake.output.decision
    )
