"""Shared fixtures of the Python package's tests: the repository's paths, the example policies
on the import path, and small hand-written traces."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "workloads"
POLICIES = ROOT / "policies"
sys.path.insert(0, str(POLICIES))


def swf(jobs, max_procs=4) -> str:
    """An SWF trace of ``jobs`` given as (submit, runtime, procs, requested_time[, user])."""
    lines = [f"; MaxProcs: {max_procs}"]
    for k, job in enumerate(jobs, start=1):
        submit, runtime, procs, requested = job[:4]
        user = job[4] if len(job) > 4 else 1
        fields = [
            k,
            submit,
            -1,
            runtime,
            procs,
            -1,
            -1,
            procs,
            requested,
            -1,
            1,
            user,
            1,
            -1,
            1,
            -1,
            -1,
            -1,
        ]
        lines.append(" ".join(str(f) for f in fields))
    return "\n".join(lines) + "\n"


@pytest.fixture
def write_trace(tmp_path):
    def write(jobs, max_procs=4, name="trace.swf"):
        path = tmp_path / name
        path.write_text(swf(jobs, max_procs))
        return path

    return write
