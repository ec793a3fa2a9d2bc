"""Policies on topologies (issue 31): the nodes table, rows-only FCFS and EASY reproducing the
native node-level schedules, explicit node choices applied exactly, impossible node decisions
failing with the job, the node and the reason."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import schedlab

from conftest import ROOT

sys.path.insert(0, str(ROOT / "policies"))
from nodes import NodeEASY, NodeFCFS, Tightest  # noqa: E402

EXAMPLE1 = ROOT / "workloads" / "aleang-example1"
TRACE = EXAMPLE1 / "Example1-load_75%-urgent_10%-instance_0.swf.gz"
MACHINES = EXAMPLE1 / "example1.swf.machines"
WAGAP = ROOT / "workloads" / "wagap-2013.swf.gz"
WAGAP_MACHINES = ROOT / "workloads" / "wagap-2013.swf.machines"


def run(trace=TRACE, machines=MACHINES, **kw):
    memory = "kb_per_node" if trace == TRACE else "bytes_per_node"
    return schedlab.simulate(trace, machines=machines, memory=memory, **kw)


def same(a, b):
    for column in ("job_id", "start", "end", "cluster"):
        assert a.jobs.column(column).equals(b.jobs.column(column)), column
    assert a.nodes.equals(b.nodes)


@pytest.mark.parametrize("placement", ["first_fit", "best_fit"])
def test_rows_only_fcfs_and_easy_reproduce_the_native_node_schedules(placement):
    for scheduler, policy in (("fcfs", NodeFCFS()), ("easy", NodeEASY())):
        native = run(scheduler=scheduler, placement=placement)
        mine = run(policy=policy, placement=placement)
        same(native, mine)
        assert mine.policy_calls > 0 and native.nodes.num_rows == 2830
    assert mine.report["backfilled_fraction"] > 0.5  # EASY backfills: more than FCFS tested


def test_easy_on_shared_multicore_nodes_with_memory():
    """wagap-2013's two clusters (80- and 12-core nodes shared by jobs with memory)."""
    native = run(WAGAP, WAGAP_MACHINES, scheduler="easy", placement="best_fit")
    mine = run(WAGAP, WAGAP_MACHINES, policy=NodeEASY(), placement="best_fit")
    same(native, mine)
    assert mine.jobs.num_rows > 1000


class Recorder(schedlab.Policy):
    """Checks the view's topology columns against the machine file, once."""

    def __init__(self):
        self.seen = False

    def decide(self, view):
        if not self.seen:
            self.seen = True
            assert view.on_topology and view.clusters == ["cl_dedicated", "cl_normal_1"]
            n = view.nodes
            assert len(n) == 68 and list(n.cluster[:5]) == [0, 0, 0, 0, 1]
            assert set(n.cores) == {1} and set(n.gpus) == {4} and set(n.exclusive) == {0}
            assert (n.free_cores <= n.cores).all() and view.placement == "first_fit"
            w = view.waiting
            # Row 0 asks "all"? then every node; "normal": the 64 normal nodes.
            elig = view.eligible_nodes(0)
            assert len(elig) in (64, 68) and elig.dtype == np.int64
            shape = view.shape(0, int(elig[0]))
            assert shape.nodes == w.procs[0] and shape.cores == 1 and not shape.whole
            with pytest.raises(ValueError, match="on a topology use view.placer"):
                view.shadow(0)
            with pytest.raises(ValueError, match="on a topology"):
                view.plan()
        return NodeFCFS().decide(view)


def test_the_view_shows_the_nodes():
    policy = Recorder()
    run(policy=policy)
    assert policy.seen


class Fixed(schedlab.Policy):
    """At the first call: `first(view)`; after it, FCFS with rows only."""

    def __init__(self, first):
        self.first = first

    def decide(self, view):
        if self.first is not None:
            first, self.first = self.first, None
            return first(view)
        return NodeFCFS().decide(view)


