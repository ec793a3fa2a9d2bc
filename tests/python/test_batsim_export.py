"""`schedlab export --format batsim` read by the real evalys (PyPI): Batsim's users load
schedlab's schedules with `JobSet.from_csv` and get the same jobs, times and utilisation as
jobs.parquet holds (docs/sources.md, "Batsim's jobs.csv")."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from evalys.jobset import JobSet

import schedlab

from conftest import ROOT, WORKLOADS

BATSIM = ROOT / "tests" / "fixtures" / "batsim" / "workload.json"
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def cli(*args, cwd):
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return out


CASES = {
    # A Batsim workload in, Batsim's jobs.csv out: a pool of nb_res = 8.
    "batsim-fcfs-pool": ([BATSIM, "-s", "fcfs"], 8),
    # An SWF trace on 25 exclusive nodes of 4: resources are nodes.
    "kth-easy-nodes": ([KTH, "-s", "easy", "--procs", "100", "--node-size", "4"], 25),
}


@pytest.mark.parametrize("case", CASES)
def test_evalys_reads_the_export_as_the_simulated_schedule(tmp_path, case):
    args, capacity = CASES[case]
    cli("simulate", *args, "--jobs-out", "jobs.parquet", cwd=tmp_path)
    cli("export", "jobs.parquet", "--format", "batsim", "-o", "jobs.csv", cwd=tmp_path)
    jobs = pq.read_table(tmp_path / "jobs.parquet").to_pandas()
    js = JobSet.from_csv(str(tmp_path / "jobs.csv"))
    df = js.df

    assert len(df) == len(jobs)
    assert list(df["jobID"]) == [str(i) for i in jobs["job_id"]]
    for ours, theirs in [
        ("submit", "submission_time"),
        ("start", "starting_time"),
        ("end", "finish_time"),
        ("run", "execution_time"),
        ("wait", "waiting_time"),
        ("response", "turnaround_time"),
        ("requested_time", "requested_time"),
        ("units", "requested_number_of_resources"),
        # What evalys counts from the interval sets: each job holds its units.
        ("units", "proc_alloc"),
    ]:
        assert list(df[theirs]) == list(jobs[ours]), (ours, theirs)
    assert list(df["success"]) == [0 if k else 1 for k in jobs["killed"]]

    # Resources within the machine, never two jobs on one at once: evalys's load never
    # exceeds it, and its utilisation is the schedule's work.
    assert 0 <= js.res_bounds.inf and js.res_bounds.sup < capacity
    load = js.utilisation
    assert load["load"].max() <= capacity
    work = float((jobs["run"] * jobs["units"]).sum())
    assert load["area"].sum() == pytest.approx(work)
    span = jobs["end"].max() - jobs["start"].min()
    assert js.mean_utilisation() == pytest.approx(work / span)


def test_the_documented_evalys_snippet_runs(tmp_path, monkeypatch):
    cli("simulate", BATSIM, "-s", "easy", "--jobs-out", "jobs.parquet", cwd=tmp_path)
    cli("export", "jobs.parquet", "--format", "batsim", "-o", "jobs.csv", cwd=tmp_path)
    doc = (ROOT / "docs" / "sources.md").read_text()
    section = doc[doc.index("## Batsim's `jobs.csv`") :]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/sources.md", "exec"), {})


def test_the_package_reads_json_paths_as_batsim_workloads():
    table = schedlab.read_trace(BATSIM)
    assert table.column("id").to_pylist() == [1, 2, 4, 3, 6]
    assert table.column("runtime").to_pylist() == [60, 31, 60, 60, 60]
    assert table.schema.metadata[b"schedlab.max_procs"] == b"8"
