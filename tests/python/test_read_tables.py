"""``schedlab.read_trace`` reads job tables and Slurm accounting through a mapping
(docs/sources.md): the same jobs as the CLI's reader, and errors that name the mapping."""

from __future__ import annotations

import pytest

import schedlab

from conftest import ROOT

SACCT = ROOT / "workloads" / "samples" / "slurm" / "sacct.txt"
HELIOS = ROOT / "workloads" / "samples" / "helios" / "cluster_log.csv"


def test_a_sacct_dump_through_the_slurm_mapping():
    jobs = schedlab.read_trace(SACCT, mapping="slurm")
    # Worked out by hand from the sample's rows (workloads/samples/slurm/README.md).
    assert jobs.column("id").to_pylist() == [100, 101, 102, 103, 104, 106, 107, 108, 112]
    assert jobs.column("procs").to_pylist() == [4, 16, 2, 8, 1, 1, 2, 4, 1]
    assert jobs.column("runtime").to_pylist()[:2] == [3600, 86430]
    assert jobs.column("submit").to_pylist()[-1] == 1080
    meta = jobs.schema.metadata
    assert (meta[b"schedlab.records"], meta[b"schedlab.skipped"]) == (b"19", b"10")


def test_a_job_table_through_a_shipped_mapping():
    jobs = schedlab.read_trace(HELIOS, mapping="helios")
    # 24 rows, one of 0 s and one never started (workloads/samples/helios/README.md).
    assert jobs.num_rows == 22


def test_an_unknown_mapping_and_a_table_without_one_are_input_errors():
    with pytest.raises(schedlab.InputError, match="no shipped mapping named `nope`"):
        schedlab.read_trace(SACCT, mapping="nope")
    with pytest.raises(schedlab.InputError, match="read through a column mapping"):
        schedlab.read_trace(HELIOS)
