"""Experiment manifests from Python: ``run``, ``plan`` and ``report`` are the ``schedlab``
commands of the same names, run in this process with the same plan and cache (so a manifest
that names a Python policy runs here), raising the command's error."""

from __future__ import annotations

import os
from typing import Union

from . import _schedlab

PathLike = Union[str, "os.PathLike[str]"]


def _paths(manifests) -> list[str]:
    if not manifests:
        raise TypeError("give at least one manifest")
    return [os.fspath(m) for m in manifests]


def run(
    *manifests: PathLike,
    jobs: int | None = None,
    results: PathLike = "results",
    executor: str | None = None,
    quiet: bool = True,
    name: str | None = None,
) -> None:
    """``schedlab run``: plans the manifests, runs what is not cached (``jobs`` threads; the
    ``local`` or ``slurm`` executor) and publishes ``results/<experiment>/``; ``name`` names
    the run for ``schedlab diff @<name>`` (docs/diff.md)."""
    argv = ["schedlab", "run", *_paths(manifests), "--results", os.fspath(results)]
    if name is not None:
        argv += ["--name", name]
    if jobs is not None:
        argv += ["--jobs", str(int(jobs))]
    if executor is not None:
        argv += ["--executor", executor]
    if quiet:
        argv.append("--quiet")
    _schedlab.cli(argv)


def plan(*manifests: PathLike, results: PathLike = "results") -> None:
    """``schedlab plan``: prints what would run, and why."""
    _schedlab.cli(["schedlab", "plan", *_paths(manifests), "--results", os.fspath(results)])


def report(*manifests: PathLike, results: PathLike = "results") -> None:
    """``schedlab report``: renders ``reports/<experiment>.html`` and ``.md`` from stored
    results."""
    _schedlab.cli(["schedlab", "report", *_paths(manifests), "--results", os.fspath(results)])
