"""Policies under queue setups and with a fairshare (issue 31): the engine's limits filter sits
between the waiting jobs and a Python policy exactly as before the native rules, so a policy
that decides as a native rule reproduces its schedule job for job; the view shows each waiting
job's routed queue and its priority, the jobs the limits hold and why, and the decayed fairshare
as the native order computes it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

import schedlab

from conftest import POLICIES, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"

# Short jobs in a capped queue, long ones cut to 4 h (and killed there), at most 4 running jobs
# and 60 processors per user: holds by job counts and by quota, and decisions the quota cuts.
QUEUES = """
queues:
  caps:
    routing: requested_time
    queues:
      - {name: short, max_walltime: 3600, max_running: 12}
      - {name: long, max_walltime: 14400}
    users:
      default: {max_running: 4, cpu_quota: 60}
  tiers:
    routing: requested_time
    queues:
      - {name: short, max_walltime: 3600, max_running: 12, priority: 10}
      - {name: long, max_walltime: 14400}
    users:
      default: {max_running: 4, cpu_quota: 60}
"""

MANIFEST = (
    """
name: limited
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 2500}
clusters:
  pool: {from_trace: true}
schedulers:
  easy: {policy: easy}
  fcfs: {policy: fcfs}
  py-easy: {policy: python, path: ../policies/easy.py, class: EASY}
  py-fcfs: {policy: python, path: ../policies/fcfs.py, class: FCFS}
  py-tiered: {policy: python, path: ../policies/tiered.py, class: Tiered}
  py-watch: {policy: python, path: ../policies/tiered.py, class: Watch}
"""
    + QUEUES
    + """
grid:
  axes:
    scheduler: [easy, fcfs, py-easy, py-fcfs, py-tiered, py-watch]
    queues: [caps, tiers]
"""
)

TIERED = '''
import json
import os

from schedlab import LIMITS, Policy

from backfill import easy


class Tiered(Policy):
    """EASY over the queue priority tiers, then submission order: what the native rules do
    with queues of different priorities."""

    def decide(self, view):
        w = view.waiting
        order = sorted(range(len(w)), key=lambda r: (-int(w.queue_priority[r]), r))
        return easy(view, order)


class Watch(Tiered):
    """Tiered, noting what the view shows of the limits in a file named by the environment."""

    def __init__(self):
        self.seen = {"held": 0, "limits": set(), "routed": set(), "calls": 0}

    def decide(self, view):
        h, w = view.held, view.waiting
        s = self.seen
        s["calls"] += 1
        s["held"] = max(s["held"], len(h))
        s["limits"].update(LIMITS[int(code)] for code in h.limit)
        s["routed"].update(int(q) for q in w.routed_queue)
        # No held job is waiting, and every held job is in the workload.
        assert not set(h.index.tolist()) & set(w.index.tolist())
        out = os.environ.get("SCHEDLAB_TEST_WATCH")
        if out:
            with open(out, "w") as f:
                json.dump({k: sorted(v) if isinstance(v, set) else v for k, v in s.items()}, f)
        return super().decide(view)


class StartsHeld(Policy):
    """EASY, until a job is held: then it starts the first held job (row len(waiting))."""

    def decide(self, view):
        if len(view.held):
            return [len(view.waiting)]
        return easy(view)
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "workloads").mkdir()
    shutil.copy(KTH, tmp_path / "workloads" / "kth.swf.gz")
    shutil.copytree(POLICIES, tmp_path / "policies")
    (tmp_path / "policies" / "tiered.py").write_text(TIERED)
    return tmp_path


def schedule(results, name):
    """Each cell's schedule (rows in submission order) by cell name (`scheduler.queues`)."""
    jobs = pq.read_table(results / name / "jobs.parquet").to_pandas()
    columns = ["job_id", "start", "end", "killed", "held_by", "sim_queue"]
    return {cell: g[columns].reset_index(drop=True) for cell, g in jobs.groupby("cell")}


def test_python_policies_under_limits_reproduce_the_native_rules_job_for_job(project, monkeypatch):
    watch = project / "watch.json"
    monkeypatch.setenv("SCHEDLAB_TEST_WATCH", str(watch))
    manifest = project / "experiments" / "limited.yaml"
    manifest.write_text(MANIFEST)
    results = project / "results"
    schedlab.run(manifest, results=results)
    by = schedule(results, "limited")
    caps = {s: by[f"{s}.caps"] for s in ("easy", "fcfs", "py-easy", "py-fcfs", "py-tiered")}
    tiers = {s: by[f"{s}.tiers"] for s in ("easy", "py-easy", "py-tiered", "py-watch")}
    # Jobs wider than a user's CPU quota never start: rejected at submission.
    assert 2_300 < len(caps["easy"]) < 2_500
    # The limits bite: jobs are held (by counts and by quotas) and long requests killed.
    assert caps["easy"]["killed"].any()
    assert {"user_max_running", "user_cpu_quota"} <= set(caps["easy"]["held_by"].dropna())
    # One tier: the policies decide as the native rules, job for job (held, killed, queue too).
    assert caps["py-easy"].equals(caps["easy"])
    assert caps["py-fcfs"].equals(caps["fcfs"])
    assert caps["py-tiered"].equals(caps["easy"])
    # Two tiers: the native rules serve the short queue first; a policy orders itself, and one
    # that orders by queue_priority reproduces them.
    assert tiers["py-tiered"].equals(tiers["easy"])
    assert tiers["py-watch"].equals(tiers["easy"])
    assert not tiers["py-easy"].equals(tiers["easy"])

    seen = json.loads(watch.read_text())
    assert seen["held"] > 0 and seen["routed"] == [0, 1]
    assert {"user_max_running", "user_cpu_quota"} <= set(seen["limits"]), seen


