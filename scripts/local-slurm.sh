#!/usr/bin/env bash
# A single-machine Slurm cluster for schedlab's Slurm tests (docs/slurm.md): two nodes, n1 and
# n2, each a slurmd of its own on this machine with all its CPUs and half its memory, so that
# jobs of several nodes run (and sacct records them).
#
#   scripts/local-slurm.sh start    install (when missing) and start munged, slurmctld, slurmd
#   scripts/local-slurm.sh stop     stop exactly the daemons `start` started; remove the state
#   scripts/local-slurm.sh env      print `export SLURM_CONF=…` for a running cluster
#   scripts/local-slurm.sh status   exit 0 when the cluster answers
#   scripts/local-slurm.sh accounting  exit 0 when slurmdbd answers (`sacct` works), else why not
#
# With accounting (the default; SCHEDLAB_SLURM_ACCOUNTING=0 turns it off), `start` also starts
# a MariaDB server of its own (a data directory under the cluster's, on 127.0.0.1 only) and
# slurmdbd on it, so `sacct` answers. When they cannot start, the cluster starts without them:
# `accounting` then exits 1 and prints why (scripts/slurm-tests.sh skips or fails the sacct test
# on that).
#
# Everything lives under one directory, $SCHEDLAB_SLURM_DIR (default
# ${TMPDIR:-/tmp}/schedlab-local-slurm): slurm.conf, the munge key and socket, spool and state
# directories, daemon logs and pid files. Nothing is written to /etc; clients find the cluster
# through SLURM_CONF (`start` prints it). The daemons run as root (Slurm's own users are not
# needed); the Debian packages (slurmctld, slurmd, slurm-client, munge) are installed with
# apt-get when missing, which needs root. No cgroup plugin is used (proctrack/linuxproc,
# task/none), so it runs in containers; select/cons_tres with this machine's CPUs and memory.
# Accounting needs the Debian packages slurmdbd and mariadb-server-core (mariadbd and
# mariadb-install-db, without the system service that mariadb-server would start).
set -euo pipefail

dir=${SCHEDLAB_SLURM_DIR:-${TMPDIR:-/tmp}/schedlab-local-slurm}
conf=$dir/slurm.conf
# Ports away from Slurm's defaults (6817/6818), so a site installation is left alone.
ctld_port=${SCHEDLAB_SLURM_PORT:-16817}
slurmd_port=$((ctld_port + 1))
dbd_port=$((ctld_port + 2))
db_port=$((ctld_port + 3))
# The nodes, each a slurmd listening on its own port (n1 on $slurmd_port, n2 on ctld_port + 4).
nodes=(n1 n2)
node_port() { if [[ $1 == n1 ]]; then echo "$slurmd_port"; else echo $((ctld_port + 4)); fi; }

say() { echo "local-slurm: $*" >&2; }
fail() {
  say "$*"
  exit 2
}

pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }
pid_of() { [[ -f "$1" ]] && cat "$1" || true; }

ensure_packages() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  command -v munged >/dev/null || missing+=(munge)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  install_packages "${missing[@]}" || fail "$install_error"
}

install_error=""
apt_updated=0
# apt-get install "$@"; on failure, $install_error says why.
install_packages() {
  [[ $(id -u) -eq 0 ]] || {
    install_error="missing $*, and installing them needs root"
    return 1
  }
  command -v apt-get >/dev/null || {
    install_error="missing $*, and there is no apt-get"
    return 1
  }
  say "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if [[ $apt_updated == 0 ]]; then
    apt-get update -qq >"$dir.apt.log" 2>&1 || {
      install_error="apt-get update failed (see $dir.apt.log)"
      return 1
    }
    apt_updated=1
  fi
  apt-get install -y -qq --no-install-recommends "$@" >>"$dir.apt.log" 2>&1 || {
    install_error="apt-get install $* failed (see $dir.apt.log)"
    return 1
  }
}

