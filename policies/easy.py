"""EASY backfilling over submission order. Reproduces the native ``easy`` job for job
(tests/python/test_equivalence.py)."""

from __future__ import annotations

from backfill import easy

from schedlab import Policy


class EASY(Policy):
    def decide(self, view):
        return easy(view)