def test_explicit_nodes_are_the_nodes_jobs_get():
    # Row 0 on the last nodes it may use, in reverse: not where first fit puts it.
    chosen = {}

    def last_nodes(view):
        w = view.waiting
        eligible = view.eligible_nodes(0)
        count = view.shape(0, int(eligible[0])).nodes
        nodes = [int(n) for n in eligible[::-1][:count]]
        chosen[int(w.index[0])] = nodes
        return [(0, nodes)]

    result = run(policy=Fixed(last_nodes))
    nodes = dict(
        zip(result.nodes.column("index").to_pylist(), result.nodes.column("nodes").to_pylist())
    )
    ((index, mine),) = chosen.items()
    assert nodes[index] == mine
    native = run(scheduler="fcfs")
    assert native.nodes.column("nodes")[0].as_py() != mine


def test_tightest_chooses_its_nodes_and_runs_every_job():
    result = run(WAGAP, WAGAP_MACHINES, policy=Tightest())
    native = run(WAGAP, WAGAP_MACHINES, scheduler="fcfs")
    assert result.jobs.num_rows == native.jobs.num_rows
    assert not result.nodes.equals(native.nodes)  # its own choice, not first fit's


@pytest.mark.parametrize(
    "decide, message",
    [
        (
            lambda v: [(0, [999])],
            "job 1 (row 0) cannot start on nodes [999]: "
            "node 999 does not exist (the machine has 68 nodes, 0 to 67)",
        ),
        (lambda v: [(0, [4] * (v.waiting.procs[0] + 1))], "were given"),
        (lambda v: [(0, [4, 4] + list(range(5, 3 + v.waiting.procs[0])))], "is given twice"),
        (
            lambda v: [
                (0, v.eligible_nodes(0)[: v.waiting.procs[0]]),
                (1, v.eligible_nodes(0)[: v.waiting.procs[1]]),
            ],
            "job 2 (row 1) cannot start on nodes",
        ),
        (lambda v: [(0, [])], "returned no nodes for row 0"),
        (lambda v: [(7, [1])], "it started row 7"),
        (lambda v: [0, 0], "it started job 1 (row 0) twice"),
    ],
)
def test_impossible_node_decisions_fail_clearly(decide, message):
    with pytest.raises(schedlab.SimulationError) as e:
        run(policy=Fixed(decide))
    assert message in str(e.value), str(e.value)


def test_a_job_on_nodes_outside_its_constraint_fails_naming_it():
    def dedicated(view):
        w = view.waiting
        for row in range(len(w)):
            eligible = set(view.eligible_nodes(row).tolist())
            # Small enough for the 4 dedicated nodes (0 to 3), yet not eligible there: it asks
            # for "normal" nodes.
            if w.procs[row] <= 4 and 0 not in eligible:
                return [(row, list(range(w.procs[row])))]
        raise AssertionError("a job asking for normal nodes waits at the first call")

    with pytest.raises(
        schedlab.SimulationError,
        match=r"node 0 \(cluster cl_dedicated\) does not satisfy its constraint "
        r"\(properties normal\)",
    ):
        run(policy=Fixed(dedicated))


def test_node_pairs_on_a_uniform_machine_are_a_type_error():
    with pytest.raises(schedlab.SimulationError, match="has no nodes to choose"):
        schedlab.simulate(
            ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz", policy=Fixed(lambda v: [(0, [0])])
        )


def run_study(tmp_path, name, manifest, workloads, policies=None):
    """Lays study `name` (its manifest's `name:`) out as a checkout has it: the manifest as
    `experiments/<name>.yaml`, `workloads/` with the files `workloads` maps (name → source),
    `policies/` with the shipped ones plus `policies` (file name → text). Runs it and returns
    the folder of its results."""
    import shutil

    (tmp_path / "experiments").mkdir()
    (tmp_path / "workloads").mkdir()
    for target, source in workloads.items():
        shutil.copy(source, tmp_path / "workloads" / target)
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for target, text in (policies or {}).items():
        (tmp_path / "policies" / target).write_text(text)
    path = tmp_path / "experiments" / f"{name}.yaml"
    path.write_text(manifest)
    results = tmp_path / "results"
    schedlab.run(str(path), results=str(results))
    return results / name


