"""schedlab.gym (issue 32): the Gymnasium contract, determinism, masks, errors, and the
heuristics as action functions reproducing the same policies run through the policy interface,
job for job, on the bundled KTH-SP2 log."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import schedlab
from schedlab.gym import HEURISTICS, SchedulingEnv, SchedulingVecEnv, bounded_slowdown

from committed import Committed
from conftest import WORKLOADS
from f1 import f1_score

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
SDSC = WORKLOADS / "SDSC-SP2-1998-4.2-cln.swf.gz"


def run_episode(env, choose, seed=None):
    """Steps ``env`` to the end of an episode with ``choose(env, obs)``; the rewards."""
    obs, _ = env.reset(seed=seed)
    rewards = []
    while True:
        obs, reward, done, truncated, _ = env.step(choose(env, obs))
        rewards.append(reward)
        if done:
            return rewards


def heuristic(name):
    fn = HEURISTICS[name]
    return lambda env, obs: fn(env.raw(), obs["mask"])


def test_the_defaults_work_in_one_line_and_pass_the_env_checker():
    env = SchedulingEnv(KTH)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert obs["jobs"].shape == (128, 8) and obs["jobs"].dtype == np.float32
    assert obs["mask"].sum() >= 1 and np.array_equal(info["action_mask"], obs["mask"])
    vec = SchedulingVecEnv(KTH, n_envs=8)
    obs, _ = vec.reset(seed=1)
    assert obs["jobs"].shape == (8, 128, 8) and obs["mask"].shape == (8, 128)
    assert isinstance(vec, gymnasium.vector.VectorEnv)


def test_same_seed_and_actions_give_the_same_episode_byte_for_byte():
    def trajectory(seed):
        env = SchedulingEnv(KTH, seed=seed, episode_jobs=200)
        rng = np.random.default_rng(7)
        obs, _ = env.reset(seed=seed)
        blocks = [obs["jobs"].tobytes() + obs["machine"].tobytes()]
        done = False
        while not done:
            valid = int(obs["mask"].sum())
            obs, reward, done, _, _ = env.step(int(rng.integers(valid)))
            blocks.append(obs["jobs"].tobytes() + obs["machine"].tobytes() + str(reward).encode())
        jobs = env.episode_jobs(finished=True)
        return blocks, {k: v.tobytes() for k, v in jobs.items()}

    assert trajectory(3) == trajectory(3)
    assert trajectory(3) != trajectory(4)


@pytest.mark.parametrize("trace", [KTH, SDSC])
@pytest.mark.parametrize(
    "backfill, native",
    [("easy", "easy"), ("none", "fcfs"), ("conservative", "conservative")],
)
def test_fcfs_actions_reproduce_the_native_schedulers(trace, backfill, native):
    """Conservative included: the environment keeps its reservations between calls and
    compresses them at every call, as the native rule does (docs/rl.md, "Action")."""
    env = SchedulingEnv(trace, backfill=backfill, episode_jobs=None, starts=0, k=4096)
    run_episode(env, heuristic("fcfs"))
    got = env.episode_jobs(finished=True)
    expected = schedlab.simulate(trace, scheduler=native).jobs
    assert len(got["start"]) == expected.num_rows > 20_000
    assert np.array_equal(got["start"], expected.column("start").to_numpy())
    if backfill != "none":
        assert env.status()["backfilled"] > 1000


SCORES = {
    "sjf": lambda v: v.waiting.requested_time,
    "wfp3": lambda v: -((v.waiting.wait / v.waiting.requested_time) ** 3.0 * v.waiting.procs),
    "unicep": lambda v: (
        -(v.waiting.wait / (np.log2(np.maximum(v.waiting.procs, 2)) * v.waiting.requested_time))
    ),
    "f1": lambda v: f1_score(v.waiting.requested_time, v.waiting.procs, v.waiting.submit),
    "fcfs": lambda v: v.waiting.index,
}


@pytest.mark.parametrize("name", ["sjf", "wfp3", "unicep", "f1"])
def test_heuristic_actions_reproduce_the_policy_through_the_policy_interface(name):
    k = 4096
    env = SchedulingEnv(KTH, backfill="easy", episode_jobs=None, starts=0, k=k)
    run_episode(env, heuristic(name))
    got = env.episode_jobs(finished=True)
    policy = schedlab.simulate(KTH, policy=Committed(SCORES[name], "easy", k=k)).jobs
    assert len(got["start"]) == policy.num_rows == 28_467
    assert np.array_equal(got["start"], policy.column("start").to_numpy())
    fcfs = schedlab.simulate(KTH, scheduler="easy").jobs.column("start").to_numpy()
    assert not np.array_equal(got["start"], fcfs), "the heuristic is FCFS in disguise"


def test_conservative_keeps_reservations_that_replanning_from_scratch_would_move():
    """Under SJF actions the environment's conservative backfilling keeps each job's
    reservation between calls; policies/committed.py, which replans every waiting job from
    scratch at each call (what the policy interface allows: it is not called where nothing can
    start), gives another schedule — so the two are told apart, and the kept reservations
    change the outcome."""
    k = 4096
    env = SchedulingEnv(KTH, backfill="conservative", episode_jobs=None, starts=0, k=k)
    run_episode(env, heuristic("sjf"))
    got = env.episode_jobs(finished=True)["start"]
    assert env.status()["backfilled"] > 0
    replanned = schedlab.simulate(KTH, policy=Committed(SCORES["sjf"], "conservative", k=k))
    assert len(got) == replanned.jobs.num_rows == 28_467
    assert not np.array_equal(got, replanned.jobs.column("start").to_numpy())


def test_the_mask_marks_the_waiting_jobs_and_a_masked_action_is_refused():
    env = SchedulingEnv(KTH, k=16, seed=5)
    obs, _ = env.reset(seed=5)
    for _ in range(300):
        valid = int(obs["mask"].sum())
        assert valid >= 1
        assert obs["mask"][:valid].all() and not obs["mask"][valid:].any()
        assert not obs["jobs"][valid:].any()
        raw = env.raw()
        assert (raw["requested_time"][:valid] > 0).all()
        if valid < 16:
            before = env.status()
            with pytest.raises(ValueError, match=f"action {valid} is masked"):
                env.step(valid)
            assert env.status() == before
        with pytest.raises(ValueError, match="is masked"):
            env.step(-1)
        assert all(env.action_space.sample() < valid for _ in range(5))
        obs, _, done, _, _ = env.step(valid - 1)
        if done:
            obs, _ = env.reset()


def test_bad_calls_and_parameters_get_clear_errors():
    env = SchedulingEnv(KTH, episode_jobs=10)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="job slot"):
        env.step("first")
    with pytest.raises(TypeError, match="job slot"):
        env.step(0.5)
    done = False
    while not done:
        _, _, done, _, _ = env.step(0)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)
    bad = [
        (dict(backfill="greedy"), "unknown backfilling"),
        (dict(reward="makespan"), "unknown reward"),
        (dict(features=["wait", "colour"]), "unknown feature"),
        (dict(k=0), "k must be at least 1"),
        (dict(episode_jobs=10**7), "only 28467 jobs"),
        (dict(episode_jobs=0), "episode_jobs must be a positive"),
        (dict(starts=[28_400], episode_jobs=256), "cannot start at job 28400"),
        (dict(reward="utilization", per_step=True), "end of an episode"),
    ]
    for kwargs, message in bad:
        with pytest.raises(schedlab.InputError, match=message):
            SchedulingEnv(KTH, **kwargs)
    with pytest.raises(ValueError, match="callable"):
        SchedulingEnv(KTH, reward=lambda jobs: 0.0, per_step=True)
    vec = SchedulingVecEnv(KTH, n_envs=2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="2 integers"):
        vec.step(np.array([0]))
    with pytest.raises(ValueError, match="environment 1: action 127 is masked"):
        vec.step(np.array([0, 127]))


def test_rewards_end_per_step_and_callable_agree():
    def episode(**kwargs):
        env = SchedulingEnv(KTH, episode_jobs=300, starts=[1000], **kwargs)
        rewards = run_episode(env, heuristic("sjf"))
        return env, rewards

    env, end = episode()
    assert all(r == 0.0 for r in end[:-1]) and end[-1] < -1.0
    jobs = env.episode_jobs(finished=True)
    assert len(jobs["start"]) == 300
    assert end[-1] == pytest.approx(-bounded_slowdown(jobs).mean())
    _, per_step = episode(per_step=True)
    assert sum(per_step) == pytest.approx(end[-1])
    _, custom = episode(reward=lambda jobs: -bounded_slowdown(jobs).mean())
    assert custom[-1] == pytest.approx(end[-1])
    _, wait = episode(reward="wait")
    assert wait[-1] == pytest.approx(-jobs["wait"].mean())
    _, util = episode(reward="utilization")
    assert 0.0 < util[-1] <= 1.0


def test_the_vec_env_steps_each_episode_as_the_single_env_does():
    n, seed = 4, 11
    vec = SchedulingVecEnv(KTH, n_envs=n, seed=seed, episode_jobs=64)
    obs, _ = vec.reset(seed=seed)
    singles = [SchedulingEnv(KTH, seed=seed + i, episode_jobs=64) for i in range(n)]
    single_obs = [s.reset(seed=seed + i)[0] for i, s in enumerate(singles)]
    ended = np.zeros(n, dtype=int)
    for _ in range(400):
        for i in range(n):
            assert np.array_equal(obs["jobs"][i], single_obs[i]["jobs"])
            assert np.array_equal(obs["mask"][i], single_obs[i]["mask"])
        actions = obs["mask"].sum(axis=1) - 1
        obs, rewards, terminated, truncated, _ = vec.step(actions)
        for i in range(n):
            o, r, done, _, _ = singles[i].step(int(actions[i]))
            assert r == rewards[i] and done == terminated[i]
            if done:
                ended[i] += 1
                o, _ = singles[i].reset()
            single_obs[i] = o
    assert ended.min() >= 1, "every environment went through an autoreset"


def test_the_example_learner_runs_short():
    import runpy

    from conftest import ROOT

    module = runpy.run_path(str(ROOT / "examples" / "es_linear.py"))
    result = module["main"](generations=2, population=4, train_episodes=2, quick=True)
    assert np.isfinite(result["learned"]) and np.isfinite(result["fcfs"])


def test_episodes_are_byte_identical_across_processes():
    """Nothing in an episode depends on the process (hash seeds, addresses)."""
    import subprocess
    import sys

    script = f"""
