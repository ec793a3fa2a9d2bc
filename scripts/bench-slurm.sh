#!/usr/bin/env bash
# The Slurm overhead figure of BENCHMARKS.md: a 1,000-cell grid of tiny simulations through the
# local single-machine Slurm (scripts/local-slurm.sh) versus `-j 2` on this machine. Prints the
# median wall time of RUNS fresh runs of each (default 3), the sbatch calls and array tasks, and
# checks that both give byte-identical results.
#   scripts/bench-slurm.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
bin=$PWD/target/release/schedlab
[[ -x $bin ]] || cargo build --release --locked
started_here=0
if ! scripts/local-slurm.sh status; then
  scripts/local-slurm.sh start >/dev/null
  started_here=1
fi
eval "$(scripts/local-slurm.sh env)"
export SLURM_CONF
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  if [[ $started_here == 1 ]]; then scripts/local-slurm.sh stop; fi
}
trap cleanup EXIT
mkdir -p "$work/experiments"
cat >"$work/experiments/grid.yaml" <<'YAML'
name: grid
workloads:
  tiny:
    synthetic:
      length: {jobs: 300}
      users:
        - name: u
          count: 4
          arrivals: {lambda: 6.944e-5, delta: 2.778e-4, mu: 2.778e-3}
          runtime: [[1, 0.0], [600, 0.5], [7200, 1.0]]
          procs: {log_uniform: [1, 32]}
clusters:
  pool: {procs: 64}
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
replicas: 100
grid:
  axes:
    scheduler: [fcfs, easy]
    interval: [null, 300, 600, 1800, 3600]
YAML
echo "slurm:" >"$work/schedlab.yaml"
echo "  poll_seconds: 2" >>"$work/schedlab.yaml"
cd "$work"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_of() { # command… → wall seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.err"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
local_times=() slurm_times=()
for r in $(seq 1 "$runs"); do
  rm -rf local slurm
  local_times+=("$(time_of "$bin" run -j 2 --results local)")
  slurm_times+=("$(time_of "$bin" run --executor slurm --results slurm)")
  grep -o 'submitted .*' "$work/last.err" | head -1 >"$work/submitted"
done
for f in summary jobs timeseries reservations; do
  cmp -s "local/grid/$f.parquet" "slurm/grid/$f.parquet" || {
    echo "results differ: $f" >&2
    exit 1
  }
done
echo "entries: $(find local/.schedlab/entries -mindepth 2 -maxdepth 2 -type d | wc -l) (cells + aggregate)"
echo "local -j 2 median s: $(printf '%s\n' "${local_times[@]}" | median)  (runs: ${local_times[*]})"
echo "slurm median s:      $(printf '%s\n' "${slurm_times[@]}" | median)  (runs: ${slurm_times[*]})"
echo "slurm: $(cat "$work/submitted")"
echo "results byte-identical"
