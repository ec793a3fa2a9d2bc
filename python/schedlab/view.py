"""The view a policy decides on: the state at one scheduling point, as numpy columns.

Each table crosses from Rust as one block of bytes per call; the columns are numpy views into
it (no copy, no Python object per job). Rows of ``View.waiting`` are what a policy returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from .policy import Plan, Shadow

#: The waiting table's integer columns, in the order the native module packs them.
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
#: The running table's columns, in the order the native module packs them.
RUNNING_COLUMNS = ("index", "id", "user", "start", "expected_end", "procs", "units")


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
    """

    def __init__(self, block: bytes, usage: bytes, n: int):
        ints = np.frombuffer(block, dtype=np.int64).reshape(len(WAITING_COLUMNS), n)
        for k, name in enumerate(WAITING_COLUMNS):
            setattr(self, name, ints[k])
        self.user_usage = np.frombuffer(usage, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.index)

    def as_dict(self) -> dict[str, np.ndarray]:
        """Every column by name (for ``pandas.DataFrame(view.waiting.as_dict())``)."""
        names = (*WAITING_COLUMNS, "user_usage")
        return {name: getattr(self, name) for name in names}


class Running:
    """The running jobs, in order of expected end (ties by submission order).

    Columns (int64): ``index``, ``id``, ``user``, ``start``, ``expected_end`` (start +
    requested time; one second from now for a job running past its request), ``procs``,
    ``units``.
    """

    def __init__(self, block: bytes, n: int):
        ints = np.frombuffer(block, dtype=np.int64).reshape(len(RUNNING_COLUMNS), n)
        for k, name in enumerate(RUNNING_COLUMNS):
            setattr(self, name, ints[k])

    def __len__(self) -> int:
        return len(self.index)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in RUNNING_COLUMNS}


class View:
    """What a policy sees at one scheduling point. Read-only: deciding changes nothing here.

    Attributes: ``now`` (seconds), ``capacity`` and ``free`` (allocation units: processors on a
    pool, nodes on whole nodes), ``procs_per_unit``, ``waiting`` (:class:`Waiting`),
    ``running`` (:class:`Running`), ``reservations`` (granted advance reservations not yet over,
    as ``(start, end, units)``).
    """

    def __init__(self, state):
        self._state = state
        self.now: int = state.now
        self.capacity: int = state.capacity
        self.free: int = state.free
        self.procs_per_unit: int = state.procs_per_unit

    @cached_property
    def waiting(self) -> Waiting:
        s = self._state
        return Waiting(s.waiting_ints(), s.waiting_usage(), s.n_waiting)

    @cached_property
    def running(self) -> Running:
        s = self._state
        return Running(s.running_ints(), s.n_running)

    @cached_property
    def reservations(self) -> list[tuple[int, int, int]]:
        return self._state.reservations()

    def shadow(self, row: int, started: Sequence[int] = ()) -> Shadow | None:
        """EASY's reservation for waiting row ``row``: the earliest time it fits (walking the
        running jobs, and the rows ``started`` in this call, in order of expected end) and the
        units left over then (``extra``). ``None`` when it can never fit. With advance
        reservations the time comes from the plan and ``extra`` is 0 (docs/policies.md)."""
        s = self._state.shadow(int(row), [int(r) for r in started])
        return None if s is None else Shadow(*s)

    def earliest_start(self, units: int, duration: int, started: Sequence[int] = ()) -> int | None:
        """The earliest time, from now on, at which ``units`` fit for ``duration`` seconds
        beside the running jobs, the reservations and the rows ``started``."""
        return self._state.earliest_start(int(units), int(duration), [int(r) for r in started])

    def plan(self, started: Sequence[int] = ()) -> Plan:
        """The availability profile of the committed future, with the rows ``started`` running
        from now: a scratch pad (reserving in it starts nothing)."""
        return Plan(self, self._state.plan([int(r) for r in started]))
