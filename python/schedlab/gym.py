"""Gymnasium environments over schedlab's engine (docs/rl.md).

- ``SchedulingEnv("trace.swf.gz")``: one environment. At each decision the agent picks one of
  the first ``k`` waiting jobs; the job starts, or — when it does not fit — the environment
  commits to it and backfills around it (``backfill``: none, easy, conservative) until it
  starts. The observation is a dict: ``jobs`` (k × F float32 features), ``machine`` (free
  units, queue overflow, the running jobs' remaining requested times and sizes) and ``mask``
  (1 for a valid job slot). An action whose mask entry is 0 raises ``ValueError``.
- ``SchedulingVecEnv("trace.swf.gz", n_envs=8)``: n episodes stepped in Rust per call, the
  observations as (n_envs, k, F), (n_envs, M) and (n_envs, k) arrays; an episode that ends is
  replaced at once by the next (the returned observation is the new episode's first).
- ``HEURISTICS``: FCFS, SJF, WFP3, UNICEP and F1 as action functions of ``env.raw()``.

Episodes are ``episode_jobs`` consecutive jobs of the trace from random starts (seeded) or the
given ``starts``; the reward is the negative mean bounded slowdown by default (``reward``:
``"bounded_slowdown"``, ``"wait"``, ``"utilization"``, ``"eet_violations"`` or a callable over
the episode's jobs table), at the end of the episode or, with ``per_step=True``, as it accrues
(bounded slowdown and wait only). Instead of a trace,
``workload=`` takes a generated workload (a manifest's ``workloads.<name>`` mapping with
``synthetic:``, as ``schedlab.simulate(workload=)``), generated once for ``seed`` on ``procs``
processors. ``machines=`` (an Alea/AleaNG machine file) runs the episodes on that topology:
node-level fit (cores, memory, GPUs, properties), node-level EASY, free memory and GPU
fractions among the machine features (docs/rl.md, "On a topology").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Callable, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from . import _schedlab

PathLike = Union[str, "os.PathLike[str]"]

#: Columns of ``raw()``: the first k waiting jobs as the trace has them (int64).
RAW_COLUMNS = ("index", "submit", "wait", "requested_time", "procs", "user")
#: Columns of an episode's jobs table (what a reward callable receives, as numpy arrays).
JOB_COLUMNS = ("index", "submit", "start", "end", "requested_time", "procs")

Reward = Union[str, Callable[[dict], float]]


def _native(trace, workload, n_envs, seed, reward, kwargs) -> tuple[Any, Callable | None]:
    if callable(reward):
        name, fn = "none", reward
    elif isinstance(reward, str):
        name, fn = reward, None
    else:
        raise TypeError(
            f"reward must be a name (bounded_slowdown, wait, utilization, eet_violations) "
            f"or a callable, "
            f"not {type(reward).__name__}"
        )
    if fn is not None and kwargs.get("per_step"):
        raise ValueError("a reward callable is given at the end of an episode (per_step=False)")
    starts = kwargs.pop("starts", None)
    if isinstance(starts, (int, np.integer)):
        starts = [int(starts)]
    elif starts is not None:
        starts = [int(s) for s in starts]
    if kwargs.get("machines") is not None:
        kwargs["machines"] = os.fspath(kwargs["machines"])
    if kwargs.get("features") is not None:
        kwargs["features"] = list(kwargs["features"])
    native = _schedlab.GymEnvs(
        None if trace is None else os.fspath(trace),
        workload=None if workload is None else json.dumps(workload),
        n_envs=n_envs,
        seed=seed,
        reward=name,
        starts=starts,
        **kwargs,
    )
    return native, fn


def _jobs_table(block: bytes) -> dict[str, np.ndarray]:
    rows = np.frombuffer(block, dtype=np.int64).reshape(-1, len(JOB_COLUMNS))
    table = {name: rows[:, k] for k, name in enumerate(JOB_COLUMNS)}
    table["wait"] = table["start"] - table["submit"]
    table["run"] = table["end"] - table["start"]
    return table


def bounded_slowdown(jobs: dict[str, np.ndarray], tau: int = 10) -> np.ndarray:
    """Each job's bounded slowdown: max((wait + run) / max(run, tau), 1)."""
    run = jobs["run"].astype(np.float64)
    return np.maximum((jobs["wait"] + run) / np.maximum(run, tau), 1.0)


class JobSlots(spaces.Discrete):
    """The k job slots. ``sample()`` without a mask draws among the slots valid now (the
    environment keeps ``mask`` current), so a random agent never picks a masked slot."""

    def __init__(self, k: int, seed=None):
        super().__init__(k, seed=seed)
        self.mask: np.ndarray | None = None

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self.mask is not None and self.mask.any():
            mask = self.mask
        return super().sample(mask=mask, probability=probability)