import hashlib, numpy as np
from schedlab.gym import SchedulingVecEnv
v = SchedulingVecEnv({str(KTH)!r}, n_envs=4, seed=9)
o, _ = v.reset(seed=9)
h = hashlib.sha256()
rng = np.random.default_rng(1)
for _ in range(1500):
    o, r, t, _, _ = v.step((rng.random(4) * o["mask"].sum(1)).astype(np.int64))
    h.update(o["jobs"].tobytes() + o["machine"].tobytes() + r.tobytes())
print(h.hexdigest())
"""
    digests = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(digests) == 1


GENERATED = {
    "synthetic": {
        "length": {"jobs": 1500},
        "users": [
            {
                "name": "user",
                "count": 6,
                "arrivals": {"lambda": 6.944e-5, "delta": 2.778e-4, "mu": 2.778e-3},
                "runtime": [[1, 0.0], [60, 0.2], [900, 0.5], [3600, 0.7], [14400, 1.0]],
                "estimate": {"factor": [1, 5], "max": 86400},
                "procs": {"log_uniform": [1, 32], "power_of_two": 0.75},
            }
        ],
    },
}


@pytest.mark.parametrize("backfill, native", [("easy", "easy"), ("none", "fcfs")])
def test_a_generated_workload_is_the_manifests_and_fcfs_actions_reproduce_the_native_schedules(
    backfill, native
):
    """The environment's generated workload is the one `schedlab.simulate(workload=)` (the
    manifest's generator) makes for the same seed and machine: FCFS actions over the whole of
    it give the native schedule, job for job."""
    env = SchedulingEnv(
        workload=GENERATED, procs=64, seed=5, backfill=backfill, episode_jobs=None, k=4096
    )
    run_episode(env, heuristic("fcfs"))
    got = env.episode_jobs(finished=True)
    expected = schedlab.simulate(workload=GENERATED, procs=64, seed=5, scheduler=native).jobs
    assert len(got["start"]) == expected.num_rows == 1500
    assert np.array_equal(got["submit"], expected.column("submit").to_numpy())
    assert np.array_equal(got["start"], expected.column("start").to_numpy())
    # Another seed is another workload.
    other = schedlab.simulate(workload=GENERATED, procs=64, seed=6, scheduler=native).jobs
    assert not np.array_equal(got["submit"], other.column("submit").to_numpy())


def test_generated_workload_episodes_are_seeded_and_checked():
    def trajectory(seed):
        vec = SchedulingVecEnv(workload=GENERATED, procs=64, n_envs=3, seed=seed, episode_jobs=50)
        obs, _ = vec.reset(seed=seed)
        blocks = []
        for _ in range(200):
            obs, rewards, _, _, _ = vec.step(np.zeros(3, dtype=np.int64))
            blocks.append(obs["jobs"].tobytes() + rewards.tobytes())
        return blocks

    assert trajectory(2) == trajectory(2)
    assert trajectory(2) != trajectory(3)
    check_env(SchedulingEnv(workload=GENERATED, procs=64), skip_render_check=True)

    with pytest.raises(schedlab.InputError, match="needs the machine size: give procs=N"):
        SchedulingEnv(workload=GENERATED)
    with pytest.raises(schedlab.InputError, match="a trace path or a generated workload"):
        SchedulingEnv(KTH, workload=GENERATED, procs=64)
    with pytest.raises(schedlab.InputError, match="a trace path or a generated workload"):
        SchedulingEnv()
    with pytest.raises(schedlab.InputError, match="synthetic"):
        SchedulingEnv(workload={"trace": "x.swf"}, procs=64)


def test_the_eet_reward_is_the_simulations_violated_fraction():
    """`reward="eet_violations"` over a whole trace under FCFS actions with EASY is minus the
    fraction of jobs that `schedlab.simulate`'s own EET columns (the metric's other path, over
    the engine's records) mark violated in the native EASY schedule."""
    env = SchedulingEnv(
        KTH, reward="eet_violations", backfill="easy", episode_jobs=None, starts=0, k=4096
    )
    rewards = run_episode(env, heuristic("fcfs"))
    assert all(r == 0.0 for r in rewards[:-1])
    native = schedlab.simulate(KTH, scheduler="easy").jobs
    violated = native.column("eet_violated").to_numpy(zero_copy_only=False)
    assert 0.05 < violated.mean() < 0.95
    assert rewards[-1] == pytest.approx(-violated.mean(), abs=1e-12)
    with pytest.raises(schedlab.InputError, match="end of an episode only"):
        SchedulingEnv(KTH, reward="eet_violations", per_step=True)


