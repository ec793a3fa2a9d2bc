#!/usr/bin/env bash
# Whole-command time and peak memory of `schedlab simulate`, EASY next to conservative, on every
# bundled trace (workloads/) and every shared trace (../shared/workloads/*.swf.gz).
#
#   scripts/bench-conservative.sh [BINARY] [REPS]      (defaults: target/release/schedlab, 3)
#
# Prints one Markdown row per trace: median seconds and peak RSS of each scheduler (GNU time),
# and conservative's time as a multiple of EASY's. A run longer than 120 s is not repeated
# (its single time is printed). Used for issue 10's before/after figures (`git log -p BENCHMARKS.md`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/schedlab}
reps=${2:-3}
# Traces whose header has no MaxProcs line: their machine size (../shared/workloads/README.md).
procs_of() {
    case "$1" in
        *METACENTRUM-2009-2*) echo "--procs 806" ;;
        *RICC-2010-2*) echo "--procs 8192" ;;
        *) echo "" ;;
    esac
}
# Median seconds and max RSS (MB) of REPS runs of: schedlab simulate TRACE --scheduler KIND ...
measure() {
    local trace=$1 kind=$2 times=() rss=0 t m i
    for ((i = 0; i < reps; i++)); do
        local t0=$EPOCHREALTIME
        # shellcheck disable=SC2046
        /usr/bin/time -f '%M' -o /tmp/bench-conservative.$$ \
            "$bin" simulate "$trace" --scheduler "$kind" --lenient --format json $(procs_of "$trace") >/dev/null
        t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
        read -r m </tmp/bench-conservative.$$
        times+=("$t")
        ((m > rss)) && rss=$m
        if awk -v t="$t" 'BEGIN { exit !(t > 120) }'; then break; fi
    done
    rm -f /tmp/bench-conservative.$$
    printf '%s\n' "${times[@]}" | sort -g | awk -v rss="$rss" '{ v[NR] = $1 } END { printf "%s %.0f", v[int((NR + 1) / 2)], rss / 1024 }'
}
echo "| trace | EASY s | EASY MB | conservative s | conservative MB | conservative / EASY |"
echo "|---|---:|---:|---:|---:|---:|"
for trace in workloads/*.swf.gz ../shared/workloads/*.swf.gz; do
    [ -f "$trace" ] || continue
    # A shared trace also bundled in workloads/ is measured once.
    [[ $trace == ../shared/* && -f workloads/$(basename "$trace") ]] && continue
    read -r es em <<<"$(measure "$trace" easy)"
    read -r cs cm <<<"$(measure "$trace" conservative)"
    ratio=$(awk -v c="$cs" -v e="$es" 'BEGIN { printf "%.1f", c / e }')
    echo "| $(basename "$trace" .swf.gz) | $es | $em | $cs | $cm | $ratio |"
done
