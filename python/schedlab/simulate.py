"""One trace, one machine, one scheduler or policy: ``simulate`` and ``read_trace``."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from typing import Any, Union

import pyarrow as pa
import pyarrow.json as pa_json

from . import _schedlab

PathLike = Union[str, "os.PathLike[str]"]


class Result:
    """A finished simulation.

    - ``jobs``: one row per simulated job, the columns of ``jobs.parquet`` (docs/outputs.md).
    - ``summary``: one row, the run summary as ``schedlab simulate --format json`` prints it
      (mean wait, bounded slowdown, utilization, …; the setting that produced it).
    - ``report``: the same summary as a dict.
    - ``policy_calls``: how many times a Python policy was asked to decide (0 for a built-in
      scheduler).
    - ``nodes``: on a topology (``machines=``), each simulated job's nodes — ``index`` (the
      job's position in the workload) and ``nodes`` (node indices, as ``View.nodes``); empty on
      a uniform machine.
    - ``reservations``: with ``reservations=``, every reservation request and its outcome, the
      columns of ``reservations.parquet`` without ``experiment`` and ``cell``
      (docs/outputs.md); ``None`` without reservations.
    """

    def __init__(
        self,
        jobs: pa.RecordBatch,
        summary: str,
        policy_calls: int,
        nodes: list[tuple[int, list[int]]] = (),
        reservations: pa.RecordBatch | None = None,
    ):
        self.jobs: pa.Table = pa.Table.from_batches([jobs])
        self.report: dict[str, Any] = json.loads(summary)
        flat = {k: v for k, v in self.report.items() if not isinstance(v, (dict, list))}
        for key in ("warmup", "skipped_by_reason"):
            flat[key] = json.dumps(self.report.get(key), sort_keys=True)
        self.summary: pa.Table = _one_row(flat)
        self.policy_calls: int = policy_calls
        self._nodes = list(nodes)
        self.reservations: pa.Table | None = (
            None if reservations is None else pa.Table.from_batches([reservations])
        )

    @property
    def nodes(self) -> pa.Table:
        """Each simulated job's nodes on a topology (built when first read: ``pa.array`` of
        Python lists imports pandas, which a simulation does not otherwise need)."""
        return pa.table(
            {
                "index": pa.array([n[0] for n in self._nodes], pa.int64()),
                "nodes": pa.array([n[1] for n in self._nodes], pa.list_(pa.int64())),
            }
        )

    def __repr__(self) -> str:
        r = self.report
        return (
            f"<schedlab.Result {r.get('scheduler')} on {r.get('procs')} processors: "
            f"{self.jobs.num_rows} jobs, mean wait {r.get('wait_mean', float('nan')):.1f} s>"
        )


_ARROW_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}


def _one_row(row: dict[str, Any]) -> pa.Table:
    """``pa.Table.from_pylist([row])`` — the same columns and types — through pyarrow's JSON
    reader with the types given: ``from_pylist`` imports pandas to infer them, 0.2 s of every
    run's start-up for one row."""
    schema = pa.schema([(k, _ARROW_TYPES.get(type(v), pa.null())) for k, v in row.items()])
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    return pa_json.read_json(io.BytesIO(json.dumps(row).encode()), parse_options=options)


