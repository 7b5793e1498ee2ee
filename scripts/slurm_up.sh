#!/usr/bin/env bash
# Installs and starts a one-node Slurm cluster (Slurm 22.05 from Debian, munge
# authentication, PMIx for `srun --mpi=pmix`) on this machine, for CI and demos.
#
#   scripts/slurm_up.sh [STATE_DIR] [USER_PID]   # default /run/reprolab-slurm, $PPID
#   scripts/slurm_down.sh [STATE_DIR] [USER_PID] # stops the daemons started here
#
# No systemd is assumed: the daemons are started directly and their pids are
# written to STATE_DIR/pids, which slurm_down.sh reads. USER_PID (the test
# session) is registered under STATE_DIR/users; slurm_down.sh stops the daemons
# only when no live user is left, so concurrent test sessions share one cluster.
# When a cluster already answered before (`scontrol ping`) and was not started
# here, pids stays empty and slurm_down.sh leaves that cluster alone.
#
# Accounting is off (AccountingStorageType=accounting_storage/none): sacct does
# not work, so job state is read with squeue/scontrol (the profile's
# slurm-status-command and reprolab.jobs.submit do that). slurmdbd + MariaDB would
# add minutes of install time and two more daemons for no test that needs it.
set -euo pipefail
STATE_DIR=${1:-/run/reprolab-slurm}
CONF_DIR=/etc/slurm
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { echo "slurm_up: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

packages=(slurm-wlm munge libpmix-dev)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  # Other installers may hold the apt lock for a while: wait for it, do not fail.
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq ||
    die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
fi

USER_PID=${2:-$PPID}
mkdir -p "$STATE_DIR/users"
touch "$STATE_DIR/pids"
# One slurm_up/slurm_down at a time (parallel test sessions on one machine).
# Daemons are started with fd 9 closed (`9>&-`): one that inherited it would
# hold the lock for its lifetime and the next slurm_up would wait forever.
exec 9>"$STATE_DIR/lock"
flock 9
touch "$STATE_DIR/users/$USER_PID"

# A 1-minute partition: the tests ask it for more time to see a job that can
# never start (Reason PartitionTimeLimit) cancelled with its reason.
SHORT_PARTITION="PartitionName=short Nodes=ALL MaxTime=1 State=UP OverSubscribe=YES"

if scontrol ping 2>/dev/null | grep -q "is UP"; then
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  case "$state" in
  idle* | mix* | alloc*)
    log "a Slurm controller already answers (node $state); starting nothing"
    # Ours but started by an older version of this script: add what it lacks.
    if grep -q "Written by reprolab" "$CONF_DIR/slurm.conf" 2>/dev/null &&
      ! scontrol show partition short >/dev/null 2>&1; then
      # shellcheck disable=SC2086 # the words are scontrol's arguments
      $SUDO scontrol create $SHORT_PARTITION || die "could not add partition short"
    fi
    exit 0
    ;;
  esac
  # Jobs would pend forever on a node that is down: say so instead.
  die "a Slurm controller answers but its node is '${state:-unknown}' (slurmd dead?); run scripts/slurm_down.sh $STATE_DIR or restart slurmd"
fi
: >"$STATE_DIR/pids"

node=$(hostname -s)
cpus=$(nproc)
# Leave 1 GiB to the OS; Slurm schedules --mem against RealMemory.
mem_mb=$(($(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024))

$SUDO mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat >"$STATE_DIR/slurm.conf" <<EOF
# Written by reprolab scripts/slurm_up.sh: one node, no accounting database.
ClusterName=reprolab
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=pmix
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$STATE_DIR/slurmctld.pid
SlurmdPidFile=$STATE_DIR/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2
# Kill a step whose RSS exceeds its --mem (state OUT_OF_MEMORY without cgroups).
JobAcctGatherParams=OverMemoryKill
# Jobs stay visible to scontrol for 10 min after they end (no sacct here).
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$node CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
$SHORT_PARTITION
# A job over a partition's limits is accepted and pends with the reason (e.g.
# PartitionTimeLimit); reprolab.jobs.submit cancels it and says why.
EnforcePartLimits=NO
EOF
# A configuration that is not ours is kept aside; slurm_down.sh puts it back.
if [ -f "$CONF_DIR/slurm.conf" ] && ! grep -q "Written by reprolab" "$CONF_DIR/slurm.conf"; then
  $SUDO cp -p "$CONF_DIR/slurm.conf" "$STATE_DIR/slurm.conf.orig"
fi
$SUDO cp "$STATE_DIR/slurm.conf" "$CONF_DIR/slurm.conf"

# munge: a key, its run directory, the daemon as the munge user.
if [ ! -s /etc/munge/munge.key ]; then
  $SUDO mkdir -p /etc/munge
  $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
$SUDO chown munge:munge /etc/munge/munge.key
$SUDO chmod 400 /etc/munge/munge.key
$SUDO mkdir -p /run/munge /var/log/munge /var/lib/munge
$SUDO chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  $SUDO runuser -u munge -- munged --pid-file="$STATE_DIR/munged.pid" 9>&- ||
    $SUDO runuser -u munge -- munged 9>&-
  for _ in $(seq 50); do
    [ -s "$STATE_DIR/munged.pid" ] && break
    sleep 0.1
  done
  pid=$(cat "$STATE_DIR/munged.pid" 2>/dev/null || pgrep -u munge -n munged || true)
  [ -n "$pid" ] || die "munged did not start (see /var/log/munge/munged.log)"
  echo "munged $pid" >>"$STATE_DIR/pids"
fi
munge -n | unmunge >/dev/null || die "munge does not authenticate (see /var/log/munge/munged.log)"

start_daemon() { # name, pidfile
  local name=$1 pidfile=$2
  rm -f "$pidfile"
  $SUDO "$name" 9>&- || die "$name did not start (see /var/log/slurm/$name.log)"
  for _ in $(seq 100); do
    [ -s "$pidfile" ] && break
    sleep 0.1
  done
  [ -s "$pidfile" ] || die "$name wrote no pid file $pidfile (see /var/log/slurm/$name.log)"
  echo "$name $(cat "$pidfile")" >>"$STATE_DIR/pids"
}
# -c: a fresh controller state, so a previous run's jobs do not come back.
rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
# Job ids start again from 1, so PMIx directories a killed slurmd left behind would
# make a new step with the same id fail ("Cannot create directory ... File exists").
rm -rf /tmp/spmix_appdir_*
start_daemon slurmctld "$STATE_DIR/slurmctld.pid"
start_daemon slurmd "$STATE_DIR/slurmd.pid"

for _ in $(seq 60); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  case "$state" in
  idle | mix | alloc)
    log "node $node is $state ($cpus CPUs, $mem_mb MB); daemons: $(tr '\n' ' ' <"$STATE_DIR/pids")"
    exit 0
    ;;
  esac
  sleep 0.5
done
die "node $node not idle after 30 s (sinfo: '${state:-no answer}'); see /var/log/slurm/"
