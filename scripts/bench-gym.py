"""Decisions per second of schedlab.gym (BENCHMARKS.md, "Reinforcement-learning environment").

    taskset -c 0 .venv/bin/python scripts/bench-gym.py [trace]

- single: SchedulingEnv driven from a Python loop with random valid actions (numpy draws one
  slot below the mask's count), every other parameter at its default;
- vec: SchedulingVecEnv with n_envs environments, random valid actions drawn for all of them
  at once (one numpy call per step);
- native: the same as vec with n_envs=64, calling the native module directly;
- memory: resident memory per environment, from a vectorised environment of 512 after reset.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

import numpy as np

from schedlab.gym import SchedulingEnv, SchedulingVecEnv

ROOT = Path(__file__).resolve().parents[1]
TRACE = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "workloads/KTH-SP2-1996-2.1-cln.swf.gz")


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def single(seconds: float = 5.0) -> tuple[float, int]:
    env = SchedulingEnv(TRACE)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps = episodes = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(1000):
            obs, reward, done, _, _ = env.step(int(rng.integers(obs["mask"].sum())))
            if done:
                episodes += 1
                obs, _ = env.reset()
        steps += 1000
    return steps / (time.perf_counter() - began), episodes


def vec(n_envs: int, seconds: float = 5.0, **kwargs) -> float:
    env = SchedulingVecEnv(TRACE, n_envs=n_envs, **kwargs)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(100):
            valid = obs["mask"].sum(axis=1)
            obs, *_ = env.step((rng.random(n_envs) * valid).astype(np.int64))
        steps += 100
    return steps * n_envs / (time.perf_counter() - began)


def native(n_envs: int = 64, seconds: float = 5.0) -> float:
    """The native step alone: the package's GymEnvs without the Gymnasium wrapper."""
    env = SchedulingVecEnv(TRACE, n_envs=n_envs)._native
    k = env.k
    rng = np.random.default_rng(0)
    mask = env.reset(0)[2]
    steps = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(100):
            valid = np.frombuffer(mask, dtype=np.int8).reshape(n_envs, k).sum(axis=1)
            mask = env.step_many((rng.random(n_envs) * valid).astype(np.int64).tobytes())[2]
        steps += 100
    return steps * n_envs / (time.perf_counter() - began)


def memory(n: int = 512) -> float:
    before = rss_kb()
    env = SchedulingVecEnv(TRACE, n_envs=n)
    env.reset(seed=0)
    after = rss_kb()
    return (after - before) / n


def main():
    print(f"trace: {TRACE}")
    rate, episodes = single()
    print(f"single env, Python loop, random actions: {rate:,.0f} steps/s ({episodes} episodes)")
    for n in (8, 64, 256):
        print(f"vec env, n_envs={n}: {vec(n):,.0f} decisions/s")
    print(f"vec env, n_envs=64, k=32: {vec(64, k=32):,.0f} decisions/s")
    print(f"native step_many alone, n_envs=64: {native():,.0f} decisions/s")
    print(f"memory: {memory():.0f} KB per environment (vec env of 512, after reset)")


if __name__ == "__main__":
    main()
