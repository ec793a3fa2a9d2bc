"""Policies on a topology (nodes with memory, GPUs and properties; docs/policies.md, "On a
topology"), written only against the view's nodes table and its placer.

- ``NodeFCFS``: first come first served, rows only (the engine places each row as the built-in
  rules do). Reproduces ``scheduler="fcfs"`` on the same machine job for job.
- ``NodeEASY``: EASY backfilling on nodes with the placer's shadow time and backfilling, rows
  only (they start on the nodes the placer gave them). Reproduces ``scheduler="easy"``.
- ``NodeFairshare``: ``NodeEASY`` over the queue priorities (highest first, under a queue setup)
  and then the users' fairshare factors (highest first, when the run configures a fairshare;
  else the users' core-seconds so far, fewest first), ties in submission order — the native
  ``order: fairshare`` under queues, job for job (tests/python/test_topology.py).
- ``Tightest``: first come first served, each job on the nodes it fits most tightly — the
  fewest free cores left, then the fewest free GPUs, so that GPU nodes stay free for the jobs
  that need them — chosen here and returned as ``(row, nodes)``.
"""

from __future__ import annotations

import numpy as np

import schedlab


class NodeFCFS(schedlab.Policy):
    def decide(self, view):
        placer, starts = view.placer(), []
        for row in range(len(view.waiting)):
            if placer.place(row) is None:
                break
            starts.append(row)
        return starts


class NodeEASY(schedlab.Policy):
    def order(self, view) -> list[int]:
        """The waiting rows in the order EASY serves them: submission order here."""
        return list(range(len(view.waiting)))

    def decide(self, view):
        placer, starts = view.placer(), []
        rows = iter(self.order(view))
        for row in rows:
            if placer.place(row) is None:  # the head: it waits, with a shadow time
                if placer.shadow(row) is None:
                    return starts
                break
            starts.append(row)
        for row in rows:  # backfill: nothing that would delay the head
            if placer.backfill(row) is not None:
                starts.append(row)
        return starts


class NodeFairshare(NodeEASY):
    def order(self, view) -> list[int]:
        w = view.waiting
        fair = (
            -w.fairshare_factor if len(w) and not np.isnan(w.fairshare_factor[0]) else w.user_usage
        )
        # np.lexsort sorts by the last key first; a stable sort keeps submission order in ties.
        return np.lexsort((fair, -w.queue_priority)).tolist()


class Tightest(schedlab.Policy):
    def decide(self, view):
        nodes = view.nodes
        free = np.stack([nodes.free_cores, nodes.free_memory_kb, nodes.free_gpus]).copy()
        placer, starts = view.placer(), []
        for row in range(len(view.waiting)):
            chosen = self.choose(view, row, free)
            if chosen is None:
                break
            placer.take(row, chosen)  # checks the nodes, as the engine will
            shape = view.shape(row, chosen[0])
            for i, node in enumerate(chosen):
                last = i == len(chosen) - 1
                amount = (
                    (shape.last_cores, shape.last_memory_kb, shape.last_gpus)
                    if last
                    else (shape.cores, shape.memory_kb, shape.gpus)
                )
                free[:, node] -= amount
            starts.append((row, chosen))
        return starts

    @staticmethod
    def choose(view, row, free):
        """The nodes of one class, tightest first, that take the row's per-node amounts."""
        best = None
        for cls in np.unique(view.nodes.class_[view.eligible_nodes(row)]):
            members = np.flatnonzero(view.nodes.class_ == cls)
            shape = view.shape(row, members[0])
            need = np.array([[shape.cores], [shape.memory_kb], [shape.gpus]])
            ok = members[np.all(free[:, members] >= need, axis=0)]
            if shape.whole:
                ok = ok[free[0, ok] == view.nodes.cores[ok]]
            if len(ok) < shape.nodes:
                continue
            ok = ok[np.lexsort((ok, free[2, ok], free[0, ok] - shape.cores))][: shape.nodes]
            key = (int(free[0, ok].sum()), int(free[2, ok].sum()))
            if best is None or key < best[0]:
                best = (key, [int(n) for n in ok])
        return None if best is None else best[1]
