from reprolab.debug import write_summary
from reprolab.smk import step

with step(snakemake) as run:
    write_summary(run, snakemake.input, snakemake.output.summary)
