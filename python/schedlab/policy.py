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


class Policy:
    """Base class of a scheduling policy (subclassing is optional: any object with a
    ``decide`` method will do).

    ``decide(view)`` is called at every scheduling point where a waiting job fits in the free
    units (docs/policies.md, "When it calls"); it returns the rows of ``view.waiting`` to start
    now (a list, a tuple or an integer numpy array; empty to start nothing). The engine checks
    every row: a row that is not waiting, a repeat, a job that does not fit, or one that would
    hold reserved capacity stops the run with a :class:`schedlab.SimulationError` naming the
    job and the reason.
    """

    def decide(self, view: View) -> Sequence[int]:
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
