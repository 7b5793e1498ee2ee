"""Checks, lint, comparison and convergence (reprolab/physics/)."""
