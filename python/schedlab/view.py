"""The view a policy decides on: the state at one scheduling point, as numpy columns.

Each table crosses from Rust as one block of bytes per call; the columns are numpy views into
it (no copy, no Python object per job), made when first read. Rows of ``View.waiting`` are what
a policy returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from . import _schedlab
from .policy import NodeShape, Placer, Plan, Shadow

#: The waiting table's integer columns, in the order the native module packs them (then
#: ``user_usage``, float64).
WAITING_COLUMNS = (
    "index",
    "id",
    "user",
    "group",
    "queue",
    "submit",
    "requested_time",
    "wait",
    "procs",
    "units",
    "memory_kb",
    "gpus",
)
#: The waiting table's queue columns (int64), packed after ``user_usage``: filled in a run with
#: a queue setup, else -1 and 0.
WAITING_QUEUE_COLUMNS = ("routed_queue", "queue_priority")
#: The waiting table's fairshare columns (float64), packed last: NaN without a fairshare.
WAITING_FAIRSHARE_COLUMNS = ("fairshare_usage", "fairshare_factor")
#: The held table's columns, in the order the native module packs them.
HELD_COLUMNS = (
    "index",
    "id",
    "user",
    "group",
    "queue",
    "procs",
    "requested_time",
    "wait",
    "limit",
)
#: The names of the limits holding a job, by ``View.held.limit`` code (docs/queues.md).
LIMITS: tuple[str, ...] = tuple(_schedlab.limit_names())
#: The running table's columns, in the order the native module packs them.
RUNNING_COLUMNS = ("index", "id", "user", "start", "expected_end", "procs", "units")
#: The nodes table's columns (on a topology), in the order the native module packs them.
NODE_COLUMNS = (
    "cluster",
    "class_",
    "cores",
    "memory_kb",
    "gpus",
    "free_cores",
    "free_memory_kb",
    "free_gpus",
    "exclusive",
)


_INT64 = np.dtype(np.int64)  # made once: converting np.int64 to a dtype costs per call


class _Column:
    """Row ``k`` of a table's block as a numpy view: made on first read, then kept on the table
    (a non-data descriptor, so the instance's attribute answers every later read). A call
    usually reads two or three columns; making all of them would cost more than the loop over
    a short queue they serve."""

    def __init__(self, k: int, dtype=None):
        self.k = k
        self.dtype = dtype

    def __set_name__(self, owner, name: str):
        self.name = name

    def __get__(self, table, owner=None):
        if table is None:
            return self
        column = table._block[self.k]
        if self.dtype is not None:
            column = column.view(self.dtype)
        table.__dict__[self.name] = column
        return column


class Waiting:
    """The waiting jobs, in submission order: one numpy array per column, row ``k`` of every
    column is the same job.

    Columns (int64 unless noted): ``index`` (the job's position in the workload, unique),
    ``id`` (the trace's job number), ``user``, ``group``, ``queue`` (-1 when unknown),
    ``submit``, ``requested_time`` (the user's estimate, the only runtime a policy may use),
    ``wait`` (seconds waited so far), ``procs`` (requested processors), ``units`` (allocation
    units the job takes: processors on a pool, nodes on whole nodes), ``memory_kb``, ``gpus``,
    and ``user_usage`` (float64: core-seconds the job's user used so far, completed jobs in full
    and running ones up to now, no decay).

    With a queue setup (docs/queues.md): ``routed_queue`` (the queue the job was routed to, its
    number in the setup's ``queues``; -1 without one) and ``queue_priority`` (that queue's
    priority; 0 without one). With a fairshare (float64, NaN without one):
    ``fairshare_usage`` (the user's decayed, priced usage) and ``fairshare_factor`` (in (0, 1],
    higher first), as the native ``order: fairshare`` computes them at this call.
    """

    index = _Column(0)
    id = _Column(1)
    user = _Column(2)
    group = _Column(3)
    queue = _Column(4)
    submit = _Column(5)
    requested_time = _Column(6)
    wait = _Column(7)
    procs = _Column(8)
    units = _Column(9)
    memory_kb = _Column(10)
    gpus = _Column(11)
    user_usage = _Column(12, np.dtype(np.float64))
    # Queues and limits.
    routed_queue = _Column(13)
    queue_priority = _Column(14)
    # Fairshare.
    fairshare_usage = _Column(15, np.dtype(np.float64))
    fairshare_factor = _Column(16, np.dtype(np.float64))

    _NAMES = (
        *WAITING_COLUMNS,
        "user_usage",
        *WAITING_QUEUE_COLUMNS,
        *WAITING_FAIRSHARE_COLUMNS,
    )

    def __init__(self, block: bytes, n: int):
        # One row per column, int64 (the float64 columns' bits as they are); read-only, as
        # bytes are.
        self._block = np.ndarray((len(self._NAMES), n), _INT64, block)

    def __len__(self) -> int:
        return self._block.shape[1]

    def as_dict(self) -> dict[str, np.ndarray]:
        """Every column by name (for ``pandas.DataFrame(view.waiting.as_dict())``)."""
        return {name: getattr(self, name) for name in self._NAMES}


class Running:
    """The running jobs, in order of expected end (ties by submission order).

    Columns (int64): ``index``, ``id``, ``user``, ``start``, ``expected_end`` (start +
    requested time; one second from now for a job running past its request), ``procs``,
    ``units``.
    """

    index = _Column(0)
    id = _Column(1)
    user = _Column(2)
    start = _Column(3)
    expected_end = _Column(4)
    procs = _Column(5)
    units = _Column(6)

    def __init__(self, block: bytes, n: int):
        self._block = np.ndarray((len(RUNNING_COLUMNS), n), _INT64, block)

    def __len__(self) -> int:
        return self._block.shape[1]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in RUNNING_COLUMNS}


class Held:
    """The jobs queues and limits hold back right now, in submission order (empty without a
    queue setup). A policy sees them but cannot start them: they are not rows of
    ``View.waiting``, and a decision naming row ``len(view.waiting) + k`` (held row ``k``, as in
    the two tables one after the other) stops the run naming the job and the limit.

    Columns (int64): ``index``, ``id``, ``user``, ``group``, ``queue`` (the queue it was routed
    to), ``procs``, ``requested_time``, ``wait`` (seconds since submission), ``limit`` (the
    limit holding it, as a code: ``schedlab.LIMITS[code]`` is its name, e.g.
    ``"user_max_running"``).
    """

    index = _Column(0)
    id = _Column(1)
    user = _Column(2)
    group = _Column(3)
    queue = _Column(4)
    procs = _Column(5)
    requested_time = _Column(6)
    wait = _Column(7)
    limit = _Column(8)

    def __init__(self, block: bytes, n: int):
        self._block = np.ndarray((len(HELD_COLUMNS), n), _INT64, block)

    def __len__(self) -> int:
        return self._block.shape[1]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in HELD_COLUMNS}


class Nodes:
    """The nodes of a topology, by node index (the indices decisions name): one numpy array per
    column.

    Columns (int64): ``cluster`` (index into ``view.clusters``), ``class_`` (the node's class:
    a cluster's nodes of one kind), ``cores``, ``memory_kb``, ``gpus`` (capacity),
    ``free_cores``, ``free_memory_kb``, ``free_gpus`` (free now, before this call's starts),
    ``exclusive`` (1 where jobs take whole nodes).
    """

    cluster = _Column(0)
    class_ = _Column(1)
    cores = _Column(2)
    memory_kb = _Column(3)
    gpus = _Column(4)
    free_cores = _Column(5)
    free_memory_kb = _Column(6)
    free_gpus = _Column(7)
    exclusive = _Column(8)

    def __init__(self, block: bytes, n: int):
        self._block = np.ndarray((len(NODE_COLUMNS), n), _INT64, block)

    def __len__(self) -> int:
        return self._block.shape[1]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in NODE_COLUMNS}


class View:
    """What a policy sees at one scheduling point. Read-only: deciding changes nothing here.

    Attributes: ``now`` (seconds), ``capacity`` and ``free`` (allocation units: processors on a
    pool, nodes on whole nodes), ``procs_per_unit``, ``waiting`` (:class:`Waiting`),
    ``running`` (:class:`Running`), ``reservations`` (granted advance reservations not yet over,
    as ``(start, end, units)``), and with a queue setup ``held`` (:class:`Held`, the jobs the
    limits hold).
    """

    now: int
    capacity: int
    free: int
    procs_per_unit: int
    on_topology: bool

    def __init__(self, state):
        self._state = state
        # One crossing for the attributes every call reads (a policy call costs a few µs).
        (
            self.now,
            self.capacity,
            self.free,
            self.procs_per_unit,
            self.on_topology,
            self._n_waiting,
            self._n_running,
        ) = state.header()
        self._waiting: Waiting | None = None
        self._running: Running | None = None
        self._nodes: Nodes | None = None
        self._placers: list = []

    @property
    def waiting(self) -> Waiting:
        if self._waiting is None:
            s = self._state
            self._waiting = Waiting(s.waiting_block(), self._n_waiting)
        return self._waiting

    @property
    def running(self) -> Running:
        if self._running is None:
            s = self._state
            self._running = Running(s.running_ints(), self._n_running)
        return self._running

    @cached_property
    def held(self) -> Held:
        s = self._state
        return Held(s.held_block(), s.n_held)

    @cached_property
    def reservations(self) -> list[tuple[int, int, int]]:
        return self._state.reservations()

    def shadow(self, row: int, started: Sequence[int] = ()) -> Shadow | None:
        """EASY's reservation for waiting row ``row``: the earliest time it fits (walking the
        running jobs, and the rows ``started`` in this call, in order of expected end) and the
        units left over then (``extra``). ``None`` when it can never fit. With advance
        reservations the time comes from the plan and ``extra`` is 0 (docs/policies.md)."""
        s = self._state.shadow(row, started)
        return None if s is None else Shadow(*s)

    def earliest_start(self, units: int, duration: int, started: Sequence[int] = ()) -> int | None:
        """The earliest time, from now on, at which ``units`` fit for ``duration`` seconds
        beside the running jobs, the reservations and the rows ``started``."""
        return self._state.earliest_start(int(units), int(duration), [int(r) for r in started])

    def plan(self, started: Sequence[int] = ()) -> Plan:
        """The availability profile of the committed future, with the rows ``started`` running
        from now: a scratch pad (reserving in it starts nothing)."""
        return Plan(self, self._state.plan([int(r) for r in started]))

    # --- On a topology (issue 31): ValueError on a uniform machine ---

    @property
    def nodes(self) -> Nodes:
        """The nodes as columns (:class:`Nodes`), by node index."""
        if self._nodes is None:
            s = self._state
            self._nodes = Nodes(s.nodes_block(), s.n_nodes)
        return self._nodes

    @cached_property
    def clusters(self) -> list[str]:
        """Cluster names, by the index in ``view.nodes.cluster``."""
        return self._state.clusters()

    @cached_property
    def placement(self) -> str:
        """The machine's placement (``first_fit`` or ``best_fit``): where the engine puts a row
        returned without nodes."""
        return self._state.placement()

    def shape(self, row: int, node: int) -> NodeShape | None:
        """Waiting row ``row``'s shape on ``node``'s class as the engine resolves it: how many
        nodes, the amounts on each and on the last one, whole nodes or not. ``None`` where it
        may not run (constraint, or too big for those nodes)."""
        s = self._state.shape(int(row), int(node))
        return None if s is None else NodeShape(s[0], *s[1], *s[2], s[3])

    def eligible_nodes(self, row: int) -> np.ndarray:
        """The nodes waiting row ``row`` may run on (its constraint and its shape), classes in
        the order the placement tries them."""
        return np.asarray(self._state.eligible_nodes(int(row)), dtype=np.int64)

    def placer(self) -> Placer:
        """A scratch pad for this call's starts on nodes: the built-in rules' node choice
        (``place``), EASY's shadow time and backfilling on nodes (``shadow``, ``backfill``),
        your own nodes checked (``take``). Rows you return without nodes start on the nodes a
        placer of this view gave them."""
        placer = Placer(self._state.placer())
        self._placers.append(placer)
        return placer
