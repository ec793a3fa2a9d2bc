"""When the engine asks a policy, and what the view holds then: a call only where a waiting job
fits in the free units, and nothing lost at the instants skipped (docs/policies.md, "What the
engine guarantees")."""

from __future__ import annotations

import numpy as np
import pytest

import schedlab

from conftest import WORKLOADS
from easy import EASY


class Watched(EASY):
    """The example EASY, keeping what every call saw."""

    def __init__(self):
        self.calls = []

    def decide(self, view):
        w = view.waiting
        self.calls.append((view.now, view.free, w.units.copy(), w.user.copy(), w.user_usage.copy()))
        return super().decide(view)


def test_every_call_can_start_a_job_and_usage_counts_every_ended_job():
    path = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
    policy = Watched()
    result = schedlab.simulate(path, policy=policy)
    assert result.policy_calls == len(policy.calls) > 10_000
    # Each call had a waiting job that fits in the free units.
    assert all((units <= free).any() for _, free, units, _, _ in policy.calls)
    # user_usage, recomputed from the schedule: every job of the user started before now, for
    # its processors, up to its end or now — whether or not it ended at an instant the policy
    # was asked.
    jobs = result.jobs
    user = jobs.column("user").to_numpy()
    start, end = jobs.column("start").to_numpy(), jobs.column("end").to_numpy()
    procs = jobs.column("procs").to_numpy()
    for now, _, _, users, usage in policy.calls[::97]:
        for u, got in zip(users, usage):
            mine = (user == u) & (start < now)
            used = (np.minimum(end[mine], now) - start[mine]) * procs[mine]
            assert got == pytest.approx(float(used.sum()), rel=1e-12, abs=1e-6)


def test_the_tables_columns(write_trace):
    seen = {}

    class Look(schedlab.Policy):
        def decide(self, view):
            w, r = view.waiting, view.running
            # Helpers take rows as ints or numpy integers, `started` as a list, tuple or array.
            assert view.shadow(np.int64(1), np.array([0])) == view.shadow(1, [0])
            assert view.shadow(1, (0,)) == view.shadow(1, [0])
            seen.update(
                names=set(dir(w)),
                waiting=w.as_dict(),
                running=r.as_dict(),
                n=(len(w), len(r)),
            )
            with pytest.raises(AttributeError, match="runtime"):
                w.runtime  # noqa: B018 (the actual runtime is never in the view)
            return list(range(len(w)))

    schedlab.simulate(write_trace([(0, 100, 3, 120, 7), (0, 50, 1, 60, 8)]), policy=Look())
    assert {"units", "user_usage", "requested_time"} <= seen["names"]
    assert seen["n"] == (2, 0)
    w = seen["waiting"]
    assert w["procs"].tolist() == [3, 1] and w["requested_time"].tolist() == [120, 60]
    assert w["user"].tolist() == [7, 8] and w["user_usage"].dtype == np.float64
    assert all(len(c) == 0 for c in seen["running"].values())
