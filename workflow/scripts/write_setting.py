from reprolab.steps.settings import write_setting

# A script, not a `run:` block: a run block starts a whole Snakemake process per job.
write_setting(snakemake.params.value, snakemake.output[0], snakemake.log[0])
