"""UNICEP (Carastan-Santos & de Camargo, "Obtaining dynamic scheduling policies with simulation
and machine learning", SC'17), as the RL scheduling literature uses it as a baseline: the
waiting job with the highest wait / (log₂(processors) × requested time) first, with EASY
backfilling. One-processor jobs count as two (log₂ 1 = 0 would divide by zero)."""

from __future__ import annotations

import numpy as np

from schedlab import Policy

from backfill import by_score, easy


class UNICEP(Policy):
    def decide(self, view):
        w = view.waiting
        score = w.wait / (np.log2(np.maximum(w.procs, 2)) * w.requested_time)
        return easy(view, by_score(view, -score))
