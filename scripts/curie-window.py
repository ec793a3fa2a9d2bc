#!/usr/bin/env python3
"""Writes the scale bench's Curie-shaped window (benches/scale.rs: `curie_jobs`, `curie_topology`)
as an SWF trace and an Alea machine file, for whole `schedlab simulate` runs and profiles:

    scripts/curie-window.py JOBS NODES OUTDIR  # OUTDIR/curie-JOBS.swf, curie-NODES.machines

The same SplitMix64 stream and arithmetic as the bench (memory in field 10, KB per processor).
The machine file lists the thin and fat nodes as two clusters, where the bench has one cluster of
two classes: the same nodes, not necessarily the bench's schedules. Pool runs take
`--procs` = thin × 16 + fat × 32 (8,528 at 500 nodes, 85,328 at 5,000).
"""

import math
import sys

MASK = (1 << 64) - 1


class Rng:
    def __init__(self, seed):
        self.x = seed

    def next(self):
        self.x = (self.x + 0x9E3779B97F4A7C15) & MASK
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def unit(self):
        return (self.next() >> 11) / float(1 << 53)

    def log_uniform(self, lo, hi):
        return math.exp(math.log(lo) + self.unit() * (math.log(hi) - math.log(lo)))


def main():
    n, nodes, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng, submit, lines = Rng(0x0C0EC0E1), 0.0, []
    for i in range(n):
        submit += -176.0 * math.log(1.0 - rng.unit())
        if rng.unit() < 1.0 / 3.0:
            procs = 1 + rng.next() % 16
        else:
            procs = 1 << (5 + rng.next() % 10)
        runtime = math.floor(rng.log_uniform(60.0, 43_200.0) + 0.5)  # Rust's round, x > 0
        requested = min(math.ceil(runtime * (1.0 + 2.0 * rng.unit()) / 3600.0) * 3600, 86_400)
        requested = max(requested, min(runtime, 86_400))
        memory = [0, 1024 * 1024, 3584 * 1024][rng.next() % 3]
        user = rng.next() % 200
        lines.append(
            f"{i + 1} {int(submit)} -1 {runtime} {procs} -1 -1 {procs} {requested} "
            f"{memory if memory > 0 else -1} 1 {user} -1 -1 -1 -1 -1 -1"
        )
    with open(f"{out}/curie-{n}.swf", "w") as f:
        f.write("\n".join(lines) + "\n")
    fat = nodes // 15
    with open(f"{out}/curie-{nodes}.machines", "w") as f:
        f.write(f"0\tthin\t{nodes - fat}\t16\t1\t{64 * 1024 * 1024}\n")
        f.write(f"1\tfat\t{fat}\t32\t1\t{128 * 1024 * 1024}\n")


if __name__ == "__main__":
    main()
