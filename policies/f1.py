"""F1 (Carastan-Santos & de Camargo, "Obtaining dynamic scheduling policies with simulation and
machine learning", SC'17), as RLScheduler computes it: the waiting job with the lowest
log10(requested time) × processors + 870 × log10(submit time) first, with EASY backfilling."""

from __future__ import annotations

import numpy as np

from schedlab import Policy

from backfill import by_score, easy


def f1_score(requested_time, procs, submit) -> np.ndarray:
    r = np.where(requested_time > 0, requested_time, 0.1)
    s = np.where(submit > 0, submit, 0.1)
    return np.log10(r) * procs + 870.0 * np.log10(s)


class F1(Policy):
    def decide(self, view):
        w = view.waiting
        return easy(view, by_score(view, f1_score(w.requested_time, w.procs, w.submit)))
