"""WFP3 (Tang et al., "Fault-aware, utility-based job scheduling on Blue Gene/P systems",
2009), the baseline of the RL scheduling literature (RLScheduler, Zhang et al. 2020): the
waiting job with the highest (wait / requested time)³ × processors first, with EASY
backfilling. ``power`` is the exponent (3 is WFP3)."""

from __future__ import annotations

import numpy as np

from schedlab import Policy

from backfill import by_score, easy


class WFP3(Policy):
    def __init__(self, power: float = 3.0):
        self.power = float(power)

    def decide(self, view):
        w = view.waiting
        score = (w.wait / w.requested_time) ** self.power * w.procs
        return easy(view, by_score(view, -np.asarray(score, dtype=np.float64)))