def _spaces(native) -> tuple[spaces.Dict, spaces.Discrete]:
    k, f, m = native.k, native.n_features, native.n_machine
    observation = spaces.Dict(
        {
            "jobs": spaces.Box(-np.inf, np.inf, shape=(k, f), dtype=np.float32),
            "machine": spaces.Box(-np.inf, np.inf, shape=(m,), dtype=np.float32),
            "mask": spaces.MultiBinary(k),
        }
    )
    return observation, JobSlots(k)


class SchedulingEnv(gym.Env):
    """One scheduling environment over the SWF trace at ``trace``, or the generated ``workload``
    (docs/rl.md).

    Parameters (all but ``trace`` or ``workload`` optional): ``procs`` (machine size; the
    trace's MaxProcs; required with ``workload``),
    ``k`` (job slots, 128), ``features`` (names, default ``wait``, ``requested_time``,
    ``procs``, ``memory``, ``gpus``, ``user_share``, ``queue``, ``can_start``),
    ``running_slots`` (8), ``backfill`` (``"easy"``), ``episode_jobs`` (256; ``None``: the
    whole trace), ``starts`` (``None``: random; an index or a list of indices), ``reward``,
    ``per_step``, ``tau`` (10 s), ``time_scale`` (86400 s), ``seed``; ``machines`` (an
    Alea/AleaNG machine file: a topology instead of a pool; backfill none or easy) and
    ``memory`` (how to read the trace's memory field, as ``schedlab.simulate``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        trace: PathLike | None = None,
        *,
        workload: Mapping[str, Any] | None = None,
        reward: Reward = "bounded_slowdown",
        seed: int = 0,
        **kwargs: Any,
    ):
        self._native, self._reward_fn = _native(trace, workload, 1, seed, reward, kwargs)
        self.observation_space, self.action_space = _spaces(self._native)
        self.k = self._native.k
        self.features = tuple(self._native.features)
        self._shape = (self.k, self._native.n_features)
        self._started = False

    def _obs(self, jobs, machine, mask) -> dict[str, np.ndarray]:
        return {
            "jobs": np.frombuffer(jobs, dtype=np.float32).reshape(self._shape),
            "machine": np.frombuffer(machine, dtype=np.float32),
            "mask": np.frombuffer(mask, dtype=np.int8),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._started = True
        obs = self._obs(*self._native.reset(seed))
        self._mask = self.action_space.mask = obs["mask"]
        return obs, {"action_mask": obs["mask"]}

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise TypeError(
                f"an action is a job slot (an integer 0 to {self.k - 1}), not {action!r}"
            ) from None
        if a != action and not isinstance(action, (np.integer, np.ndarray)):
            raise TypeError(f"an action is a job slot (an integer), not {action!r}")
        jobs, machine, mask, reward, done = self._native.step_one(a)
        obs = self._obs(jobs, machine, mask)
        self._mask = self.action_space.mask = obs["mask"]
        if done and self._reward_fn is not None:
            reward = float(self._reward_fn(self.episode_jobs(finished=True)))
        return obs, reward, done, False, {"action_mask": obs["mask"]}

    def action_masks(self) -> np.ndarray:
        """The mask of the current decision (for maskable learners)."""
        return self._mask.astype(bool)

    def raw(self) -> dict[str, np.ndarray]:
        """The first k waiting jobs' raw values (int64 columns of ``RAW_COLUMNS``, k each;
        zeros past the waiting jobs): what exact heuristics score."""
        block = np.frombuffer(self._native.raw(0), dtype=np.int64).reshape(len(RAW_COLUMNS), -1)
        return {name: block[k] for k, name in enumerate(RAW_COLUMNS)}

    def episode_jobs(self, finished: bool = False) -> dict[str, np.ndarray]:
        """The episode's jobs started so far (or, after its end, all of them), in submission
        order: numpy columns ``JOB_COLUMNS`` plus ``wait`` and ``run``."""
        return _jobs_table(self._native.jobs(0, finished))

    def status(self) -> dict[str, int]:
        """The decision's time, decisions taken, jobs backfilled, the episode's first job."""
        now, decisions, backfilled, first = self._native.status(0)
        return {"now": now, "decisions": decisions, "backfilled": backfilled, "first": first}


class SchedulingVecEnv(VectorEnv):
    """``n_envs`` scheduling environments stepped together in Rust (same parameters as
    :class:`SchedulingEnv`; environment i is seeded with seed + i). Observations are dicts of
    (n_envs, …) arrays; an episode that ends is replaced at once by the environment's next
    (``autoreset_mode`` SAME_STEP: the returned observation is the new episode's first, the
    reward and ``terminations`` are the ended one's)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        trace: PathLike | None = None,
        n_envs: int = 8,
        *,
        workload: Mapping[str, Any] | None = None,
        reward: Reward = "bounded_slowdown",
        seed: int = 0,
        **kwargs: Any,
    ):
        self._native, self._reward_fn = _native(trace, workload, n_envs, seed, reward, kwargs)
        self.num_envs = n_envs
        self.single_observation_space, self.single_action_space = _spaces(self._native)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, n_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, n_envs)
        self.k = self._native.k
        self._shape = (n_envs, self.k, self._native.n_features)
        self._started = False

    def _obs(self, jobs, machine, mask) -> dict[str, np.ndarray]:
        return {
            "jobs": np.frombuffer(jobs, dtype=np.float32).reshape(self._shape),
            "machine": np.frombuffer(machine, dtype=np.float32).reshape(self.num_envs, -1),
            "mask": np.frombuffer(mask, dtype=np.int8).reshape(self.num_envs, self.k),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._started = True
        return self._obs(*self._native.reset(seed)), {}

    def step(self, actions):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be {self.num_envs} integers (one job slot per environment), "
                f"got an array of {a.dtype} with shape {a.shape}"
            )
        jobs, machine, mask, rewards, done = self._native.step_many(
            a.astype(np.int64, copy=False).tobytes()
        )
        rewards = np.frombuffer(rewards, dtype=np.float64)
        terminated = np.frombuffer(done, dtype=np.uint8).astype(bool)
        if self._reward_fn is not None and terminated.any():
            rewards = rewards.copy()
            for i in np.flatnonzero(terminated):
                rewards[i] = float(self._reward_fn(_jobs_table(self._native.jobs(int(i), True))))
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._obs(jobs, machine, mask), rewards, terminated, truncated, {}

    def raw(self, i: int = 0) -> dict[str, np.ndarray]:
        """Environment ``i``'s first k waiting jobs, raw (see :meth:`SchedulingEnv.raw`)."""
        block = np.frombuffer(self._native.raw(i), dtype=np.int64).reshape(len(RAW_COLUMNS), -1)
        return {name: block[k] for k, name in enumerate(RAW_COLUMNS)}

    def finished_jobs(self, i: int) -> dict[str, np.ndarray]:
        """The jobs of environment ``i``'s last finished episode."""
        return _jobs_table(self._native.jobs(i, True))


