"""Writing a policy: a class with one method, ``decide(view)`` (docs/policies.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .view import View


class Shadow(NamedTuple):
    """EASY's reservation for a job: when it is expected to start, and the units left then."""

    time: int
    extra: int


class NodeShape(NamedTuple):
    """A job's shape on a node class (``view.shape(row, node)``): ``nodes`` nodes, each taking
    ``cores``, ``memory_kb``, ``gpus``, except the last, which takes ``last_cores``,
    ``last_memory_kb``, ``last_gpus``; ``whole``: it takes whole nodes."""

    nodes: int
    cores: int
    memory_kb: int
    gpus: int
    last_cores: int
    last_memory_kb: int
    last_gpus: int
    whole: bool


class Placer:
    """One call's starts on the nodes of a topology (``View.placer()``), chosen by the built-in
    node-level rules' own code. Changing it starts nothing; rows returned without nodes start on
    the nodes it gave them."""

    def __init__(self, native):
        self._p = native

    def fits(self, row: int) -> bool:
        """Whether waiting row ``row`` fits now, after the starts so far, on nodes it may use."""
        return self._p.fits(int(row))

    def place(self, row: int) -> list[int] | None:
        """Starts ``row`` where the machine's placement puts it now; its nodes, or ``None``."""
        return self._p.place(int(row))

    def take(self, row: int, nodes: Sequence[int]) -> None:
        """Starts ``row`` on ``nodes`` (full nodes first, a last partial one last); ValueError
        naming the node and the reason if it cannot."""
        self._p.take(int(row), [int(n) for n in nodes])

    def shadow(self, row: int) -> int | None:
        """EASY's shadow time for ``row`` on nodes: when it would first fit, with running jobs
        and the starts so far releasing their nodes at their expected ends."""
        return self._p.shadow(int(row))

    def backfill(self, row: int) -> list[int] | None:
        """EASY's backfilling against the last ``shadow``: starts ``row`` now if it fits and
        ends by the shadow time or leaves the blocked job able to start then (its nodes chosen
        to spare that job); its nodes, or ``None``."""
        return self._p.backfill(int(row))

    def nodes_of(self, row: int) -> list[int] | None:
        """The nodes this pad started ``row`` on, if it did."""
        return self._p.nodes_of(int(row))

    def starts(self) -> list[tuple[int, list[int]]]:
        """What this pad started, in order, as ``(row, nodes)`` decisions."""
        return self._p.starts()


class Policy:
    """Base class of a scheduling policy (subclassing is optional: any object with a
    ``decide`` method will do).

    ``decide(view)`` is called at every scheduling point where a waiting job fits in the free
    units (docs/policies.md, "When it calls"); it returns the rows of ``view.waiting`` to start
    now (a list, a tuple or an integer numpy array; empty to start nothing). The engine checks
    every row: a row that is not waiting, a repeat, a job that does not fit, or one that would
    hold reserved capacity stops the run with a :class:`schedlab.SimulationError` naming the
    job and the reason.

    On a topology an item may also be ``(row, nodes)``: start the row on those nodes (indices
    into ``view.nodes``), checked node by node (docs/policies.md, "On a topology").
    """

    def decide(self, view: View) -> Sequence[int] | Sequence[int | tuple[int, Sequence[int]]]:
        raise NotImplementedError("a policy implements decide(view)")


class Plan:
    """The availability profile of the committed future (``View.plan()``): capacity free now,
    released by running jobs at their expected ends, held by reservations and by what you
    reserve in it. Rows are rows of ``view.waiting``."""

    def __init__(self, view: View, native):
        self._view = view
        self._plan = native

    def earliest_start(self, units: int, duration: int) -> int | None:
        """The earliest time ≥ now at which ``units`` fit for ``duration`` seconds."""
        return self._plan.earliest_start(int(units), int(duration))

    def fits_now(self, row: int) -> bool:
        """Whether waiting row ``row`` fits from now until its requested time is up."""
        w = self._view.waiting
        return self._plan.fits_now(int(w.units[row]), int(w.requested_time[row]))

    def start(self, row: int) -> None:
        """Holds waiting row ``row`` from now for its requested time."""
        self.reserve(row, self._view.now)

    def reserve(self, row: int, at: int) -> None:
        """Holds waiting row ``row`` from ``at`` for its requested time."""
        w = self._view.waiting
        self._plan.reserve(int(at), int(w.units[row]), int(w.requested_time[row]))

    def free_at(self, t: int) -> int:
        """Units free at time ``t`` in the plan."""
        return self._plan.free_at(int(t))
