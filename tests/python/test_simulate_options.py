"""A manifest's sections as keywords of ``schedlab.simulate`` (issue 31): ``queues=``,
``reservations=`` and ``fairshare=`` take the mapping a manifest takes there and give the
schedule of the manifest's cell with that section — for a built-in scheduler and for a Python
policy — checked job for job against ``schedlab.run`` and on small traces worked by hand; bad
mappings raise ``InputError`` naming the keyword and the key path."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import schedlab

from conftest import POLICIES, WORKLOADS
from easy import EASY
from fairshare import Fairshare

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
COLUMNS = ["job_id", "start", "end", "killed", "held_by", "held_seconds", "sim_queue"]


def starts(result):
    return result.jobs.column("start").to_pylist()


# EASY on the availability profile, which respects advance reservations (docs/policies.md,
# "Helpers"); the shipped EASY does not look at them.
PLANNED = """
import schedlab


class PlannedEASY(schedlab.Policy):
    def decide(self, view):
        plan, starts, rows = view.plan(), [], iter(range(len(view.waiting)))
        for row in rows:
            if not plan.fits_now(row):
                w = view.waiting
                plan.reserve(row, plan.earliest_start(w.units[row], w.requested_time[row]))
                break
            plan.start(row)
            starts.append(row)
        for row in rows:
            if plan.fits_now(row):
                plan.start(row)
                starts.append(row)
        return starts
"""
_planned: dict = {}
exec(compile(PLANNED, "planned.py", "exec"), _planned)
PlannedEASY = _planned["PlannedEASY"]


def manifest_jobs(tmp_path, trace, procs, sections, schedulers=("easy", "py-easy"), seed=0):
    """Each cell's jobs (``COLUMNS``, submission order) of a manifest on ``trace`` with the
    given top-level ``sections`` (a dict: ``queues``, ``reservations``) and ``schedulers``,
    by scheduler name."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "planned.py").write_text(PLANNED)
    all_schedulers = {
        "easy": {"policy": "easy"},
        "py-easy": {"policy": "python", "path": str(POLICIES / "easy.py"), "class": "EASY"},
        "py-planned": {
            "policy": "python",
            "path": str(tmp_path / "planned.py"),
            "class": "PlannedEASY",
        },
    }
    manifest = {
        "name": "options",
        "seed": seed,
        "workloads": {"w": {"trace": str(trace)}},
        "clusters": {"pool": {"procs": procs}},
        "schedulers": {s: all_schedulers[s] for s in schedulers},
        **sections,
    }
    path = tmp_path / "options.yaml"
    path.write_text(json.dumps(manifest))  # JSON is YAML
    results = tmp_path / "results"
    schedlab.run(path, results=results)
    jobs = pq.read_table(results / "options" / "jobs.parquet")
    by = {}
    for cell in set(jobs.column("cell").to_pylist()):
        rows = jobs.filter(jobs.column("cell").to_numpy(zero_copy_only=False) == cell)
        # A cell's id names the scheduler when the grid has several (`easy`, `py-easy`).
        name = schedulers[0] if len(schedulers) == 1 else cell.split(".")[0]
        by[name] = rows.select(COLUMNS).to_pylist()
    return by


def rows(result):
    return result.jobs.select(COLUMNS).to_pylist()


# One user may run one job at a time: a hand-worked case.
#   job 1: user 1, submit 0, 100 s on 1 processor -> starts at 0
#   job 2: user 1, submit 0, 100 s on 1 processor -> held by user_max_running until job 1
#          ends: starts at 100 (without the limit, at 0: 3 of 4 processors are free)
#   job 3: user 2, submit 10, 50 s on 1 processor -> starts at 10
ONE_RUNNING = {
    "queues": [{"name": "batch", "swf_queue": [1]}],
    "users": {"default": {"max_running": 1}},
}
ONE_RUNNING_JOBS = [(0, 100, 1, 100, 1), (0, 100, 1, 100, 1), (10, 50, 1, 50, 2)]


