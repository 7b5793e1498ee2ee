"""Jobs, the sandbox and sweeps (reprolab/jobs/)."""
