#!/usr/bin/env bash
# Stop the test cluster started by start-cluster.sh.
#
# Stops exactly the processes named by the PID files start-cluster.sh wrote under
# ${SLURM_LOCAL_DIR:-/tmp/repro-slurm}/run (slurmd, then slurmctld, then munged):
# SIGTERM, a bounded wait, SIGKILL after the grace period; then removes the PID
# files. Never kills by name. Safe to run twice, or when nothing was started.
# Keeps the state dir (configs, logs, munge key) for inspection and reuse.
#
# Jobs still queued or running are cancelled first through the controller
# (scancel, while slurmctld is up): stopping slurmd alone leaves a running job's
# slurmstepd and payload behind (the next start's controller would kill them as
# orphans, but a test's teardown should not leave them running meanwhile).
set -euo pipefail

t_start=$(date +%s%N)
STATE_DIR=${SLURM_LOCAL_DIR:-/tmp/repro-slurm}
RUN_DIR=$STATE_DIR/run
GRACE_S=${SLURM_LOCAL_STOP_GRACE:-10}

log() { printf '[stop-cluster] %s\n' "$*" >&2; }

# PID of a live (non-zombie) process with the expected command name, or nothing.
# A killed daemon re-parented to a PID 1 that does not reap stays a zombie (state
# Z) with the same comm: it is dead. A different comm means the PID was reused.
live_pid() { # live_pid PIDFILE COMM
    local pidfile=$1 comm=$2 pid stat
    [[ -s $pidfile ]] || return 0
    # A daemon removes its own PID file on exit: the file can vanish under us.
    pid=$(tr -dc '0-9' 2>/dev/null <"$pidfile") || return 0
    [[ -n $pid && -r /proc/$pid/stat ]] || return 0
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 0
    stat=${stat##*) } # drop "pid (comm) "
    [[ ${stat%% *} != Z ]] || return 0
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 0
    echo "$pid"
}

stop_one() { # stop_one NAME  (PID file RUN_DIR/NAME.pid, comm NAME)
    local name=$1 pidfile=$RUN_DIR/$1.pid pid i
    pid=$(live_pid "$pidfile" "$name")
    if [[ -z $pid ]]; then
        [[ -e $pidfile ]] && log "$name: not running (stale PID file removed)"
        rm -f "$pidfile"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < GRACE_S * 10; i++)); do
        [[ -z $(live_pid "$pidfile" "$name") ]] && break
        sleep 0.1
    done
    if [[ -n $(live_pid "$pidfile" "$name") ]]; then
        log "$name ($pid): still alive after ${GRACE_S} s, SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            [[ -z $(live_pid "$pidfile" "$name") ]] && break
            sleep 0.1
        done
        if [[ -n $(live_pid "$pidfile" "$name") ]]; then
            log "$name ($pid): survived SIGKILL; PID file kept"
            return 1
        fi
    fi
    log "$name ($pid): stopped"
    rm -f "$pidfile"
}

# --- cancel jobs, while the controller is there to do it -------------------------
CONF=$STATE_DIR/slurm.conf
if [[ -n $(live_pid "$RUN_DIR/slurmctld.pid" slurmctld) && -f $CONF ]] && command -v squeue >/dev/null; then
    export SLURM_CONF=$CONF
    jobs=$(timeout 10 squeue -h -o %i 2>/dev/null || true)
    if [[ -n $jobs ]]; then
        log "cancelling jobs: ${jobs//$'\n'/ }"
        # shellcheck disable=SC2086
        timeout 10 scancel $jobs 2>/dev/null || true
        # Bounded: KillWait (slurm.conf) is 5 s between SIGTERM and SIGKILL.
        for ((i = 0; i < 150; i++)); do
            [[ -z $(timeout 5 squeue -h -t R,CG,PD -o %i 2>/dev/null || true) ]] && break
            sleep 0.1
        done
    fi
fi

rc=0
# slurmd first, munged last: the slurm daemons talk through munge while exiting.
for d in slurmd slurmctld munged; do
    stop_one "$d" || rc=1
done
# Without a controller, a config at the default path makes every SLURM client (and so
# every snakemake start, via the executor plugin) wait for time-outs: remove our link.
conf_link=/etc/slurm/slurm.conf
if [[ -L $conf_link && $(readlink "$conf_link") == "$STATE_DIR/slurm.conf" ]]; then
    rm -f "$conf_link"
fi
log "done in $(awk -v a="$t_start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s"
exit $rc
