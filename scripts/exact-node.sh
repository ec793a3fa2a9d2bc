#!/usr/bin/env bash
# Byte-identical node-level schedules of two builds: `--format json`, `--jobs-out`,
# `--reservations-out` and stderr of `schedlab simulate`, compared run by run. The runs that go
# through the topology's timeline and free-node counts (node-level EASY and conservative, best
# fit, exclusive nodes, reservations), the companion of scripts/exact-fairshare.sh (which covers
# the orders on pools and the fairshare settings).
#
#   scripts/exact-node.sh OLD NEW [FILTER]     (FILTER: a grep pattern on the run names)
#
# Runs: the scale bench's Curie window (scripts/curie-window.py) at 500, 5,000 and 50,000 nodes
# under EASY and conservative × fcfs, fairshare and priority orders (and EASY on 20,000 jobs at
# 500 nodes); best fit; exclusive nodes; memory ignored; two reservation scenarios (at the requested
# time with shifts; after the queue, rejected on conflict, throttled) under every rule;
# METACENTRUM-2009 on mc-2013 and wagap-2013 on its machines; AleaNG's Example1 at 50 % and 100 %
# load. Prints the runs that differ and `runs=N fail=M`; exits 1 when any differs.
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$1 NEW=$2 F=${3:-.}
W=${SCHEDLAB_SHARED:-../shared}/workloads
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
for n in 500 5000 50000; do
    python3 scripts/curie-window.py 2000 $n "$D" || exit 2
done
python3 scripts/curie-window.py 20000 500 "$D" || exit 2
cat >"$D/res-shift.yaml" <<'EOF'
generate:
  per_week: 20
  nodes: {uniform: [4, 64]}
  hours: {uniform: [2, 12]}
  notice_hours: {uniform: [1, 48]}
  owners: 3
placement: at_requested_time
on_conflict: shift
EOF
cat >"$D/res-throttled.yaml" <<'EOF'
generate:
  per_week: 40
  nodes: {uniform: [8, 128]}
  hours: {uniform: [1, 18]}
  notice_hours: {uniform: [0, 24]}
  owners: 5
placement: after_queue
throttle:
  window_days: 7
  max_node_hours: 3072
  max_per_owner: 3
EOF
n=0 fail=0
run() { # NAME ARGS...: one run of each build, compared
    local name=$1 b bin rc extra
    shift
    grep -q -- "$F" <<<"$name" || return 0
    for b in old new; do
        bin=$OLD
        [ $b = new ] && bin=$NEW
        extra=()
        # One name for both builds: the jobs file's metadata records the command line.
        [[ " $* " == *" --reservations "* ]] && extra=(--reservations-out "$D/res.parquet")
        "$bin" simulate "$@" "${extra[@]}" --format json --jobs-out "$D/$b.parquet" \
            >"$D/$b.json" 2>"$D/$b.err"
        rc=$?
        [ -f "$D/res.parquet" ] && mv "$D/res.parquet" "$D/$b.res.parquet"
        echo "rc=$rc" >>"$D/$b.err"
        [ $rc != 0 ] && echo "rc=$rc $b $name"
    done
    n=$((n + 1))
    local same=1
    for f in json parquet err; do
        cmp -s "$D/old.$f" "$D/new.$f" || same=0
    done
    if [[ " $* " == *" --reservations "* ]]; then
        cmp -s "$D/old.res.parquet" "$D/new.res.parquet" || same=0
    fi
    if [ $same = 0 ]; then
        echo "DIFF $name"
        fail=$((fail + 1))
    fi
}
C=$D/curie-2000.swf
for nodes in 500 5000 50000; do
    M=(--machines "$D/curie-$nodes.machines")
    for s in easy conservative; do
        for o in fcfs fairshare priority; do
            run "curie$nodes $s $o" -s $s --order $o "${M[@]}" "$C"
        done
    done
done
M=(--machines "$D/curie-500.machines")
for s in easy conservative; do
    run "curie500 $s best_fit" -s $s --placement best_fit "${M[@]}" "$C"
    run "curie500 $s fairshare best_fit" -s $s --order fairshare --placement best_fit "${M[@]}" "$C"
    run "curie500 $s exclusive" -s $s --allocation exclusive "${M[@]}" "$C"
    run "curie500 $s ignore_memory" -s $s --ignore-memory "${M[@]}" "$C"
done
for o in fcfs fairshare; do # (conservative on 20,000 jobs: minutes a run)
    run "curie500 easy $o 20000" -s easy --order $o "${M[@]}" "$D/curie-20000.swf"
done
for r in shift throttled; do
    for s in fcfs easy conservative aggressive; do
        run "curie500 $s reservations $r" -s $s --reservations "$D/res-$r.yaml" "${M[@]}" "$C"
    done
    run "curie500 conservative fairshare reservations $r" -s conservative --order fairshare \
        --reservations "$D/res-$r.yaml" "${M[@]}" "$C"
done
for s in easy conservative; do
    for o in fcfs fairshare; do
        run "metacentrum $s $o" -s $s --order $o --machines workloads/mc-2013.swf.machines \
            --used-memory-fallback "$W/METACENTRUM-2009-2.swf.gz"
        run "wagap $s $o" -s $s --order $o --machines workloads/wagap-2013.swf.machines \
            workloads/wagap-2013.swf.gz
    done
done
A=workloads/aleang-example1
for load in 50 100; do
    for s in easy conservative; do
        run "aleang$load $s" -s $s --machines $A/example1.swf.machines --allocation exclusive \
            --memory kb_per_node "$A/Example1-load_${load}%-urgent_10%-instance_0.swf.gz"
    done
done
echo "runs=$n fail=$fail"
[ $fail = 0 ]
