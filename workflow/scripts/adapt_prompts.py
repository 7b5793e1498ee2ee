from reprolab.planning import adapt_prompts
from reprolab.smk import step

with step(snakemake) as run:
    adapt_prompts(run, snakemake.output.adaptations, snakemake.output.log_md)
