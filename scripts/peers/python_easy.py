"""Whole-process runs for scripts/bench-peers.sh: KTH-SP2 under EASY through the Python package,
either the native rule (``native``) or the example Python policy (``policy``), whose per-call
cost it also reports on request (``calls``: mean microseconds per call by queue length)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "policies"))

import schedlab  # noqa: E402

from easy import EASY  # noqa: E402

trace, mode = sys.argv[1], sys.argv[2]
if mode == "native":
    schedlab.simulate(trace, scheduler="easy")
elif mode == "policy":
    schedlab.simulate(trace, policy=EASY())
elif mode == "calls":
    # Time inside decide() by queue length, and the whole run against the native one: what a
    # call costs beyond the policy's own work is the crossing (view, arrays, checks).
    buckets: dict[int, list[float]] = {}

    class Timed(EASY):
        def decide(self, view):
            t0 = time.perf_counter()
            rows = super().decide(view)
            n = len(view.waiting)
            key = 1 if n <= 1 else 10 ** len(str(n - 1)) // 10 * 10 if n > 10 else 10
            buckets.setdefault(key, []).append(time.perf_counter() - t0)
            return rows

    t0 = time.perf_counter()
    native = schedlab.simulate(trace, scheduler="easy")
    t1 = time.perf_counter()
    result = schedlab.simulate(trace, policy=Timed())
    t2 = time.perf_counter()
    inside = sum(sum(v) for v in buckets.values())
    crossing = (t2 - t1) - (t1 - t0) - inside
    print(f"native {t1 - t0:.3f} s, policy {t2 - t1:.3f} s, {result.policy_calls} calls")
    print(
        f"per call: {1e6 * (t2 - t1 - (t1 - t0)) / result.policy_calls:.1f} µs in all, "
        f"{1e6 * inside / result.policy_calls:.1f} µs inside decide, "
        f"{1e6 * crossing / result.policy_calls:.1f} µs crossing and checks"
    )
    print("| waiting jobs | calls | µs per call inside decide |")
    print("|---|---:|---:|")
    for key in sorted(buckets):
        v = buckets[key]
        label = "1" if key == 1 else f"≤ {key}"
        print(f"| {label} | {len(v)} | {1e6 * sum(v) / len(v):.1f} |")
