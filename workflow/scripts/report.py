from reprolab.report import write_report
from reprolab.smk import step

with step(snakemake) as run:
    write_report(run, snakemake.input, snakemake.output.report, snakemake.output.html)
