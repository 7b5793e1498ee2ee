from reprolab.smk import step
from reprolab.steps.material import auto_approve

with step(snakemake):
    auto_approve(snakemake.input.plan, snakemake.input.stage0, snakemake.output.decision)
