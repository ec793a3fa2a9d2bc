"""EASY backfilling over submission order. Reproduces the native ``easy`` job for job
(tests/python/test_equivalence.py)."""

from __future__ import annotations

from schedlab import Policy

from backfill import easy


class EASY(Policy):
    def decide(self, view):
        return easy(view)