def simulate(
    trace: PathLike | None = None,
    *,
    workload: Mapping[str, Any] | None = None,
    seed: int = 0,
    scheduler: str | None = None,
    policy: Any = None,
    order: str = "fcfs",
    backfill_order: str = "queue",
    procs: int | None = None,
    node_size: int | None = None,
    interval: int | None = None,
    overrun: str = "kill",
    tau: int = 10,
    warmup_jobs: int | None = None,
    warmup_seconds: int | None = None,
    lenient: bool = False,
    memory: str = "kb_per_proc",
    machines: PathLike | None = None,
    allocation: str | None = None,
    placement: str = "first_fit",
    queues: Mapping[str, Any] | None = None,
    reservations: Mapping[str, Any] | None = None,
    fairshare: Mapping[str, Any] | None = None,
    priority: Mapping[str, Any] | None = None,
    reorder: int | str | None = None,
) -> Result:
    """Simulates the SWF trace at ``trace`` (plain or gzip), or the generated ``workload``,
    and returns a :class:`Result`.

    ``workload`` is a manifest's workload mapping (``workloads.<name>`` in a manifest: its
    ``synthetic`` models and filters such as ``first_jobs``, docs/synthetic.md), generated for
    ``seed`` by the manifest's own code — the workload of a manifest with ``seed: <seed>`` — on
    a machine of ``procs`` processors (required; a ``target_load`` is computed on it, whatever
    cluster it names).

    ``scheduler`` names a built-in backfilling rule (``fcfs``, ``easy``, ``conservative``,
    ``aggressive``; ``easy`` when neither it nor ``policy`` is given) walking the queue
    ``order`` (``fcfs``, ``fairshare``, ``priority``, ``sjf``); ``backfill_order`` offers the
    jobs after the first that cannot start in another order (``queue``, ``submission``,
    ``shortest`` — shortest-job backfilling — or ``smallest_area``). ``policy`` is your own: an
    object with ``decide(view)`` (docs/policies.md). The machine has ``procs`` processors (by
    default the trace's MaxProcs), in whole nodes of ``node_size`` when given. ``interval``
    calls the scheduler only every that many seconds; ``overrun`` is ``kill`` or ``continue``;
    ``tau`` is the bounded-slowdown threshold. ``machines`` simulates on the clusters of an Alea
    or AleaNG machine file instead (a topology: nodes with memory, GPUs, properties; with
    ``allocation`` ``shared`` or ``exclusive`` overriding the file's, and ``placement``
    ``first_fit`` or ``best_fit``); a policy then sees the nodes and may choose them
    (docs/policies.md, "On a topology"). Errors raise :class:`schedlab.InputError` (bad
    input) or :class:`schedlab.SimulationError` (a policy that raised or decided the impossible),
    with the same messages as the CLI.

    With a ``policy``, ``order`` orders nothing (the policy does): ``order="fairshare"`` puts
    the default fairshare into ``view.waiting.fairshare_usage`` and ``fairshare_factor``.

    A manifest's sections come as keywords, each taking the mapping the manifest takes there
    and read by the manifest's own code (errors name the key path from the keyword):
    ``queues`` a queue setup (``queues.<setup>``, docs/queues.md: routing, limits, quotas; the
    jobs table's ``sim_queue``, ``held_by``, ``held_seconds`` and ``killed_by`` columns are then
    filled), ``reservations`` a reservation scenario (``reservations.<scenario>``,
    docs/reservations.md; generated requests drawn for ``seed``; ``Result.reservations``),
    ``fairshare`` a scheduler's ``fairshare`` settings (docs/fairshare.md: what
    ``order="fairshare"`` or ``"priority"`` ranks by, or what a policy's view shows). Each applies
    to a built-in scheduler and to a policy, on a pool, whole nodes or a topology, as in a
    manifest's cell. ``priority`` (a scheduler's ``priority`` weights, for ``order="priority"``)
    and ``reorder`` (recompute the priorities of ``fairshare`` or ``priority`` every that many
    seconds, or ``"start"``: after every single start) set a built-in rule's order as a
    manifest's scheduler does.
    """
    jobs, summary, calls, nodes, booked = _schedlab.simulate(
        None if trace is None else os.fspath(trace),
        workload=_json(workload),
        seed=seed,
        scheduler=scheduler,
        policy=policy,
        order=order,
        backfill_order=backfill_order,
        procs=procs,
        node_size=node_size,
        interval=interval,
        overrun=overrun,
        tau=tau,
        warmup_jobs=warmup_jobs,
        warmup_seconds=warmup_seconds,
        lenient=lenient,
        memory=memory,
        machines=None if machines is None else os.fspath(machines),
        allocation=allocation,
        placement=placement,
        queues=_json(queues),
        reservations=_json(reservations),
        fairshare=_json(fairshare),
        priority=_json(priority),
        reorder=reorder,
    )
    return Result(jobs, summary, calls, nodes, booked)


def _json(mapping: Mapping[str, Any] | None) -> str | None:
    """A keyword's mapping as JSON text for the native module (None stays None; a value that is
    not a mapping goes through too, for the native module to refuse with its message)."""
    return None if mapping is None else json.dumps(mapping)


def read_trace(
    path: PathLike,
    *,
    lenient: bool = False,
    memory: str = "kb_per_proc",
    mapping: str | None = None,
) -> pa.Table:
    """The jobs of the SWF trace at ``path`` (a Batsim JSON workload when the name ends in
    ``.json``; with ``mapping``, a job table or a Slurm ``sacct`` dump read through that
    mapping: a shipped one's name such as ``"helios"`` or ``"slurm"``, or a mapping file;
    docs/sources.md) as the simulator reads them (one row per job, in submission order):
    ``index``, ``id``, ``submit``, ``runtime``, ``requested_time``, ``procs``, ``user``,
    ``group``, ``queue``, ``partition``, ``memory_kb``. The schema's metadata holds the
    header's MaxProcs (``schedlab.max_procs``) and the read counts."""
    batch = _schedlab.read_trace(os.fspath(path), lenient=lenient, memory=memory, mapping=mapping)
    return pa.Table.from_batches([batch])