MANIFEST = """
name: nodes
workloads:
  example1:
    trace: ../workloads/example1.swf.gz
    memory: kb_per_node
clusters:
  example1:
    machines: ../workloads/example1.swf.machines
schedulers:
  easy: {policy: easy}
  py-easy: {policy: python, path: ../policies/nodes.py, class: NodeEASY}
  py-tight: {policy: python, path: ../policies/nodes.py, class: Tightest}
grid:
  axes:
    scheduler: [easy, py-easy, py-tight]
"""


def test_python_policies_run_on_manifest_topologies(tmp_path):
    import pyarrow.parquet as pq

    results = run_study(
        tmp_path,
        "nodes",
        MANIFEST,
        {"example1.swf.gz": TRACE, "example1.swf.machines": MACHINES},
    )
    jobs = pq.read_table(results / "jobs.parquet")

    def starts(cell):
        mask = [c == cell for c in jobs.column("cell").to_pylist()]
        return jobs.filter(mask).column("start").to_pylist()

    assert len(starts("easy")) == 2830
    assert starts("py-easy") == starts("easy")
    assert len(starts("py-tight")) == 2830


TIERED_NODES = '''
import numpy as np

from nodes import NodeEASY


class NodeTiered(NodeEASY):
    """EASY on nodes over the queue priorities (highest first), then submission order."""

    def order(self, view):
        return np.argsort(-view.waiting.queue_priority, kind="stable").tolist()
'''

LIMITED_MANIFEST = """
name: limited-nodes
workloads:
  example1:
    trace: ../workloads/example1.swf.gz
    memory: kb_per_node
clusters:
  example1:
    machines: ../workloads/example1.swf.machines
    allocation: exclusive
schedulers:
  easy: {policy: easy}
  fair:
    policy: easy
    order: fairshare
    fairshare: &fairshare
      penalty: cpu
      charging: continuous
      decay: {factor: 0.75, every: 172800}
      shares:
        hierarchy: groups
        users: {0: 2, 1: 2, 2: 1, 3: 1}
        groups: {0: 2, 1: 1}
  py-easy: {policy: python, path: ../policies/nodes.py, class: NodeEASY}
  py-tiered: {policy: python, path: ../policies/tiered_nodes.py, class: NodeTiered}
  py-usage: {policy: python, path: ../policies/nodes.py, class: NodeFairshare}
  py-fair:
    policy: python
    path: ../policies/nodes.py
    class: NodeFairshare
    fairshare: *fairshare
queues:
  aleang:
    aleang: ../workloads/example1.swf
grid:
  axes:
    scheduler: [easy, fair, py-easy, py-tiered, py-usage, py-fair]
    queues: [none, aleang]
"""


def test_node_policies_under_queues_and_with_a_fairshare_reproduce_the_native_rules(tmp_path):
    """AleaNG's Example1 as experiments/aleang-example1.yaml sets it up (two queues of different
    priorities, CPU quotas per user and group, a decayed group fairshare), with EASY: the
    policies see the eligible jobs with their queue priorities, the held jobs, and the native
    fairshare factor, and decide as the native rules job for job."""
    import pyarrow.parquet as pq

    inputs = {"example1.swf.gz": TRACE}
    for suffix in ("machines", "queues", "users", "groups"):
        inputs[f"example1.swf.{suffix}"] = EXAMPLE1 / f"example1.swf.{suffix}"
    results = run_study(
        tmp_path, "limited-nodes", LIMITED_MANIFEST, inputs, {"tiered_nodes.py": TIERED_NODES}
    )
    jobs = pq.read_table(results / "jobs.parquet").to_pandas()
    columns = ["job_id", "start", "end", "cluster", "held_by", "sim_queue"]
    by = {cell: g[columns].reset_index(drop=True) for cell, g in jobs.groupby("cell")}

    # The queue setup bites: jobs are held by its quotas, and it changes the schedule.
    assert by["easy.aleang"]["held_by"].notna().any()
    assert not by["easy.aleang"]["start"].equals(by["easy.none"]["start"])
    # Without a queue setup every priority is 0: both orders are submission order.
    assert by["py-easy.none"].equals(by["easy.none"])
    assert by["py-tiered.none"].equals(by["easy.none"])
    # Under the queues the policy sees the eligible jobs with their queues' priorities; ordered
    # by them it is the native EASY under the queues, job for job (held and queue too).
    assert by["py-tiered.aleang"].equals(by["easy.aleang"])
    # The fairshare in the view is the native order's: job for job, with and without queues.
    assert by["py-fair.none"].equals(by["fair.none"])
    assert by["py-fair.aleang"].equals(by["fair.aleang"])
    assert not by["fair.none"].equals(by["easy.none"])
    # Without `fairshare:` NodeFairshare orders by undecayed usage: another schedule.
    assert not by["py-usage.none"].equals(by["fair.none"])


