"""EASY backfilling over any order of the waiting jobs: the shared half of the example policies.

EASY as the exercise defines it (docs/semantics.md): start jobs in order while they fit; the
first that does not fit gets a reservation at its *shadow time* (``view.shadow``: when enough
units are free, walking the running jobs by expected end) with the *extra* units left over then;
later jobs start if they fit now and either end by the shadow time or use no more than the extra
units. Over the submission order this is the native ``easy`` scheduler, decision for decision.
"""

from __future__ import annotations

import numpy as np


def easy(view, order=None) -> list[int]:
    """The rows to start now under EASY backfilling, walking the waiting rows in ``order``
    (submission order when ``None``)."""
    w = view.waiting
    n = len(w)
    if order is None:
        order = np.arange(n)
    units = w.units
    free = view.free
    starts: list[int] = []
    k = 0
    while k < n and units[order[k]] <= free:
        row = int(order[k])
        starts.append(row)
        free -= int(units[row])
        k += 1
    if k == n or free == 0:
        return starts
    shadow = view.shadow(int(order[k]), starts)
    if shadow is None:
        return starts
    extra = shadow.extra
    rest = order[k + 1 :]
    # Only jobs that fit in the units free now can start: look at those alone.
    candidates = rest[units[rest] <= free]
    latest_end = shadow.time - view.now
    requested = w.requested_time
    for row in candidates.tolist():
        u = int(units[row])
        if u > free:
            continue
        if requested[row] <= latest_end:
            free -= u
        elif u <= extra:
            free -= u
            extra -= u
        else:
            continue
        starts.append(row)
        if free == 0:
            break
    return starts


def by_score(view, score: np.ndarray) -> np.ndarray:
    """The waiting rows by ``score`` ascending, ties in submission order."""
    return np.lexsort((view.waiting.index, score))
