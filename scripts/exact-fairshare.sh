#!/usr/bin/env bash
# Byte-identical schedules of two builds under fairshare and priority orders: `--format json`,
# `--jobs-out` and stderr of `schedlab simulate`, compared run by run (session 23, branch
# `s23-fsusers`; BENCHMARKS.md, "Fairshare queue order").
#
#   scripts/exact-fairshare.sh OLD NEW [FILTER]     (FILTER: a grep pattern on the run names)
#
# Runs: four shared traces under every pool rule × fairshare, priority, re-ordering periods,
# periodic calls and fairshare settings (decay, charging, shares); the scale bench's Curie window
# (scripts/curie-window.py) at 500 and 5,000 nodes, node-level and pool; METACENTRUM-2009 on
# mc-2013; AleaNG's Example1 at 100 % load with its fairshare settings, with and without its
# queues. Prints the runs that differ and `runs=N fail=M`; exits 1 when any differs.
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$1 NEW=$2 F=${3:-.}
W=${SCHEDLAB_SHARED:-../shared}/workloads
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
python3 scripts/curie-window.py 2000 500 "$D" && python3 scripts/curie-window.py 2000 5000 "$D" &&
    python3 scripts/curie-window.py 20000 500 "$D" || exit 2
fs() { # a fairshare YAML in $D
    printf '%s\n' "$2" > "$D/$1.yaml"
}
fs decay $'penalty: cpu\ncharging: estimate\ndecay: {factor: 0.75, every: 86400}'
fs halflife $'charging: estimate\ndecay: {half_life: 604800}'
fs continuous 'charging: continuous'
fs groups $'shares:\n  hierarchy: groups'
fs aleang-ours $'penalty: cpu\ncharging: continuous\ndecay: {factor: 0.75, every: 172800}\nshares:\n  hierarchy: groups\n  users: {0: 2, 1: 2, 2: 1, 3: 1}\n  groups: {0: 2, 1: 1}'
fs aleang-start $'penalty: cpu\ncharging: estimate\ndecay: {factor: 0.75, every: 172800}\nshares:\n  users: {0: 2, 1: 2, 2: 1, 3: 1}'
A=$W/aleang-example1
E1="$A/Example1-load_100%-urgent_10%-instance_0.swf"
echo "aleang: $(realpath "$E1")" > "$D/q100.yaml"
n=0 fail=0
run() { # NAME ARGS...: one run of each build, compared
    local name=$1 b bin rc
    shift
    grep -q -- "$F" <<<"$name" || return 0
    for b in old new; do
        bin=$OLD
        [ $b = new ] && bin=$NEW
        "$bin" simulate "$@" --format json --jobs-out "$D/$b.parquet" >"$D/$b.json" 2>"$D/$b.err"
        rc=$?
        echo "rc=$rc" >>"$D/$b.err"
        [ $rc != 0 ] && echo "rc=$rc $b $name"
    done
    n=$((n + 1))
    if ! cmp -s "$D/old.json" "$D/new.json" || ! cmp -s "$D/old.parquet" "$D/new.parquet" ||
        ! cmp -s "$D/old.err" "$D/new.err"; then
        echo "DIFF $name"
        fail=$((fail + 1))
    fi
}
for t in KTH-SP2-1996-2.1-cln SDSC-SP2-1998-4.2-cln SDSC-BLUE-2000-4.2-cln CTC-SP2-1996-3.1-cln; do
    for s in fcfs easy aggressive conservative; do
        run "$t $s fairshare" -s $s --order fairshare "$W/$t.swf.gz"
        run "$t $s priority" -s $s --order priority "$W/$t.swf.gz"
        run "$t $s fairshare reorder300" -s $s --order fairshare --reorder 300 "$W/$t.swf.gz"
        run "$t $s fairshare reorderstart" -s $s --order fairshare --reorder start "$W/$t.swf.gz"
        run "$t $s fairshare interval600" -s $s --order fairshare --interval 600 "$W/$t.swf.gz"
    done
    for s in fcfs easy; do
        for y in decay halflife continuous groups; do
            run "$t $s fairshare $y" -s $s --order fairshare --fairshare "$D/$y.yaml" "$W/$t.swf.gz"
        done
        run "$t $s priority decay" -s $s --order priority --fairshare "$D/decay.yaml" "$W/$t.swf.gz"
        run "$t $s fairshare decay reorderstart" -s $s --order fairshare --reorder start \
            --fairshare "$D/decay.yaml" "$W/$t.swf.gz"
    done
done
for nodes in 500 5000; do
    procs=$(((nodes - nodes / 15) * 16 + (nodes / 15) * 32))
    for o in fcfs fairshare; do
        for s in fcfs easy conservative; do
            run "curie$nodes node $s $o" -s $s --order $o --machines "$D/curie-$nodes.machines" "$D/curie-2000.swf"
            run "curie$nodes pool $s $o" -s $s --order $o --procs $procs "$D/curie-2000.swf"
        done
    done
    for s in fcfs easy; do
        run "curie$nodes node $s fairshare decay" -s $s --order fairshare --fairshare "$D/decay.yaml" \
            --machines "$D/curie-$nodes.machines" "$D/curie-2000.swf"
    done
done
run "curie500 node easy fairshare 20000" -s easy --order fairshare --machines "$D/curie-500.machines" "$D/curie-20000.swf"
run "curie500 pool easy fairshare 20000" -s easy --order fairshare --procs 8528 "$D/curie-20000.swf"
for s in fcfs easy conservative; do
    for o in fcfs fairshare priority; do
        run "metacentrum $s $o" -s $s --order $o --machines workloads/mc-2013.swf.machines \
            --used-memory-fallback "$W/METACENTRUM-2009-2.swf.gz"
    done
done
EX=(--machines "$A/Example1-load_100%-urgent_10%-instance_0.swf.machines" --allocation exclusive --memory kb_per_node)
for s in fcfs easy aggressive; do
    for q in none aleang; do
        Q=()
        [ $q = aleang ] && Q=(--queues "$D/q100.yaml")
        run "aleang $s ours $q" -s $s --order fairshare --reorder 60 --fairshare "$D/aleang-ours.yaml" "${EX[@]}" "${Q[@]}" "$E1"
        run "aleang $s start $q" -s $s --order fairshare --reorder start --fairshare "$D/aleang-start.yaml" "${EX[@]}" "${Q[@]}" "$E1"
        run "aleang $s call $q" -s $s --order fairshare --fairshare "$D/aleang-start.yaml" "${EX[@]}" "${Q[@]}" "$E1"
    done
done
echo "runs=$n fail=$fail"
[ $fail = 0 ]
