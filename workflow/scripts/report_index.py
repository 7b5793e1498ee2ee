from reprolab.steps.campaign import write_campaign_index

# A script, not a `run:` block: the index is one step after every paper's report.
write_campaign_index(snakemake.config, snakemake.output.md, snakemake.log[0])