def test_starting_a_held_job_stops_the_run_naming_the_job_and_the_limit(project, capfd):
    manifest = project / "experiments" / "held.yaml"
    manifest.write_text(
        """
name: held
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 500}
clusters:
  pool: {from_trace: true}
schedulers:
  bad: {policy: python, path: ../policies/tiered.py, class: StartsHeld}
"""
        + QUEUES
        + """
grid:
  axes:
    queues: [caps]
"""
    )
    # The cell fails with the message (the run reports it and raises).
    with pytest.raises(schedlab.SimulationError):
        schedlab.run(manifest, results=project / "results")
    message = capfd.readouterr().err
    assert "made an impossible decision" in message, message
    assert "which the limits hold: user_" in message, message
    assert "row 0 of the held jobs" in message, message


def test_limit_codes_name_the_limits_in_check_order():
    assert schedlab.LIMITS[0] == "queue_max_running"
    assert schedlab.LIMITS[-1] == "group_cpu_quota"
    assert len(set(schedlab.LIMITS)) == 15


class Recorder(schedlab.Policy):
    """EASY, keeping each call's fairshare columns."""

    def __init__(self, order_by_factor: bool):
        self.calls = []
        self.order_by_factor = order_by_factor

    def decide(self, view):
        import backfill

        w = view.waiting
        self.calls.append(
            (view.now, w.user.copy(), w.fairshare_usage.copy(), w.fairshare_factor.copy())
        )
        if self.order_by_factor:
            return backfill.easy(view, backfill.by_score(view, -w.fairshare_factor))
        return backfill.easy(view)


def test_the_fairshare_in_the_view_is_the_native_orders(tmp_path):
    from conftest import swf

    # Without a fairshare the columns are NaN.
    trace = tmp_path / "t.swf"
    # 4 processors. User 1 runs 4 procs for 100 s from 0; users 1 and 2 then each submit a job
    # at 10, waiting until 100: user 2 has used nothing, user 1 400 core-seconds.
    trace.write_text(swf([(0, 100, 4, 100, 1), (10, 50, 4, 50, 1), (10, 50, 4, 50, 2)]))
    plain = Recorder(False)
    schedlab.simulate(trace, policy=plain)
    assert all(np.isnan(c[2]).all() and np.isnan(c[3]).all() for c in plain.calls)

    # order="fairshare" with a policy orders nothing: it puts the default fairshare in the view.
    fair = Recorder(True)
    result = schedlab.simulate(trace, policy=fair, order="fairshare")
    now, users, usage, factor = fair.calls[1]
    assert now == 100 and users.tolist() == [1, 2]
    # User 1 used 4 procs × 100 s (undecayed by default, priced at one per core-second); user 2
    # nothing: the factor 2^(-usage / (share × ΣU)) is 1/4 for user 1 (two users, share 1/2)
    # and 1 for user 2, who goes first.
    assert usage.tolist() == [400.0, 0.0]
    assert factor.tolist() == [0.25, 1.0]
    native = schedlab.simulate(trace, scheduler="easy", order="fairshare")
    assert result.jobs.column("start").equals(native.jobs.column("start"))
    assert result.jobs.column("start").to_pylist() == [0, 150, 100]


def test_a_policy_ordering_by_the_fairshare_factor_is_the_native_fairshare_order():
    from fairshare import Fairshare

    mine = schedlab.simulate(KTH, policy=Fairshare(), order="fairshare")
    native = schedlab.simulate(KTH, scheduler="easy", order="fairshare")
    assert mine.jobs.column("start").equals(native.jobs.column("start"))
    # And it differs from the undecayed usage order of the same policy without a fairshare.
    plain = schedlab.simulate(KTH, policy=Fairshare())
    assert not plain.jobs.column("start").equals(native.jobs.column("start"))


FAIRSHARE_MANIFEST = """
name: fair
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 4000}
clusters:
  pool: {from_trace: true}
schedulers:
  easy:
    policy: easy
    order: fairshare
    fairshare: {charging: continuous, decay: {half_life: 86400}}
  py-fair:
    policy: python
    path: ../policies/fairshare.py
    class: Fairshare
    fairshare: {charging: continuous, decay: {half_life: 86400}}
  py-usage: {policy: python, path: ../policies/fairshare.py, class: Fairshare}
grid:
  axes:
    scheduler: [easy, py-fair, py-usage]
"""


def test_fairshare_on_a_python_scheduler_is_the_native_fairshare_in_its_view(project):
    manifest = project / "experiments" / "fair.yaml"
    manifest.write_text(FAIRSHARE_MANIFEST)
    results = project / "results"
    schedlab.run(manifest, results=results)
    by = schedule(results, "fair")
    # The decayed factor in the view orders the jobs as the native order: job for job.
    assert by["py-fair"].equals(by["easy"])
    # Without `fairshare:` the policy falls back to undecayed usage: another schedule.
    assert not by["py-usage"].equals(by["easy"])
