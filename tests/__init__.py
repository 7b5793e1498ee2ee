"""ReproLab's tests, grouped by the package they test."""
