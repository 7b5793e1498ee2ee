from reprolab.smk import step
from reprolab.steps.plan import adapt_prompts

with step(snakemake) as run:
    adapt_prompts(run, snakemake.output.adaptations, snakemake.output.log_md)
