"""A fairshare-aware order with EASY backfilling.

When the run configures a fairshare (``fairshare:`` on the scheduler in a manifest, or
``order="fairshare"`` in ``schedlab.simulate``), the view holds each user's decayed fairshare
factor (``view.waiting.fairshare_factor``, as the native ``order: fairshare`` computes it):
the jobs of the highest factor go first, ties in submission order — the native fairshare order,
job for job (tests/python/test_policy_limits.py).

Without one (the factor is NaN), the job of the user who has used the fewest core-seconds so far
(``view.waiting.user_usage``: completed jobs in full, running ones up to now, no decay) first;
ties in submission order. ``weight`` scales a user's usage by how long the job has waited: the
score is usage − weight × wait × processors, so a long wait lifts a heavy user's job back up (0,
the default, is pure usage order)."""

from __future__ import annotations

import numpy as np

from schedlab import Policy

from backfill import by_score, easy


class Fairshare(Policy):
    def __init__(self, weight: float = 0.0):
        self.weight = float(weight)

    def decide(self, view):
        w = view.waiting
        if len(w) and not np.isnan(w.fairshare_factor[0]):
            return easy(view, by_score(view, -w.fairshare_factor))
        score = w.user_usage - self.weight * w.wait * w.procs
        return easy(view, by_score(view, score))