def test_a_user_limit_holds_a_job_as_worked_by_hand(write_trace):
    trace = write_trace(ONE_RUNNING_JOBS)
    free = schedlab.simulate(trace, scheduler="easy")
    assert starts(free) == [0, 0, 10]
    for run in (
        lambda: schedlab.simulate(trace, scheduler="easy", queues=ONE_RUNNING),
        lambda: schedlab.simulate(trace, policy=EASY(), queues=ONE_RUNNING),
    ):
        result = run()
        assert starts(result) == [0, 100, 10]
        jobs = result.jobs.to_pydict()
        assert jobs["held_by"] == [None, "user_max_running", None]
        assert jobs["held_seconds"] == [0, 100, 0]
        assert jobs["sim_queue"] == ["batch", "batch", "batch"]
    assert result.policy_calls > 0


def test_queues_give_the_manifest_cells_schedule(tmp_path, write_trace):
    trace = write_trace(ONE_RUNNING_JOBS)
    cells = manifest_jobs(tmp_path / "hand", trace, 4, {"queues": {"one": ONE_RUNNING}})
    assert cells["easy"] == rows(schedlab.simulate(trace, scheduler="easy", queues=ONE_RUNNING))
    assert cells["py-easy"] == rows(schedlab.simulate(trace, policy=EASY(), queues=ONE_RUNNING))
    assert [r["start"] for r in cells["easy"]] == [0, 100, 10]

    # A real trace under caps, walltime cuts and quotas (the limits bite: jobs held, killed).
    caps = {
        "routing": "requested_time",
        "queues": [
            {"name": "short", "max_walltime": 3600, "max_running": 12},
            {"name": "long", "max_walltime": 14400},
        ],
        "users": {"default": {"max_running": 4, "cpu_quota": 60}},
    }
    cells = manifest_jobs(tmp_path / "kth", KTH, 100, {"queues": {"caps": caps}}, ("easy",))
    mine = schedlab.simulate(KTH, scheduler="easy", queues=caps)
    assert rows(mine) == cells["easy"]
    assert any(r["killed"] for r in cells["easy"])
    assert {r["held_by"] for r in cells["easy"]} >= {"user_max_running", "user_cpu_quota"}
    # Jobs wider than a user's quota are refused at submission, as the manifest counts them.
    assert mine.report["skipped_by_reason"]["rejected_over_cpu_quota"] > 0


# A reservation of the whole 4-processor pool over [50, 150), asked at 0: a hand-worked case.
#   job 1: submit 10, requests 100 s on 2 processors: cannot end before 50 -> starts at 150
#   job 2: submit 10, requests 30 s on 2 processors: ends by 40 -> starts at 10 (backfilled)
WHOLE_POOL = {"requests": [{"id": 1, "created": 0, "start": 50, "duration": 100, "procs": 4}]}
WHOLE_POOL_JOBS = [(10, 100, 2, 100), (10, 30, 2, 30)]


def test_a_reservation_holds_the_machine_as_worked_by_hand(write_trace):
    trace = write_trace(WHOLE_POOL_JOBS)
    assert starts(schedlab.simulate(trace, scheduler="easy")) == [10, 10]
    assert schedlab.simulate(trace, scheduler="easy").reservations is None
    for run in (
        lambda: schedlab.simulate(trace, scheduler="easy", reservations=WHOLE_POOL),
        lambda: schedlab.simulate(trace, policy=PlannedEASY(), reservations=WHOLE_POOL),
    ):
        result = run()
        assert starts(result) == [150, 10]
        booked = result.reservations.to_pylist()
        assert booked == [
            {
                "id": 1,
                "owner": "owner",
                "created": 0,
                "requested_start": 50,
                "duration": 100,
                "width": 4,
                "outcome": "granted",
                "reason": None,
                "start": 50,
                "end": 150,
                "shift": 0,
            }
        ]
        assert result.report["reservations_granted"] == 1


