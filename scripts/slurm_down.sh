#!/usr/bin/env bash
# Stops the daemons that scripts/slurm_up.sh started, by the pids it recorded
# (never by name), in reverse order of start, once no live user of the cluster
# is left (STATE_DIR/users/<pid>). A cluster that was already running before
# slurm_up.sh is left alone (its pids file is empty).
set -uo pipefail
STATE_DIR=${1:-/run/reprolab-slurm}
USER_PID=${2:-$PPID}
PIDS="$STATE_DIR/pids"
[ -f "$PIDS" ] || exit 0
exec 9>"$STATE_DIR/lock"
flock 9
rm -f "$STATE_DIR/users/$USER_PID"
for user in "$STATE_DIR"/users/*; do
  [ -e "$user" ] || continue
  if kill -0 "$(basename "$user")" 2>/dev/null; then
    echo "slurm_down: cluster still used by pid $(basename "$user"); leaving it up" >&2
    exit 0
  fi
  rm -f "$user" # a session that ended without slurm_down
done
started=""
[ -s "$PIDS" ] && started=1
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
# Our slurm.conf goes with the daemons: left behind, it makes every `scontrol` wait
# ~9 s for a controller that is gone, and Snakemake's Slurm plugin runs one on import,
# in every run, local ones and `-n` too.
CONF=${REPROLAB_SLURM_CONF_DIR:-/etc/slurm}/slurm.conf # the variable: for tests
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -n "$started" ] && grep -q "Written by reprolab" "$CONF" 2>/dev/null; then
  if [ -f "$STATE_DIR/slurm.conf.orig" ]; then
    $SUDO mv "$STATE_DIR/slurm.conf.orig" "$CONF"
  else
    $SUDO rm -f "$CONF"
  fi
fi
