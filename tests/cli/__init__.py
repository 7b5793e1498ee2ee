"""The `reprolab` command (reprolab/cli/) and installing it."""
