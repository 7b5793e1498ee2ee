"""Steps (reprolab/steps/) on their own or through a short Snakemake run."""