def test_reservations_give_the_manifest_cells_schedule(tmp_path, write_trace):
    trace = write_trace(WHOLE_POOL_JOBS)
    cells = manifest_jobs(
        tmp_path / "hand",
        trace,
        4,
        {"reservations": {"r": WHOLE_POOL}},
        ("easy", "py-planned"),
    )
    assert cells["easy"] == rows(
        schedlab.simulate(trace, scheduler="easy", reservations=WHOLE_POOL)
    )
    assert cells["py-planned"] == rows(
        schedlab.simulate(trace, policy=PlannedEASY(), reservations=WHOLE_POOL)
    )
    assert [r["start"] for r in cells["py-planned"]] == [150, 10]
    # Generated requests are drawn from the seed as a manifest cell draws them.
    generated = {
        "generate": {
            "per_week": 10,
            "procs": {"uniform": [10, 60]},
            "hours": {"uniform": [2, 12]},
            "notice_hours": {"uniform": [1, 48]},
        },
        "on_conflict": "shift",
    }
    cells = manifest_jobs(
        tmp_path / "kth", KTH, 100, {"reservations": {"g": generated}}, ("easy",), seed=5
    )
    mine = schedlab.simulate(KTH, scheduler="easy", reservations=generated, seed=5)
    assert rows(mine) == cells["easy"]
    booked = mine.reservations
    assert booked.num_rows > 100
    stored = pq.read_table(tmp_path / "kth" / "results" / "options" / "reservations.parquet")
    assert booked.equals(stored.drop_columns(["experiment", "cell"]))
    other = schedlab.simulate(KTH, scheduler="easy", reservations=generated, seed=6)
    assert not other.reservations.equals(booked)


# Multifactor weights: a day of waiting is worth as much as the whole fairshare factor.
PRIORITY = {"age": 1000, "fairshare": 1000, "size": 100, "max_age": 86400}

# A fairshare with decay and unequal shares, as a manifest's scheduler takes it.
FAIR = {"charging": "continuous", "decay": {"half_life": 86400}, "shares": {"users": {"2": 3}}}


def test_a_configured_fairshare_gives_the_manifest_cells_schedule(tmp_path):
    manifest = {
        "name": "options",
        "workloads": {"kth": {"trace": str(KTH)}},
        "clusters": {"pool": {"procs": 100}},
        "schedulers": {
            "fair": {"policy": "easy", "order": "fairshare", "fairshare": FAIR},
            "prio": {
                "policy": "easy",
                "order": "priority",
                "fairshare": FAIR,
                "priority": PRIORITY,
                "reorder": 3600,
            },
        },
    }
    path = tmp_path / "fair.yaml"
    path.write_text(json.dumps(manifest))
    schedlab.run(path, results=tmp_path / "results")
    jobs = pq.read_table(tmp_path / "results" / "options" / "jobs.parquet")
    fair = jobs.filter(jobs.column("cell").to_numpy(zero_copy_only=False) == "fair")
    mine = schedlab.simulate(KTH, scheduler="easy", order="fairshare", fairshare=FAIR)
    assert starts(mine) == fair.column("start").to_pylist()
    # The mapping matters: the default fairshare gives another schedule.
    assert starts(mine) != starts(schedlab.simulate(KTH, scheduler="easy", order="fairshare"))
    # Multifactor priority with its weights, the fairshare factor and a re-order period.
    prio = jobs.filter(jobs.column("cell").to_numpy(zero_copy_only=False) == "prio")
    mine = schedlab.simulate(
        KTH, scheduler="easy", order="priority", fairshare=FAIR, priority=PRIORITY, reorder=3600
    )
    assert starts(mine) == prio.column("start").to_pylist()
    default = schedlab.simulate(KTH, scheduler="easy", order="priority", fairshare=FAIR)
    assert starts(mine) != starts(default)