# Heuristics as action functions: each takes ``raw`` (SchedulingEnv.raw()) and ``mask`` and
# returns the slot of the job the heuristic starts first (the lowest slot on a tie, i.e.
# submission order). Scores are those of policies/*.py, smallest first.


def _valid(raw, mask) -> dict[str, np.ndarray]:
    n = int(np.count_nonzero(mask))
    return {name: column[:n] for name, column in raw.items()}


def fcfs(raw, mask) -> int:
    """The first waiting job."""
    return 0


def sjf(raw, mask) -> int:
    """The shortest requested time."""
    return int(np.argmin(_valid(raw, mask)["requested_time"]))


def wfp3(raw, mask) -> int:
    """The highest (wait / requested time)³ × processors."""
    w = _valid(raw, mask)
    score = (w["wait"] / w["requested_time"]) ** 3.0 * w["procs"]
    return int(np.argmin(-np.asarray(score, dtype=np.float64)))


def unicep(raw, mask) -> int:
    """The highest wait / (log₂(processors) × requested time)."""
    w = _valid(raw, mask)
    score = w["wait"] / (np.log2(np.maximum(w["procs"], 2)) * w["requested_time"])
    return int(np.argmin(-score))


def f1(raw, mask) -> int:
    """F1 (Carastan-Santos & de Camargo, 2017) as RLScheduler computes it: the lowest
    log10(requested time) × processors + 870 × log10(submit)."""
    w = _valid(raw, mask)
    return int(np.argmin(f1_score(w["requested_time"], w["procs"], w["submit"])))


def f1_score(requested_time, procs, submit) -> np.ndarray:
    r = np.where(requested_time > 0, requested_time, 0.1)
    s = np.where(submit > 0, submit, 0.1)
    return np.log10(r) * procs + 870.0 * np.log10(s)


#: The literature's baselines as action functions ``f(raw, mask) -> slot``.
HEURISTICS: dict[str, Callable[[dict, np.ndarray], int]] = {
    "fcfs": fcfs,
    "sjf": sjf,
    "wfp3": wfp3,
    "unicep": unicep,
    "f1": f1,
}

__all__ = [
    "HEURISTICS",
    "JOB_COLUMNS",
    "RAW_COLUMNS",
    "SchedulingEnv",
    "SchedulingVecEnv",
    "bounded_slowdown",
    "f1_score",
]
