#!/usr/bin/env bash
# A real Slurm cluster of N emulated nodes (n1..nN) on this one host, for benchdb's Slurm tests
# (tests/slurm) and for trying `benchdb slurm collect` / `benchdb slurm comm` without a cluster.
# Debian's slurm-wlm is built with multiple-slurmd support: every node is a slurmd of its own
# (`slurmd -N nI`, own port, spool, pid and log file); jobs see SLURMD_NODENAME=nI, which is
# what benchdb records as the host.  Needs root.  Idempotent: `start` on a running cluster of the
# same size only checks it; `stop` on a stopped one does nothing.
#   bash scripts/slurm-local-cluster.sh start [NODES]   install slurm-wlm + munge if missing, start
#   bash scripts/slurm-local-cluster.sh stop
#   bash scripts/slurm-local-cluster.sh status
set -euo pipefail
cmd=${1:-start}
nodes=${2:-2}
conf=/etc/slurm/slurm.conf

wait_for() {  # wait_for SECONDS CMD...: true once CMD succeeds
  local n=$1; shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  return 1
}
idle_nodes() { sinfo -h -t idle -o %D 2>/dev/null | grep -qx "$nodes"; }
no_daemons() { ! pgrep -x slurmctld && ! pgrep -x slurmd; }

case $cmd in
  stop)
    scontrol shutdown 2>/dev/null || true
    for p in $(pgrep -x slurmd || true); do kill "$p" 2>/dev/null || true; done
    wait_for 30 no_daemons || { echo "slurm daemons still running" >&2; exit 1; }
    exit 0
    ;;
  status)
    sinfo
    exit 0
    ;;
  start) ;;
  *)
    echo "usage: $0 start [NODES] | stop | status" >&2
    exit 2
    ;;
esac

[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "NODES must be a positive integer, got $nodes" >&2; exit 2; }
if pgrep -x slurmctld >/dev/null && grep -q "^NodeName=n\[1-$nodes\] " "$conf" 2>/dev/null \
  && idle_nodes; then
  sinfo
  exit 0
fi
bash "$0" stop

if ! command -v slurmctld >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge
fi
mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge /var/spool/slurmctld /var/log/slurm
[[ -f /etc/munge/munge.key ]] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge
chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged

host=$(hostname)
cpus=$(($(nproc) / nodes))
((cpus >= 1)) || cpus=1
mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / nodes / 2))
mkdir -p /etc/slurm
cat >"$conf" <<CONF
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmdPidFile=/run/slurmd-%n.pid
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
SlurmctldLogFile=/var/log/slurm/slurmctld.log
ReturnToService=2
KillWait=5
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=n[1-$nodes] NodeHostname=$host Port=[17001-$((17000 + nodes))] CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP
CONF
/usr/sbin/slurmctld
wait_for 30 bash -c "scontrol ping | grep -q UP" || { echo "slurmctld did not come up" >&2; exit 1; }
for i in $(seq 1 "$nodes"); do
  mkdir -p "/var/spool/slurmd/n$i"
  /usr/sbin/slurmd -N "n$i"
done
wait_for 60 idle_nodes || { sinfo >&2; echo "the $nodes nodes did not become idle" >&2; exit 1; }
sinfo
