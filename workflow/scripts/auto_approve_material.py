from reprolab.gates import auto_approve
from reprolab.smk import step

with step(snakemake):
    auto_approve(snakemake.input.plan, snakemake.input.stage0, snakemake.output.decision)
