"""First come, first served: start waiting jobs in submission order while the next one fits;
never start a job past one that waits. Reproduces the native ``fcfs`` job for job."""

from __future__ import annotations

import numpy as np

from schedlab import Policy


class FCFS(Policy):
    def decide(self, view):
        # The longest prefix of the queue whose units add up to at most what is free.
        fits = np.cumsum(view.waiting.units) <= view.free
        return np.arange(int(np.argmin(fits)) if not fits.all() else len(fits))
