#!/usr/bin/env bash
# Snakemake runs this once in a fresh `--sdm conda` environment of envs/reprolab.yaml:
# the simulate rule's script imports reprolab, so the checkout is installed into it
# (editable, no dependencies: the YAML has them). Not verified here (no conda-forge).
set -euo pipefail
python -m pip install --no-deps --disable-pip-version-check -q -e "$(dirname "$0")/.."
