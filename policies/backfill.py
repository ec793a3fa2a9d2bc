"""EASY backfilling over any order of the waiting jobs: the shared half of the example policies.

EASY as the exercise defines it (docs/semantics.md): start jobs in order while they fit; the
first that does not fit gets a reservation at its *shadow time* (``view.shadow``: when enough
units are free, walking the running jobs by expected end) with the *extra* units left over then;
later jobs start if they fit now and either end by the shadow time or use no more than the extra
units. Over the submission order this is the native ``easy`` scheduler, decision for decision.

Written in plain Python over lists: most calls see a handful of waiting jobs, where a numpy
operation costs more (about a microsecond each) than the loop it replaces. Scores for an order
are one numpy expression over the whole queue (``by_score``), which pays off at any length.
"""

from __future__ import annotations

import numpy as np


def easy(view, order=None) -> list[int]:
    """The rows to start now under EASY backfilling, walking the waiting rows in ``order`` (a
    list or a 1-d array of rows; submission order when ``None``)."""
    w = view.waiting
    units = w.units.tolist()
    free = view.free
    if order is None:
        order = range(len(units))
    elif isinstance(order, np.ndarray):
        order = order.tolist()
    rows = iter(order)
    starts: list[int] = []
    # In order while they fit; the first that does not is the head, which gets the reservation.
    for head in rows:
        if units[head] > free:
            break
        starts.append(head)
        free -= units[head]
    else:
        return starts  # every waiting job started
    if free == 0:
        return starts
    shadow = view.shadow(head, starts)
    if shadow is None:
        return starts
    # Backfill the rows after the head: those that fit now and either end by the shadow time or
    # take no more than the extra units.
    latest_end = shadow.time - view.now
    extra = shadow.extra
    requested = w.requested_time.tolist()
    for row in rows:
        u = units[row]
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


def by_score(view, score: np.ndarray) -> list[int]:
    """The waiting rows by ``score`` ascending, ties in submission order (the rows' order: a
    stable sort keeps it)."""
    return np.argsort(score, kind="stable").tolist()
