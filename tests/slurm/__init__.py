"""The real one-node Slurm cluster (marked slurm)."""
