#!/usr/bin/env bash
# Side by side, whole process: schedlab and AccaSim (PyPI) running EASY backfilling on KTH-SP2
# (100 processors, each a node of one core), median of REPS runs with peak memory (GNU time);
# beside them the Python package, native EASY and the example Python EASY policy.
#
#   scripts/bench-peers.sh [REPS]         (default 3; PEERS=/work/peers for the venv)
#
# AccaSim is installed from PyPI into a virtual environment outside the repository; none of its
# code is in this repository. CQSim, pyss and Batsim are not published on a registry this
# machine reaches (BENCHMARKS.md, "Against peers").
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
peers=${PEERS:-/work/peers}
bin=target/release/schedlab
trace=workloads/KTH-SP2-1996-2.1-cln.swf.gz
[ -x "$bin" ] || cargo build --release --locked
if [ ! -x "$peers/venv/bin/python" ]; then
    python3 -m venv "$peers/venv"
fi
"$peers/venv/bin/pip" install --quiet 'accasim==1.1.3'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat "$trace" >"$work/kth.swf"
# 100 nodes of one core: KTH-SP2's 100 processors as a pool (no memory resource: the trace has
# none, and AccaSim's EASY divides by every requested resource).
echo '{"groups": {"g0": {"core": 1}}, "resources": {"g0": 100}}' >"$work/kth.config"
# Median seconds and peak RSS (MB) of REPS runs of a command.
measure() {
    local times=() rss=0 t0 t m i
    for ((i = 0; i < reps; i++)); do
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>&1
        t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
        read -r m <"$work/rss"
        times+=("$t")
        ((m > rss)) && rss=$m
    done
    printf '%s\n' "${times[@]}" | sort -g | awk -v rss="$rss" '{ v[NR] = $1 } END { printf "%s %.0f", v[int((NR + 1) / 2)], rss / 1024 }'
}
read -r ours ours_mb <<<"$(measure "$bin" simulate "$work/kth.swf" --scheduler easy --format json)"
py=.venv/bin/python
[ -x "$py" ] || make venv
read -r pynative pynative_mb <<<"$(measure "$py" scripts/peers/python_easy.py "$work/kth.swf" native)"
read -r pypolicy pypolicy_mb <<<"$(measure "$py" scripts/peers/python_easy.py "$work/kth.swf" policy)"
read -r acca acca_mb <<<"$(cd "$work" && measure "$peers/venv/bin/python" "$OLDPWD/scripts/peers/accasim_easy.py" kth.swf kth.config "$work/accasim-results")"
echo "| simulator | command | median s | peak MB | vs schedlab |"
echo "|---|---|---:|---:|---:|"
echo "| schedlab | \`schedlab simulate KTH-SP2 --scheduler easy\` | $ours | $ours_mb | 1 |"
ratio() { awk -v a="$1" -v o="$ours" 'BEGIN { printf "%.1f×", a / o }'; }
echo "| schedlab (Python) | \`schedlab.simulate(KTH-SP2, scheduler=\"easy\")\` | $pynative | $pynative_mb | $(ratio "$pynative") |"
echo "| schedlab (Python) | \`schedlab.simulate(KTH-SP2, policy=EASY())\`, policies/easy.py | $pypolicy | $pypolicy_mb | $(ratio "$pypolicy") |"
echo "| AccaSim 1.1.3 | \`EASYBackfilling(FirstFit())\`, 100 nodes × 1 core | $acca | $acca_mb | $(awk -v a="$acca" -v o="$ours" 'BEGIN { printf "%.0f×", a / o }') |"
echo
echo "Python EASY policy: AccaSim ÷ it = $(awk -v a="$acca" -v p="$pypolicy" 'BEGIN { printf "%.0f×", a / p }')"
"$py" scripts/peers/python_easy.py "$work/kth.swf" calls
