"""Steps per second of RLScheduler's own environment (DIR-LAB/deep-batch-scheduler,
HPCSimPickJobs.HPCEnv), driven as scripts/bench-gym.py drives schedlab.gym: random valid
actions from a Python loop, one core (BENCHMARKS.md, "Reinforcement-learning environment").

    taskset -c 0 python scripts/peers/rlscheduler_env.py CHECKOUT TRACE.swf [--backfil]

CHECKOUT holds the repository's HPCSimPickJobs.py, job.py and cluster.py; TRACE is an
uncompressed SWF file (its reader takes plain text). The module imports TensorFlow 1 and the
old ``gym`` at the top for its training helpers, which the environment does not use: both are
stubbed here (``gym.spaces`` from gymnasium, ``seeding.np_random`` as the old RandomState), so
that the environment's own code runs unchanged.
"""

from __future__ import annotations

import sys
import time
import types

import gymnasium
import numpy as np


def stub_imports():
    tf = types.ModuleType("tensorflow")
    sys.modules["tensorflow"] = tf
    scipy = types.ModuleType("scipy")
    scipy.signal = types.ModuleType("scipy.signal")
    sys.modules.setdefault("scipy", scipy)
    sys.modules.setdefault("scipy.signal", scipy.signal)
    gym = types.ModuleType("gym")
    gym.Env = object
    gym.spaces = gymnasium.spaces
    utils = types.ModuleType("gym.utils")
    seeding = types.ModuleType("gym.utils.seeding")
    seeding.np_random = lambda seed=None: (np.random.RandomState(seed), seed)
    utils.seeding = seeding
    gym.utils = utils
    sys.modules.update(
        {
            "gym": gym,
            "gym.spaces": gymnasium.spaces,
            "gym.utils": utils,
            "gym.utils.seeding": seeding,
        }
    )


def main():
    checkout, trace = sys.argv[1], sys.argv[2]
    backfil = "--backfil" in sys.argv
    stub_imports()
    sys.path.insert(0, checkout)
    from HPCSimPickJobs import HPCEnv

    env = HPCEnv(backfil=backfil)
    env.my_init(workload_file=trace)
    env.seed(0)
    rng = np.random.default_rng(0)
    steps = episodes = failed = 0
    reset_seconds = 0.0

    def reset():
        # Some sequences trip an assertion of its code (a job that cannot be allocated with no
        # job running); they are drawn again, their time counted.
        nonlocal failed
        while True:
            try:
                env.reset()
                return
            except AssertionError:
                failed += 1

    t = time.perf_counter()
    reset()
    reset_seconds += time.perf_counter() - t
    began = time.perf_counter()
    while time.perf_counter() - began < 10.0:
        valid = len(env.visible_jobs)
        try:
            _, _, done, *_ = env.step(int(rng.integers(valid)))
        except AssertionError:
            failed += 1
            done = True
        steps += 1
        if done:
            episodes += 1
            t = time.perf_counter()
            reset()
            reset_seconds += time.perf_counter() - t
    seconds = time.perf_counter() - began
    print(
        f"RLScheduler HPCEnv (backfil={backfil}): {steps / seconds:,.0f} steps/s including "
        f"resets, {steps / (seconds - reset_seconds):,.0f} steps/s without them "
        f"({steps} steps, {episodes} episodes, {reset_seconds:.1f} s in reset, {failed} "
        "episodes that failed an assertion of its code)"
    )


if __name__ == "__main__":
    main()