# Polls `$@` (quietly) every 0.25 s for up to 30 s; 0 when it succeeded.
wait_for() {
  for _ in $(seq 1 120); do
    timeout 10 "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}

# Starts MariaDB and slurmdbd for the cluster; on failure returns 1 with the reason in
# $dir/run/accounting.failed, leaving neither running.
start_accounting() {
  local missing=() host
  host=$(hostname -s)
  command -v slurmdbd >/dev/null || missing+=(slurmdbd)
  command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null ||
    missing+=(mariadb-server-core)
  command -v mariadb >/dev/null || missing+=(mariadb-client-core)
  if [[ ${#missing[@]} -gt 0 ]] && ! install_packages "${missing[@]}"; then
    accounting_failed "$install_error"
    return 1
  fi
  mkdir -p "$dir/mysql"
  mariadb-install-db --no-defaults --user=root --datadir="$dir/mysql/data"     --auth-root-authentication-method=socket --skip-test-db     >"$dir/log/mariadb-install.log" 2>&1 || {
    accounting_failed "mariadb-install-db failed (see $dir/log/mariadb-install.log)"
    return 1
  }
  # Its own socket, and a port on 127.0.0.1 only: a site's MariaDB is left alone.
  mariadbd --no-defaults --user=root --datadir="$dir/mysql/data"     --socket="$dir/mysql/mysql.sock" --port="$db_port" --bind-address=127.0.0.1     --pid-file="$dir/run/mariadb.pid" --log-error="$dir/log/mariadb.log"     --innodb-buffer-pool-size=64M --skip-log-bin </dev/null >/dev/null 2>&1 &
  local sql=(mariadb --no-defaults --socket="$dir/mysql/mysql.sock")
  wait_for "${sql[@]}" -e 'select 1' || {
    accounting_failed "mariadbd did not answer in 30 s (see $dir/log/mariadb.log)"
    return 1
  }
  "${sql[@]}" -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'schedlab-local';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" 2>"$dir/log/mariadb-grant.log" || {
    accounting_failed "creating the database user failed (see $dir/log/mariadb-grant.log)"
    return 1
  }
  cat >"$dir/slurmdbd.conf" <<EOF
# Generated by scripts/local-slurm.sh: accounting for the test cluster.
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
DbdHost=$host
DbdPort=$dbd_port
SlurmUser=root
PidFile=$dir/run/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=schedlab-local
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$dir/slurmdbd.conf"
  # slurmdbd reads the slurmdbd.conf beside $SLURM_CONF, which names AccountingStorage*.
  write_config 1 >/dev/null
  slurmdbd >"$dir/log/slurmdbd.out" 2>&1 || {
    accounting_failed "slurmdbd did not start (see $dir/log/slurmdbd.log)"
    return 1
  }
  wait_for sacctmgr -n list cluster || {
    accounting_failed "slurmdbd did not answer in 30 s (see $dir/log/slurmdbd.log)"
    return 1
  }
  timeout 60 sacctmgr -i add cluster schedlab-local >"$dir/log/sacctmgr.log" 2>&1 || {
    accounting_failed "sacctmgr add cluster failed (see $dir/log/sacctmgr.log)"
    return 1
  }
}

accounting_failed() {
  echo "$*" >"$dir/run/accounting.failed"
  say "no accounting: $*"
  stop_accounting
  write_config 0 >/dev/null
}

stop_accounting() {
  local name pid
  for name in slurmdbd mariadb; do
    pid=$(pid_of "$dir/run/$name.pid")
    if pid_alive "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do
        pid_alive "$pid" || break
        sleep 0.1
      done
      pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  return 0
}

write_config() {
  local accounting=${1:-0}
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc)
  # Leave a quarter of the memory (at most 4 GiB) to the system.
  mem_mb=$(awk '/MemTotal/ {m=int($2/1024); r=int(m/4); if (r>4096) r=4096; print m-r}' /proc/meminfo)
  mkdir -p "$dir"/{ctld,spool,log,run,munge}
  chmod 700 "$dir/munge"
  cat >"$conf" <<EOF
# Generated by scripts/local-slurm.sh: a single-machine cluster for tests.
ClusterName=schedlab-local
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(if [[ $accounting == 1 ]]; then
    echo "AccountingStorageType=accounting_storage/slurmdbd"
    echo "AccountingStorageHost=$host"
    echo "AccountingStoragePort=$dbd_port"
    # The munge socket for slurmdbd's connections (Slurm reads it from here, not AuthInfo).
    echo "AccountingStoragePass=$dir/munge/munge.socket"
  else
    echo "AccountingStorageType=accounting_storage/none"
  fi)
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
DefMemPerCPU=$((mem_mb / 2 / cpus))
MaxArraySize=1001
MinJobAge=300
KillWait=5
SchedulerParameters=sched_interval=2,bf_interval=2
$(for n in "${nodes[@]}"; do
    echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$(node_port "$n") CPUs=$cpus RealMemory=$((mem_mb / 2)) State=UNKNOWN"
  done)
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$dir/plugstack.conf"
  echo "export SLURM_CONF=$conf"
}

start() {
  if [[ -f "$dir/run/started" ]] && pid_alive "$(pid_of "$dir/run/slurmctld.pid")"; then
    say "already running ($conf)"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  mkdir -p "$(dirname "$dir")"
  ensure_packages
  stop_daemons quiet
  rm -rf "$dir"
  mkdir -p "$dir"
  write_config 0 >/dev/null
  export SLURM_CONF=$conf
  local t0=$SECONDS
  # munge: a fresh key, its own socket, run as root (--force: munged warns against root).
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" || fail "munged did not start (see $dir/log/munged.log)"
  # Accounting first: slurmctld reads at start whether it has a slurmdbd.
  if [[ ${SCHEDLAB_SLURM_ACCOUNTING:-1} == 1 ]]; then
    start_accounting &&
      say "accounting: slurmdbd on port $dbd_port, MariaDB on 127.0.0.1:$db_port"
  else
    echo "turned off (SCHEDLAB_SLURM_ACCOUNTING=0)" >"$dir/run/accounting.failed"
  fi
  slurmctld -f "$conf" || fail "slurmctld did not start (see $dir/log/slurmctld.log)"
  local n
  for n in "${nodes[@]}"; do
    mkdir -p "$dir/spool/$n"
    slurmd -f "$conf" -N "$n" || fail "slurmd of $n did not start (see $dir/log/slurmd-$n.log)"
  done
  touch "$dir/run/started"
  # Ready when every node is idle.
  local state=""
  for _ in $(seq 1 120); do
    state=$(sinfo -h -N -o %T 2>/dev/null | sort -u | tr '\n' ' ' || true)
    [[ $state == "idle " ]] && break
    sleep 0.25
  done
  if [[ $state != "idle " ]]; then
    say "the nodes did not become idle (states '${state}'); logs in $dir/log"
    tail -5 "$dir/log/slurmctld.log" "$dir/log"/slurmd-*.log >&2 || true
    stop_daemons quiet
    exit 1
  fi
  say "up in $((SECONDS - t0)) s: nodes ${nodes[*]} of $(nproc) CPUs each, partition debug ($conf)"
  echo "export SLURM_CONF=$conf"
}

# Stops the daemons whose pid files this script's directory holds, newest first.
stop_daemons() {
  local quiet=${1:-}
  local name pid
  for name in slurmd-n2 slurmd-n1 slurmctld slurmdbd mariadb munged; do
    pid=$(pid_of "$dir/run/$name.pid")
    if pid_alive "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do
        pid_alive "$pid" || break
        sleep 0.1
      done
      pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
      [[ -z $quiet ]] && say "stopped $name ($pid)"
    fi
  done
  return 0
}

stop() {
  [[ -d $dir ]] || {
    say "not running"
    return 0
  }
  stop_daemons
  rm -rf "$dir"
}

case ${1:-} in
start) start ;;
stop) stop ;;
env) echo "export SLURM_CONF=$conf" ;;
# Without its slurm.conf, sinfo would look for a cluster in DNS (a minute of timeouts).
status) [[ -f $conf ]] && SLURM_CONF=$conf sinfo -h -o %T >/dev/null 2>&1 ;;
accounting)
  if [[ -f $dir/run/accounting.failed ]]; then
    cat "$dir/run/accounting.failed"
    exit 1
  fi
  SLURM_CONF=$conf timeout 10 sacctmgr -n list cluster >/dev/null 2>&1 || {
    echo "slurmdbd does not answer (see $dir/log/slurmdbd.log)"
    exit 1
  }
  ;;
*)
  echo "usage: $0 start|stop|env|status|accounting" >&2
  exit 2
  ;;
esac
