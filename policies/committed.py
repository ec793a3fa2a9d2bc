"""The decision rule of schedlab.gym (and of RLScheduler) as a policy: pick the best of the
first ``k`` waiting jobs by ``score`` (lowest first, ties in submission order); start it if it
fits, else commit to it — nothing is picked again until it starts — and backfill around it
(``none``, ``easy``, or ``conservative``), walking the other waiting jobs in submission order.

Run through the policy interface, it is what a heuristic action function gives in the
environment with ``none`` and ``easy``, job for job (tests/python/test_gym.py). With the FCFS
score it is the native ``fcfs`` (``none``) and ``easy`` schedulers. Its ``conservative``
replans every waiting job from scratch at each call; the environment keeps its reservations
between calls as the native rule does (a policy is not called where nothing can start, so it
cannot), and the two differ (docs/rl.md, "Heuristics as actions")."""

from __future__ import annotations

import numpy as np

from schedlab import Policy


class Committed(Policy):
    def __init__(self, score, backfill: str = "easy", k: int = 128):
        self.score = score
        self.backfill = backfill
        self.k = int(k)
        self.committed = None  # workload index of the job picked that does not fit yet

    def decide(self, view):
        w = view.waiting
        remaining = list(range(len(w)))
        starts: list[int] = []
        free = view.free
        scores = None
        while True:
            if self.committed is not None:
                rows = [r for r in remaining if w.index[r] == self.committed]
                if not rows:
                    self.committed = None
                    continue
                row = rows[0]
                if w.units[row] <= free:
                    starts.append(row)
                    remaining.remove(row)
                    free -= int(w.units[row])
                    self.committed = None
                    continue
                others = [r for r in remaining if r != row]
                if self.backfill == "easy":
                    starts += self._easy(view, row, others, starts, free)
                elif self.backfill == "conservative":
                    starts += self._conservative(view, row, others, starts)
                break
            if not remaining or free <= 0:
                break
            if scores is None:
                scores = np.asarray(self.score(view), dtype=np.float64)
            slots = remaining[: self.k]
            row = slots[int(np.argmin(scores[slots]))]
            if w.units[row] <= free:
                starts.append(row)
                remaining.remove(row)
                free -= int(w.units[row])
            else:
                self.committed = int(w.index[row])
        return starts

    @staticmethod
    def _easy(view, row, others, starts, free):
        shadow = view.shadow(row, starts)
        if shadow is None:
            return []
        w = view.waiting
        extra = shadow.extra
        chosen = []
        for r in others:
            if free == 0:
                break
            u = int(w.units[r])
            if u > free:
                continue
            if view.now + int(w.requested_time[r]) <= shadow.time:
                free -= u
            elif u <= extra:
                free -= u
                extra -= u
            else:
                continue
            chosen.append(r)
        return chosen

    @staticmethod
    def _conservative(view, row, others, starts):
        plan = view.plan(starts)
        w = view.waiting
        at = plan.earliest_start(int(w.units[row]), int(w.requested_time[row]))
        if at is not None:
            plan.reserve(row, at)
        chosen = []
        for r in others:
            at = plan.earliest_start(int(w.units[r]), int(w.requested_time[r]))
            if at is None:
                continue
            plan.reserve(r, at)
            if at == view.now:
                chosen.append(r)
        return chosen
