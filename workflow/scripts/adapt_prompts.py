from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.smk import step
from reprolab.steps.plan import adapt_prompts

with step(snakemake) as run:
    adapt_prompts(run, snakemake.output.adaptations, snakemake.output.log_md)
