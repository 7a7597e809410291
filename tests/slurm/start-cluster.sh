#!/usr/bin/env bash
# Start a throw-away, single-node SLURM cluster on this machine, for tests.
#
#   tests/slurm/start-cluster.sh          # then: export SLURM_CONF=<dir>/slurm.conf
#   tests/slurm/stop-cluster.sh
#
# Runs munged + slurmctld + slurmd as root (Debian 12 packages, SLURM 22.05), with
# every config, spool dir, log, PID file, munge key and munge socket kept under
# one state directory:  ${SLURM_LOCAL_DIR:-/tmp/repro-slurm}.
# Nothing is written to /etc/slurm or /etc/munge; clients find the cluster only
# through SLURM_CONF, which callers MUST export (printed at the end, and also
# written to <dir>/env.sh for `source`).
#
# Idempotent: if the daemons from a previous run are alive and the node is up,
# it exits 0 at once. Otherwise it stops whatever is left of a previous run
# (stop-cluster.sh) and starts afresh, with `slurmctld -c` (clean state).
#
# Environment knobs (all optional):
#   SLURM_LOCAL_DIR          state directory          [/tmp/repro-slurm]
#   SLURM_LOCAL_WAIT         seconds to wait for idle [60]
#   SLURM_LOCAL_CTLD_PORT    slurmctld port           [6817]
#   SLURM_LOCAL_SLURMD_PORT  slurmd port              [6818]
#   SLURM_LOCAL_MIN_CPUS     CPUs the node advertises at least       [8]
#   SLURM_LOCAL_MIN_MEM_MB   RealMemory the node advertises at least [32000]
set -euo pipefail

t_start=$(date +%s%N)
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

STATE_DIR=${SLURM_LOCAL_DIR:-/tmp/repro-slurm}
WAIT_S=${SLURM_LOCAL_WAIT:-60}
CTLD_PORT=${SLURM_LOCAL_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_LOCAL_SLURMD_PORT:-6818}
MIN_CPUS=${SLURM_LOCAL_MIN_CPUS:-8}
MIN_MEM_MB=${SLURM_LOCAL_MIN_MEM_MB:-32000}

CONF=$STATE_DIR/slurm.conf
RUN_DIR=$STATE_DIR/run        # PID files (stop-cluster.sh reads them)
LOG_DIR=$STATE_DIR/log
MUNGE_DIR=$STATE_DIR/munge    # key, socket, seed; owned by the munge user
MUNGE_SOCKET=$MUNGE_DIR/munge.socket.2
export SLURM_CONF=$CONF       # sinfo/sbatch below, and the daemons, use this

log() { printf '[start-cluster] %s\n' "$*" >&2; }
elapsed() { awk -v a="$t_start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

# --- helpers shared in spirit with stop-cluster.sh -----------------------------
# A PID file's process is "ours and alive" if it exists, is not a zombie (a dead
# daemon re-parented to a PID 1 that does not reap lingers in state Z with the
# same comm) and has the expected command name (guards against PID reuse).
alive() { # alive PIDFILE COMM
    local pidfile=$1 comm=$2 pid stat
    [[ -s $pidfile ]] || return 1
    # A daemon removes its own PID file on exit: the file can vanish under us.
    pid=$(tr -dc '0-9' 2>/dev/null <"$pidfile") || return 1
    [[ -n $pid && -r /proc/$pid/stat ]] || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }                          # drop "pid (comm) "; comm may hold spaces
    [[ ${stat%% *} != Z ]] || return 1
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]]
}
all_alive() {
    alive "$RUN_DIR/munged.pid" munged &&
        alive "$RUN_DIR/slurmctld.pid" slurmctld &&
        alive "$RUN_DIR/slurmd.pid" slurmd
}
node_state() { sinfo -h -o %T 2>/dev/null | head -n1 || true; }

