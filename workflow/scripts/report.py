from reprolab.smk import step
from reprolab.steps.report import write_report

with step(snakemake) as run:
    write_report(run, snakemake.input, snakemake.output.report, snakemake.output.html)
