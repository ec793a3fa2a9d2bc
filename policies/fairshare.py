"""A fairshare-aware order with EASY backfilling: the job of the user who has used the fewest
core-seconds so far (``view.waiting.user_usage``: completed jobs in full, running ones up to
now) first; ties in submission order. ``weight`` scales a user's usage by how long the job has
waited: the score is usage − weight × wait × processors, so a long wait lifts a heavy user's
job back up (0, the default, is pure usage order)."""

from __future__ import annotations

from schedlab import Policy

from backfill import by_score, easy


class Fairshare(Policy):
    def __init__(self, weight: float = 0.0):
        self.weight = float(weight)

    def decide(self, view):
        w = view.waiting
        score = w.user_usage - self.weight * w.wait * w.procs
        return easy(view, by_score(view, score))
