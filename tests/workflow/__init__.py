"""The whole workflow through real Snakemake and Meep: runs, reruns, faults."""
