"""Shortest job first by requested time (the user's estimate), with EASY backfilling: the
shortest waiting job that does not fit gets the reservation, the others backfill shortest
first."""

from __future__ import annotations

from schedlab import Policy

from backfill import by_score, easy


class SJF(Policy):
    def decide(self, view):
        return easy(view, by_score(view, view.waiting.requested_time))