# --- On a topology (docs/rl.md, "On a topology") ---------------------------------------------

EXAMPLE1 = WORKLOADS / "aleang-example1"
E1_TRACE = EXAMPLE1 / "Example1-load_75%-urgent_10%-instance_0.swf.gz"
E1_MACHINES = EXAMPLE1 / "example1.swf.machines"
WAGAP = WORKLOADS / "wagap-2013.swf.gz"
WAGAP_MACHINES = WORKLOADS / "wagap-2013.swf.machines"
TOPOLOGIES = {
    "example1": (E1_TRACE, E1_MACHINES, "kb_per_node"),
    "wagap": (WAGAP, WAGAP_MACHINES, "bytes_per_node"),
}


@pytest.mark.parametrize("machine", sorted(TOPOLOGIES))
@pytest.mark.parametrize("backfill, native", [("easy", "easy"), ("none", "fcfs")])
def test_fcfs_actions_on_a_topology_reproduce_the_native_node_level_schedulers(
    machine, backfill, native
):
    """AleaNG's Example1 (GPUs, partitions, memory per node) and wagap-2013 (80- and 12-core
    nodes shared by jobs with memory): FCFS actions give the native node-level FCFS and EASY
    schedules, job for job."""
    trace, machines, memory = TOPOLOGIES[machine]
    env = SchedulingEnv(
        trace,
        machines=machines,
        memory=memory,
        backfill=backfill,
        episode_jobs=None,
        starts=0,
        k=4096,
    )
    run_episode(env, heuristic("fcfs"))
    got = env.episode_jobs(finished=True)
    expected = schedlab.simulate(trace, machines=machines, memory=memory, scheduler=native).jobs
    assert len(got["start"]) == expected.num_rows > 2000
    assert np.array_equal(got["start"], expected.column("start").to_numpy())
    assert np.array_equal(got["end"], expected.column("end").to_numpy())
    if backfill == "easy":
        assert env.status()["backfilled"] > 100


