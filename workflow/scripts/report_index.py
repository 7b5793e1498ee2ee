from reprolab.steps.warm import hand_over

hand_over()  # where a warm server is up, the rest runs in its fresh child (issue #19)

from reprolab.steps.campaign import write_campaign_index

# A script, not a `run:` block: the index is one step after every paper's report.
write_campaign_index(snakemake.config, snakemake.output.md, snakemake.log[0])