def test_a_fairshare_in_a_policys_view_is_the_native_order(write_trace):
    # One processor; user 1 runs 100 s first, so at 100 user 2's job comes before user 1's
    # second job under fairshare (submission order would run job 2 first).
    trace = write_trace([(0, 100, 1, 100, 1), (1, 10, 1, 10, 1), (2, 10, 1, 10, 2)], 1)
    assert starts(schedlab.simulate(trace, scheduler="fcfs")) == [0, 100, 110]
    fair = {"charging": "estimate"}
    native = schedlab.simulate(trace, scheduler="fcfs", order="fairshare", fairshare=fair)
    assert starts(native) == [0, 110, 100]

    # The shipped policy orders by the view's fairshare factor when the view has one.
    mine = schedlab.simulate(trace, policy=Fairshare(), fairshare=fair)
    assert starts(mine) == [0, 110, 100]
    # Without one it orders by undecayed usage, which here gives the same order.
    assert mine.policy_calls > 0


@pytest.mark.parametrize(
    ("keyword", "mapping", "expected"),
    [
        ("queues", {"queues": [{"name": "a", "max_runing": 3}]}, "queues=, at queues[0]"),
        ("queues", {"routing": "by_magic", "queues": [{"name": "a"}]}, "queues=, at routing"),
        (
            "reservations",
            {"requests": [{"start": 0, "duration": -5, "procs": 1}]},
            "reservations=, at requests[0]",
        ),
        (
            "reservations",
            {"requests": [{"start": 5, "duration": 5, "procs": 1}], "placment": "after_queue"},
            "reservations=, at placment",
        ),
        ("fairshare", {"penalty": "nope"}, "fairshare=, at penalty"),
        ("fairshare", {"decay": {"factor": 2, "every": 10}}, "fairshare=, at decay"),
        ("priority", {"age": 1, "agee": 2}, "priority=, at agee"),
        ("reorder", 0, "reorder=: expected a positive number of seconds"),
    ],
)
def test_a_bad_mapping_is_an_input_error_naming_the_key_path(
    write_trace, keyword, mapping, expected
):
    trace = write_trace(ONE_RUNNING_JOBS)
    order = {"fairshare": "fairshare", "priority": "priority", "reorder": "fairshare"}.get(
        keyword, "fcfs"
    )
    with pytest.raises(schedlab.InputError) as e:
        schedlab.simulate(trace, scheduler="easy", order=order, **{keyword: mapping})
    assert expected in str(e.value), str(e.value)


def test_keywords_that_cannot_apply_are_input_errors(write_trace):
    trace = write_trace(ONE_RUNNING_JOBS)
    with pytest.raises(schedlab.InputError, match="takes a mapping"):
        schedlab.simulate(trace, queues=[1, 2])
    # A fairshare that the queue order would not use.
    with pytest.raises(
        schedlab.InputError, match="a fairshare given, but the queue order `fcfs` does not use it"
    ):
        schedlab.simulate(trace, scheduler="easy", fairshare={"penalty": "cpu"})
    # Priority weights under another order, and the built-in order's settings with a policy.
    with pytest.raises(
        schedlab.InputError, match="priority weights given, but the queue order `fairshare`"
    ):
        schedlab.simulate(trace, scheduler="easy", order="fairshare", priority={"age": 1})
    with pytest.raises(schedlab.InputError, match="a policy orders the queue itself"):
        schedlab.simulate(trace, policy=EASY(), reorder=60)
    # Node widths on a processor pool.
    with pytest.raises(schedlab.InputError, match="processor pool"):
        schedlab.simulate(
            trace, reservations={"requests": [{"start": 5, "duration": 5, "nodes": 1}]}
        )
    # Reservations need overrun kill, as in a manifest.
    with pytest.raises(schedlab.InputError, match="overrun"):
        schedlab.simulate(trace, overrun="continue", reservations=WHOLE_POOL)


EXAMPLE1 = WORKLOADS / "aleang-example1"


