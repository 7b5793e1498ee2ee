#!/usr/bin/env bash
# Stops the daemons that scripts/slurm_up.sh started, by the pids it recorded
# (never by name), in reverse order of start. A cluster that was already
# running before slurm_up.sh is left alone (its pids file is empty).
set -uo pipefail
STATE_DIR=${1:-/run/reprolab-slurm}
PIDS="$STATE_DIR/pids"
[ -f "$PIDS" ] || exit 0
tac "$PIDS" | while read -r name pid; do
  [ -n "${pid:-}" ] || continue
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    echo "slurm_down: stopped $name ($pid)" >&2
  fi
done
: >"$PIDS"
