#!/usr/bin/env bash
# Starts or stops a throwaway one-node Slurm cluster (munged + slurmctld + slurmd, all as root) whose configs, key,
# state, logs and pid files live in DIR, for tests on a CI machine. Needs Debian's slurm-wlm and munge packages;
# installs nothing and reads nothing from /etc/slurm, /etc/munge or systemd.
#   Scripts/slurm-cluster.sh start DIR   # prints `export SLURM_CONF=DIR/slurm.conf` once the node is idle
#   Scripts/slurm-cluster.sh stop DIR    # cancels its jobs, stops the daemons it started (by recorded pid)
set -euo pipefail

# The daemons live in sbin, which a non-login root shell may lack.
PATH=$PATH:/usr/sbin:/sbin
usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf

# Picks a TCP port nobody listens on; a random start keeps two clusters (or a quick restart) from colliding.
free_port() {
    local port=$((20000 + RANDOM % 20000))
    while (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null || [ "$port" = "${1:-}" ]; do port=$((port + 1)); done
    echo "$port"
}

# Starts a daemon in its foreground mode (so $! is the daemon) detached from our stdio (a caller capturing our output
# must see EOF) and session; its stderr is its log. Records the pid: `stop` kills exactly that pid.
spawn() {
    local name=$1; shift
    setsid "$@" </dev/null >"$dir/log/$name.log" 2>&1 &
    echo $! >"$dir/run/$name.pid"
}

start() {
    local tool
    for tool in munged munge slurmctld slurmd sbatch sinfo; do
        command -v "$tool" >/dev/null || { echo "slurm-cluster: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
    done
    # munged requires every directory above its socket to be searchable by all, and the key's not writable by others.
    chmod 0755 "$dir"
    mkdir -p "$dir/log" "$dir/run" "$dir/state" "$dir/spool"
    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$dir/munge.key"
    # --force: tolerate a CI temp dir whose ancestors munged finds insecure (it refuses otherwise); the key is
    # throwaway. In the foreground (-F) munged logs to stderr. Its pid file is the one spawn writes (same pid).
    spawn munged munged -F --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
        --pid-file="$dir/run/munged.pid" --seed-file="$dir/munged.seed"

    local host node ctld_port slurmd_port
    host=$(hostname -s)
    # The node's real CPUs, sockets and memory, as slurmd will report them (a mismatch would drain the node).
    node=$(slurmd -C | grep '^NodeName=')
    ctld_port=$(free_port)
    slurmd_port=$(free_port "$ctld_port")
    : >"$dir/plugstack.conf" # keeps slurmd from reading /etc/slurm/plugstack.conf
    cat >"$conf" <<EOF
ClusterName=filmstrip
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
PlugStackConfig=$dir/plugstack.conf
MailProg=/bin/true
# No cgroups in a container: track processes through /proc and bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
# CR_CPU: one CPU per task, so array tasks share the node and run side by side.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Short timeouts so a test notices trouble quickly; KillWait is SIGTERM-to-SIGKILL grace on scancel/time limit.
SlurmdTimeout=30
MessageTimeout=10
KillWait=5
ReturnToService=2
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    # Wait for munged's socket before the Slurm daemons try to authenticate through it.
    for _ in $(seq 50); do [ -S "$dir/munge.socket" ] && break; sleep 0.1; done
    export SLURM_CONF=$conf
    spawn slurmctld slurmctld -D -i -f "$conf"
    spawn slurmd slurmd -D -f "$conf"
    for _ in $(seq 60); do
        if [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ]; then
            echo "export SLURM_CONF=$conf"
            return
        fi
        sleep 1
    done
    echo "slurm-cluster: node not idle after 60 s" >&2
    sinfo -N -l >&2 || true
    tail -n 30 "$dir"/log/* >&2 || true
    stop
    exit 1
}

stop() {
    # Cancel this cluster's jobs first so no slurmstepd or job process outlives slurmd (only while slurmctld runs:
    # scancel retries a dead controller for ~18 s).
    if [ -f "$dir/run/slurmctld.pid" ] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null &&
        SLURM_CONF=$conf scancel --user=root 2>/dev/null; then
        for _ in $(seq 20); do [ -z "$(SLURM_CONF=$conf squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 0.5; done
    fi
    # SIGTERM all three at once (each takes 1-2 s to exit), wait up to 10 s, then SIGKILL any straggler.
    local name pid pids=()
    for name in slurmd slurmctld munged; do
        [ -f "$dir/run/$name.pid" ] || continue
        pid=$(cat "$dir/run/$name.pid")
        rm -f "$dir/run/$name.pid"
        # Only if the pid is still our daemon (its command line names DIR), not a process that reused the pid.
        if tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$dir/"; then pids+=("$pid"); fi
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    kill "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "${pids[@]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[@]}" 2>/dev/null || true
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