# Two clusters: "small", 2 nodes of 4 cores and 8 GB, partition cpu, no GPU; "gpu", one node
# of 4 cores, 16 GB and 2 GPUs, partition gpu (AleaNG columns: id name nodes CPUs speed GB_RAM
# properties GPUs).
SMALL_MACHINES = """0 small 2 4 1 8 cpu 0
1 gpu 1 4 1 16 gpu 2
"""
GB = 1048576  # KB


def _aleang_job(i, submit, procs, run, memory_kb, gpus, requires):
    return (
        f"{i} {submit} -1 {run} {procs} -1 -1 {procs} {run} {memory_kb} 1 1 1 -1 1 -1 -1 -1 "
        f"{gpus} -1 {requires}"
    )


def test_on_a_topology_the_mask_never_offers_an_unfittable_job_and_can_start_is_node_level(
    tmp_path,
):
    """Hand-worked: jobs that no node can ever run (3 GPUs on one node, an unknown partition,
    32 GB on one node) never reach a slot; after the first three jobs start, a 2-core job of
    partition cpu does not fit (both cpu nodes are full) although 3 cores are free on the
    machine, and a 2-core job of any partition does (on the GPU node)."""
    (tmp_path / "small.machines").write_text(SMALL_MACHINES)
    jobs = [
        _aleang_job(1, 0, 4, 100, GB, 0, "all:1x4"),  # a small node
        _aleang_job(2, 0, 1, 100, GB, 2, "gpu:1x1"),  # the GPU node, both GPUs
        _aleang_job(3, 0, 1, 100, GB, 3, "all:1x1"),  # 3 GPUs on a node: never
        _aleang_job(4, 0, 1, 100, GB, 0, "nosuch:1x1"),  # no such partition: never
        _aleang_job(5, 0, 1, 100, 32 * GB, 0, "all:1x1"),  # 32 GB on a node: never
        _aleang_job(6, 0, 4, 100, GB, 0, "cpu:1x4"),  # the other small node
        _aleang_job(7, 0, 2, 50, GB, 0, "cpu:1x2"),  # cpu nodes full: waits
        _aleang_job(8, 0, 2, 50, GB, 0, "all:1x2"),  # fits on the GPU node
    ]
    trace = tmp_path / "small.swf"
    trace.write_text("; MaxProcs: 12\n" + "\n".join(jobs) + "\n")
    env = SchedulingEnv(
        trace,
        machines=tmp_path / "small.machines",
        memory="kb_per_node",
        backfill="none",
        k=8,
        episode_jobs=None,
        starts=0,
        features=["procs", "gpus", "can_start"],
    )
    obs, _ = env.reset()
    assert obs["machine"].shape == (2 + 2 * 8 + 2,)
    indices = list(env.raw()["index"][: int(obs["mask"].sum())])
    assert indices == [0, 1, 5, 6, 7]  # trace indices: jobs 3, 4 and 5 are never offered
    assert list(obs["jobs"][:5, 2]) == [1, 1, 1, 1, 1]
    assert list(obs["machine"][-2:]) == [1.0, 1.0]  # all memory and GPUs free
    for _ in range(3):
        obs, *_ = env.step(0)  # FCFS: jobs 1, 2 and 6 start at 0
    assert env.status()["now"] == 0
    assert list(env.raw()["index"][: int(obs["mask"].sum())]) == [6, 7]
    assert list(obs["jobs"][:2, 2]) == [0, 1]  # job 7 does not fit on the nodes, job 8 does
    assert obs["machine"][0] == pytest.approx(3 / 12)  # 3 cores free in all
    assert obs["machine"][-2] == pytest.approx((32 - 3) / 32)  # 3 GB of 32 used
    assert obs["machine"][-1] == 0.0  # both GPUs taken
    obs, _, done, _, _ = env.step(1)  # job 8 starts now on the GPU node
    assert not done and env.status()["now"] == 0
    assert list(env.raw()["index"][: int(obs["mask"].sum())]) == [6]
    while not done:
        obs, _, done, _, _ = env.step(0)
    jobs = env.episode_jobs(finished=True)
    assert dict(zip(jobs["index"], jobs["start"])) == {0: 0, 1: 0, 5: 0, 6: 100, 7: 0}