def test_on_a_topology_the_sections_give_the_manifest_cells_schedule(tmp_path):
    """AleaNG's Example1 (its machine file, its queues with CPU quotas per user and group)
    with generated reservations of whole nodes and a decayed fairshare: every section at once,
    for built-in rules and node-level policies, as a manifest's cells."""
    from nodes import NodeEASY, NodeFairshare

    trace = EXAMPLE1 / "Example1-load_75%-urgent_10%-instance_0.swf.gz"
    machines = EXAMPLE1 / "example1.swf.machines"
    queues = {"aleang": str(EXAMPLE1 / "example1.swf")}
    lab = {"generate": {"per_week": 10, "nodes": {"uniform": [1, 2]}, "hours": {"fixed": 4}}}
    fair = {"charging": "continuous", "decay": {"factor": 0.75, "every": 172800}}
    nodes = str(POLICIES / "nodes.py")
    manifest = {
        "name": "options",
        "seed": 3,
        "workloads": {"w": {"trace": str(trace), "memory": "kb_per_node"}},
        "clusters": {"example1": {"machines": str(machines), "allocation": "exclusive"}},
        "schedulers": {
            "easy": {"policy": "easy"},
            "fair": {"policy": "easy", "order": "fairshare", "fairshare": fair},
            "py-easy": {"policy": "python", "path": nodes, "class": "NodeEASY"},
            "py-fair": {
                "policy": "python",
                "path": nodes,
                "class": "NodeFairshare",
                "fairshare": fair,
            },
        },
        "queues": {"aleang": queues},
        "reservations": {"lab": lab},
    }
    path = tmp_path / "options.yaml"
    path.write_text(json.dumps(manifest))
    schedlab.run(path, results=tmp_path / "results")
    stored = pq.read_table(tmp_path / "results" / "options" / "jobs.parquet")
    columns = [*COLUMNS, "cluster"]

    def cell(name):
        keep = stored.column("cell").to_numpy(zero_copy_only=False) == name
        return stored.filter(keep).select(columns).to_pylist()

    def mine(**kw):
        result = schedlab.simulate(
            trace,
            machines=machines,
            allocation="exclusive",
            memory="kb_per_node",
            queues=queues,
            reservations=lab,
            seed=3,
            **kw,
        )
        return result.jobs.select(columns).to_pylist(), result

    easy, result = mine(scheduler="easy")
    assert easy == cell("easy")
    assert any(r["held_by"] for r in easy)
    assert result.reservations.num_rows > 0
    booked = pq.read_table(tmp_path / "results" / "options" / "reservations.parquet")
    keep = booked.column("cell").to_numpy(zero_copy_only=False) == "easy"
    assert result.reservations.equals(booked.filter(keep).drop_columns(["experiment", "cell"]))
    assert mine(scheduler="easy", order="fairshare", fairshare=fair)[0] == cell("fair")
    assert mine(policy=NodeEASY())[0] == cell("py-easy")
    assert mine(policy=NodeFairshare(), fairshare=fair)[0] == cell("py-fair")
    assert cell("fair") != easy


def test_reorder_start_resorts_after_every_start_as_worked_by_hand(write_trace):
    # Two processors; users 1 and 2 each submit two one-processor jobs of 100 s at 0. Every
    # call (the default) ranks both users equal and starts user 1's two jobs; `reorder="start"`
    # re-sorts after each start, user 1's estimate charge puts user 2 first, and one job of
    # each user starts at 0 (docs/fairshare.md, tests/fairshare_order.rs).
    trace = write_trace([(0, 100, 1, 100, 1), (0, 100, 1, 100, 1)] + [(0, 100, 1, 100, 2)] * 2)
    every_call = schedlab.simulate(trace, scheduler="easy", order="fairshare", procs=2)
    assert starts(every_call) == [0, 0, 100, 100]
    per_start = schedlab.simulate(
        trace, scheduler="easy", order="fairshare", procs=2, reorder="start"
    )
    assert starts(per_start) == [0, 100, 0, 100]
    with pytest.raises(schedlab.InputError, match="reorder"):
        schedlab.simulate(trace, scheduler="easy", order="fairshare", procs=2, reorder="later")