# --- 0. already running? ----------------------------------------------------------
# "Up" also covers a node that is busy with jobs (mixed/allocated): restarting
# then would kill a caller's jobs for nothing.
if [[ -f $CONF ]] && all_alive && command -v sinfo >/dev/null; then
    case $(node_state) in
    idle | mixed | allocated | completing)
        log "already running (node $(node_state)); $(elapsed) s"
        echo "export SLURM_CONF=$CONF"
        exit 0
        ;;
    esac
fi

# Anything left of an earlier run (e.g. slurmctld killed -9, slurmd still up) is
# stopped, so that every start is the same clean start.
"$SCRIPT_DIR/stop-cluster.sh" >&2

# --- 1. packages ------------------------------------------------------------------
missing=0
for cmd in munged mungekey slurmctld slurmd sinfo sbatch squeue scontrol; do
    command -v "$cmd" >/dev/null 2>&1 || missing=1
done
if ((missing)); then
    log "installing munge + SLURM from Debian (apt-get)"
    # Post-install scripts try to start the services; the image's policy-rc.d
    # blocks that (and there is no systemd), so we start the daemons ourselves.
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client >&2
fi
id munge >/dev/null 2>&1 || { log "no 'munge' user after installing munge"; exit 1; }

# --- 2. state directory -----------------------------------------------------------
# munged refuses directories writable by group/others, hence the explicit modes.
install -d -m 0755 "$STATE_DIR"
install -d -m 0700 "$STATE_DIR/ctld-state" "$STATE_DIR/slurmd-spool"
# munged runs as munge and writes its PID file and log here; root writes anyway.
install -d -m 0755 -o munge -g munge "$RUN_DIR" "$LOG_DIR" "$MUNGE_DIR"
rm -rf "${STATE_DIR:?}/ctld-state/"* # belt and braces next to `slurmctld -c`

if [[ ! -s $MUNGE_DIR/munge.key ]]; then
    mungekey --create --keyfile="$MUNGE_DIR/munge.key" 2>/dev/null ||
        dd if=/dev/urandom of="$MUNGE_DIR/munge.key" bs=1024 count=1 status=none
fi
chown munge:munge "$MUNGE_DIR/munge.key"
chmod 0400 "$MUNGE_DIR/munge.key"

# --- 3. slurm.conf + gres.conf ----------------------------------------------------
# Topology from `slurmd -C`, scaled up (more cores per socket) so the node
# advertises >= MIN_CPUS; SlurmdParameters=config_overrides lets slurmd accept a
# node bigger than the hardware, so rules sized for a real cluster schedule.
hw=$(slurmd -C | head -n1)
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$hw"; }
NODE=$(field NodeName)
NODE=${NODE:-$(hostname -s)}
boards=$(field Boards) sockets=$(field SocketsPerBoard) cores=$(field CoresPerSocket)
threads=$(field ThreadsPerCore) mem=$(field RealMemory)
boards=${boards:-1} sockets=${sockets:-1} cores=${cores:-1} threads=${threads:-1} mem=${mem:-1000}
per_core=$((boards * sockets * threads))
need_cores=$(((MIN_CPUS + per_core - 1) / per_core))
((cores >= need_cores)) || cores=$need_cores
cpus=$((per_core * cores))
((mem >= MIN_MEM_MB)) || mem=$MIN_MEM_MB

cat >"$CONF" <<EOF
# Generated by tests/slurm/start-cluster.sh -- a local single-node test cluster.
ClusterName=repro-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root

AuthType=auth/munge
CredType=cred/munge
# Our own munged socket, under the state dir (used by auth/munge and cred/munge).
AuthInfo=socket=$MUNGE_SOCKET

StateSaveLocation=$STATE_DIR/ctld-state
SlurmdSpoolDir=$STATE_DIR/slurmd-spool
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info

# No cgroups in this sandbox.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true

# No slurmdbd: sacct does not work; use squeue for job status.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none

SchedulerType=sched/backfill
# Schedule batch jobs at once (default: up to 3 s later) -- tests wait on every job.
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default, a job gets all of the node's memory and jobs run one by one.
DefMemPerCPU=1000
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
# SIGTERM -> SIGKILL delay for cancelled jobs (default 30 s); keeps stop-cluster.sh quick.
KillWait=5

GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus Boards=$boards SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# A fake GPU: a device file must be named or the node drains ("gres/gpu count
# reported lower than configured"); jobs see CUDA_VISIBLE_DEVICES=0, no device.
cat >"$STATE_DIR/gres.conf" <<EOF
AutoDetect=off
NodeName=$NODE Name=gpu File=/dev/null
EOF

echo "export SLURM_CONF=$CONF" >"$STATE_DIR/env.sh"

# Clients must also find the config at the default path: the Snakemake jobstep plugin
# strips every SLURM_* variable (SLURM_CONF included) before its nested srun. Link it,
# unless a real config lives there (then we leave it alone and warn).
if [[ -L /etc/slurm/slurm.conf || ! -e /etc/slurm/slurm.conf ]]; then
    mkdir -p /etc/slurm
    ln -sfn "$CONF" /etc/slurm/slurm.conf
else
    echo "warning: /etc/slurm/slurm.conf is a real file; nested srun will use it" >&2
fi

# --- 4. daemons -------------------------------------------------------------------
# All three daemonize. Their stdio goes to files so that a caller capturing our
# output through a pipe (subprocess.run(capture_output=True)) is not kept
# waiting by a daemon holding the pipe open.
wait_pidfile() { # wait_pidfile PIDFILE COMM: bounded wait for a daemon's PID file
    local i
    for ((i = 0; i < 100; i++)); do
        alive "$1" "$2" && return 0
        sleep 0.1
    done
    log "$2 did not come up (no live PID in $1)"
    return 1
}
fail() {
    log "$*"
    for f in "$LOG_DIR"/munged.log "$LOG_DIR"/slurmctld.log "$LOG_DIR"/slurmd.log "$LOG_DIR"/*.out; do
        [[ -s $f ]] || continue
        echo "----- tail of $f" >&2
        tail -n 30 "$f" >&2
    done
    log "daemons left as they are for inspection; run $SCRIPT_DIR/stop-cluster.sh"
    exit 1
}

rm -f "$RUN_DIR"/*.pid
runuser -u munge -- munged \
    --socket="$MUNGE_SOCKET" \
    --key-file="$MUNGE_DIR/munge.key" \
    --pid-file="$RUN_DIR/munged.pid" \
    --seed-file="$MUNGE_DIR/munged.seed" \
    --log-file="$LOG_DIR/munged.log" \
    </dev/null >>"$LOG_DIR/munged.out" 2>&1 || fail "munged failed to start"
wait_pidfile "$RUN_DIR/munged.pid" munged || fail "munged failed to start"

# -c: clean state. After a hard kill a controller restarted with its old state
# revives the old jobs as RUNNING forever.
slurmctld -c -f "$CONF" </dev/null >>"$LOG_DIR/slurmctld.out" 2>&1 || fail "slurmctld failed to start"
wait_pidfile "$RUN_DIR/slurmctld.pid" slurmctld || fail "slurmctld failed to start"

slurmd -f "$CONF" </dev/null >>"$LOG_DIR/slurmd.out" 2>&1 || fail "slurmd failed to start"
wait_pidfile "$RUN_DIR/slurmd.pid" slurmd || fail "slurmd failed to start"

# --- 5. wait for the node to be idle ----------------------------------------------
deadline=$((SECONDS + WAIT_S))
state=
while :; do
    state=$(node_state)
    [[ $state == idle ]] && break
    all_alive || fail "a daemon died while waiting for the node (state: '${state}')"
    ((SECONDS < deadline)) || fail "node not idle after ${WAIT_S} s (state: '${state}')"
    sleep 0.5
done

log "cluster up: node $NODE (CPUs=$cpus RealMemory=$mem gpu:1), partition debug; took $(elapsed) s"
log "state dir: $STATE_DIR; callers must: export SLURM_CONF=$CONF"
echo "export SLURM_CONF=$CONF"