def test_on_a_topology_a_chosen_job_starts_now_exactly_when_can_start_says_so():
    """Random actions on Example1: every chosen job with can_start 1 starts at the decision's
    instant, every one with can_start 0 later (it is committed to), and the same seed and
    actions give the same episode, byte for byte."""

    def episode(seed):
        env = SchedulingEnv(
            E1_TRACE, machines=E1_MACHINES, memory="kb_per_node", k=16, episode_jobs=400
        )
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        can = env.features.index("can_start")
        chosen, blocks, done = [], [], False
        while not done:
            valid = int(obs["mask"].sum())
            a = int(rng.integers(valid))
            chosen.append((int(env.raw()["index"][a]), env.status()["now"], obs["jobs"][a, can]))
            obs, reward, done, _, _ = env.step(a)
            blocks.append(obs["jobs"].tobytes() + obs["machine"].tobytes() + str(reward).encode())
        jobs = env.episode_jobs(finished=True)
        return chosen, blocks, dict(zip(jobs["index"], jobs["start"]))

    chosen, blocks, starts = episode(4)
    fits = [starts[i] == now for i, now, can in chosen if can == 1]
    blocked = [starts[i] > now for i, now, can in chosen if can == 0]
    assert len(fits) > 50 and all(fits)
    assert len(blocked) > 5 and all(blocked)
    assert episode(4)[1] == blocks
    assert episode(5)[1] != blocks


def test_topology_parameters_get_clear_errors():
    with pytest.raises(schedlab.InputError, match="not available on a topology"):
        SchedulingEnv(E1_TRACE, machines=E1_MACHINES, backfill="conservative")
    with pytest.raises(schedlab.InputError, match="leave out procs"):
        SchedulingEnv(E1_TRACE, machines=E1_MACHINES, procs=64)
    with pytest.raises(schedlab.InputError, match="machine file"):
        SchedulingEnv(E1_TRACE, machines=E1_TRACE)
    check_env(
        SchedulingEnv(E1_TRACE, machines=E1_MACHINES, memory="kb_per_node"),
        skip_render_check=True,
    )
    vec = SchedulingVecEnv(E1_TRACE, machines=E1_MACHINES, memory="kb_per_node", n_envs=3)
    obs, _ = vec.reset(seed=0)
    assert obs["machine"].shape == (3, 2 + 2 * 8 + 2) and obs["jobs"].shape == (3, 128, 8)
    # Example1's nodes have GPUs and memory: at an episode's first decision some are free.
    assert (obs["machine"][:, -2:] > 0).all() and (obs["machine"][:, -2:] <= 1).all()