RESERVED_MANIFEST = """
name: reserved-nodes
workloads:
  wagap:
    trace: ../workloads/wagap.swf.gz
    memory: bytes_per_node
    first_jobs: 3000
clusters:
  wagap:
    machines: ../workloads/wagap.swf.machines
schedulers:
  fcfs: {policy: fcfs}
  easy: {policy: easy}
  py-fcfs: {policy: python, path: ../policies/nodes.py, class: NodeFCFS}
  py-easy: {policy: python, path: ../policies/nodes.py, class: NodeEASY}
  py-watch: {policy: python, path: ../policies/watch_nodes.py, class: Watch}
reservations:
  lab:
    generate: {per_week: 40, nodes: {uniform: [2, 8]}, hours: {uniform: [6, 24]}}
grid:
  axes:
    scheduler: [fcfs, easy, py-fcfs, py-easy, py-watch]
    reservations: [none, lab]
"""

WATCH_NODES = '''
import os

from nodes import NodeEASY


class Watch(NodeEASY):
    """NodeEASY, noting the most reservations the view listed (in a file named by the
    environment)."""

    def __init__(self):
        self.most = 0

    def decide(self, view):
        self.most = max(self.most, len(view.reservations))
        for start, end, nodes in view.reservations:
            assert end > view.now and nodes >= 1
        out = os.environ.get("SCHEDLAB_TEST_WATCH")
        if out:
            with open(out, "w") as f:
                f.write(str(self.most))
        return super().decide(view)
'''


def test_node_policies_beside_advance_reservations_reproduce_the_native_rules(
    tmp_path, monkeypatch
):
    """wagap-2013's shared multicore nodes with generated reservations of whole nodes: the
    placer plans beside them as the built-in rules do, so rows-only FCFS and EASY are the native
    schedules job for job and node for node; the view lists the reservations."""
    import pyarrow.parquet as pq

    watch = tmp_path / "watch.txt"
    monkeypatch.setenv("SCHEDLAB_TEST_WATCH", str(watch))
    results = run_study(
        tmp_path,
        "reserved-nodes",
        RESERVED_MANIFEST,
        {"wagap.swf.gz": WAGAP, "wagap.swf.machines": WAGAP_MACHINES},
        {"watch_nodes.py": WATCH_NODES},
    )
    jobs = pq.read_table(results / "jobs.parquet").to_pandas()
    columns = ["job_id", "start", "end", "cluster", "backfilled"]
    by = {cell: g[columns].reset_index(drop=True) for cell, g in jobs.groupby("cell")}
    reservations = pq.read_table(results / "reservations.parquet").to_pandas()

    # The reservations are granted and move jobs.
    granted = reservations[reservations["cell"] == "easy.lab"]
    assert granted["start"].notna().sum() >= 5, granted
    assert not by["easy.lab"]["start"].equals(by["easy.none"]["start"])
    for kind in ("fcfs", "easy"):
        for r in ("none", "lab"):
            assert by[f"py-{kind}.{r}"].equals(by[f"{kind}.{r}"]), (kind, r)
    assert by["py-watch.lab"].equals(by["easy.lab"])
    assert int(watch.read_text()) >= 1
