"""The one call the engine makes into Python per scheduling point (private)."""

from __future__ import annotations

import numpy as np

from .view import View


def decide(policy, state) -> list[int]:
    """Calls ``policy.decide`` on the state's view; returns the rows as a list of ints."""
    rows = policy.decide(View(state))
    # The usual answer, a list of non-negative ints, is checked in one pass.
    if type(rows) is list and all(type(r) is int and r >= 0 for r in rows):
        return rows
    if rows is None:
        return []
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
    return out


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
