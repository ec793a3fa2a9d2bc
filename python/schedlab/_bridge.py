"""The one call the engine makes into Python per scheduling point (private)."""

from __future__ import annotations

import numpy as np

from .view import View


def decide(policy, state):
    """Calls ``policy.decide`` on the state's view; returns the rows as a list of ints or, on
    a topology, (row, nodes) pairs where the policy named nodes or placed rows with the view's
    placer (nodes None: the engine places the row)."""
    view = View(state)
    rows = policy.decide(view)
    # The usual answer, a list of non-negative ints, is checked in one pass (a loop: a
    # generator costs more than the few rows a call returns).
    if type(rows) is list:
        for r in rows:
            if type(r) is not int or r < 0:
                break
        else:
            return _on_nodes(view, rows, {}) if view._placers else rows
    if rows is None:
        return []
    if isinstance(rows, (list, tuple)) and any(isinstance(r, (tuple, list)) for r in rows):
        return _pairs(policy, view, rows)
    if isinstance(rows, np.ndarray):
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise TypeError(
                f"{type(policy).__name__}.decide() returned a numpy array of {rows.dtype} "
                f"with shape {rows.shape}; it must return row numbers (a 1-d integer array)"
            )
        rows = rows.tolist()
    try:
        out = [int(r) for r in rows]
    except TypeError:
        raise TypeError(
            f"{type(policy).__name__}.decide() returned {type(rows).__name__}; it must return "
            "the rows of view.waiting to start (a list of ints, possibly empty)"
        ) from None
    for r, given in zip(out, rows):
        if isinstance(given, (bool, np.bool_)) or r != given:
            raise TypeError(
                f"{type(policy).__name__}.decide() returned {given!r}; rows are integers"
            )
        if r < 0:
            raise ValueError(
                f"{type(policy).__name__}.decide() returned row {r}; rows are 0 to "
                f"{state.n_waiting - 1}"
            )
    return _on_nodes(view, out, {}) if view._placers else out


def _on_nodes(view, rows: list[int], named: dict[int, list[int]]):
    """Rows with their nodes: those the policy named, else those the view's placers started
    them on in this call (the last placer that did), else None (the engine places them)."""
    out = []
    for r in rows:
        nodes = named.get(r)
        if nodes is None:
            for placer in reversed(view._placers):
                nodes = placer.nodes_of(r)
                if nodes is not None:
                    break
        out.append((r, nodes))
    return out


def _pairs(policy, view, items):
    """Decisions with nodes: each item a row or a ``(row, nodes)`` pair."""
    name = type(policy).__name__
    if not view.on_topology:
        raise TypeError(
            f"{name}.decide() returned (row, nodes) pairs, but this machine has no nodes to "
            "choose (a processor pool or whole nodes of one size): return rows"
        )
    rows: list[int] = []
    named: dict[int, list[int]] = {}
    for item in items:
        if isinstance(item, (tuple, list)):
            if len(item) != 2:
                raise TypeError(
                    f"{name}.decide() returned {item!r}; a decision with nodes is (row, nodes)"
                )
            row, nodes = item
            nodes = np.asarray(nodes)
            if nodes.ndim != 1 or not (nodes.size == 0 or np.issubdtype(nodes.dtype, np.integer)):
                raise TypeError(
                    f"{name}.decide() returned nodes {item[1]!r} for row {row!r}; nodes are a list "
                    "of node indices (view.nodes rows)"
                )
            if nodes.size and nodes.min() < 0:
                raise ValueError(
                    f"{name}.decide() returned node {int(nodes.min())} for row {row!r}"
                )
            if nodes.size == 0:
                raise ValueError(f"{name}.decide() returned no nodes for row {row!r}")
            named[_row(name, row, view)] = nodes.tolist()
            rows.append(_row(name, row, view))
        else:
            rows.append(_row(name, item, view))
    return _on_nodes(view, rows, named)


def _row(name: str, r, view) -> int:
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer)):
        raise TypeError(f"{name}.decide() returned {r!r}; rows are integers")
    if r < 0:
        raise ValueError(f"{name}.decide() returned row {r}; rows are 0 to {len(view.waiting) - 1}")
    return int(r)


def load_policy(path: str, class_name: str, params_json: str):
    """The policy a manifest names: the class ``class_name`` of the file ``path`` (imported as a
    fresh module, its folder on the import path for its local modules), called with the
    manifest's ``params`` as keyword arguments."""
    import importlib.util
    import json
    import os
    import sys

    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "_schedlab_policy_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AttributeError(f"{path} defines no {class_name}")
    return cls(**json.loads(params_json))
