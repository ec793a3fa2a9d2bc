"""Python policies named in a manifest: run from Python and from the CLI (which hands the run
to the package), cached by their sources and parameters, failures kept to their cells, results
byte-identical for any thread count, and a clear error where no Python is found."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import schedlab

from conftest import POLICIES, ROOT, WORKLOADS

# Where cargo put it, as the Makefile says: target/, or $CARGO_TARGET_DIR when set.
BIN = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "schedlab"

MANIFEST = """
name: mine
workloads:
  kth: {trace: ../workloads/kth.swf.gz, first_jobs: 3000}
clusters:
  pool: {from_trace: true}
schedulers:
  easy: {policy: easy}
  py-easy: {policy: python, path: ../policies/easy.py, class: EASY}
  py-fcfs: {policy: python, path: ../policies/fcfs.py, class: FCFS}
  py-wfp3: {policy: python, path: ../policies/wfp3.py, class: WFP3, params: {power: 2}}
grid:
  axes:
    scheduler: [easy, py-easy, py-fcfs, py-wfp3]
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "workloads").mkdir()
    shutil.copy(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", tmp_path / "workloads" / "kth.swf.gz")
    shutil.copytree(POLICIES, tmp_path / "policies")
    manifest = tmp_path / "experiments" / "mine.yaml"
    manifest.write_text(MANIFEST)
    return tmp_path, manifest


def starts(results, cell):
    jobs = pq.read_table(results / "mine" / "jobs.parquet")
    mask = [c == cell for c in jobs.column("cell").to_pylist()]
    return jobs.filter(mask).column("start").to_pylist()


def plan_lines(manifest, results):
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", "plan", str(manifest), "--results", str(results)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def test_a_manifest_runs_python_policies_cached_by_their_sources(project):
    root, manifest = project
    results = root / "results"
    schedlab.run(manifest, results=results)
    native = starts(results, "easy")
    assert len(native) > 2_900
    assert starts(results, "py-easy") == native
    assert starts(results, "py-fcfs") != native  # FCFS does not backfill
    summary = pq.read_table(results / "mine" / "summary.parquet").to_pylist()
    assert {r["cell"]: r["policy"] for r in summary}["py-wfp3"] == "python"

    # Nothing to do again; editing wfp3.py re-runs exactly its cell, and plan says why.
    assert all(line.startswith("cached") for line in plan_lines(manifest, results)[:-1])
    with open(root / "policies" / "wfp3.py", "a") as f:
        f.write("\n# an edit\n")
    lines = plan_lines(manifest, results)
    to_run = [line for line in lines if line.startswith("run ")]
    assert any("mine/py-wfp3 " in line and "sources.wfp3.py" in line for line in to_run), lines
    assert not any("py-easy" in line or "py-fcfs" in line for line in to_run), lines
    # A shared module counts for every policy that imports it.
    with open(root / "policies" / "backfill.py", "a") as f:
        f.write("\n# an edit\n")
    to_run = [line for line in plan_lines(manifest, results) if line.startswith("run ")]
    assert any("mine/py-easy " in line and "sources.backfill.py" in line for line in to_run)
    assert not any("mine/py-fcfs " in line for line in to_run)
    # Parameters count too.
    manifest.write_text(MANIFEST.replace("power: 2", "power: 3"))
    to_run = [line for line in plan_lines(manifest, results) if line.startswith("run ")]
    assert any("mine/py-wfp3 " in line and "params.power" in line for line in to_run)


def test_results_are_byte_identical_for_any_thread_count(project):
    root, manifest = project
    schedlab.run(manifest, results=root / "one", jobs=1)
    schedlab.run(manifest, results=root / "two", jobs=2)
    for name in ("jobs.parquet", "summary.parquet"):
        one = (root / "one" / "mine" / name).read_bytes()
        assert one == (root / "two" / "mine" / name).read_bytes(), name


def test_a_policy_that_raises_fails_its_cell_only(project):
    root, manifest = project
    (root / "policies" / "broken.py").write_text(
        "class Broken:\n    def decide(self, view):\n        return 1 / 0\n"
    )
    manifest.write_text(
        MANIFEST.replace(
            "schedulers:\n",
            "schedulers:\n  broken: {policy: python, path: ../policies/broken.py, class: Broken}\n",
        ).replace("scheduler: [easy,", "scheduler: [broken, easy,")
    )
    with pytest.raises(schedlab.SchedlabError):
        schedlab.run(manifest, results=root / "results")
    proc = subprocess.run(
        [sys.executable, "-m", "schedlab", "run", str(manifest), "--results", str(root / "r2")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "ZeroDivisionError" in proc.stderr and "Traceback" in proc.stderr, proc.stderr
    # The other cells ran and are cached: only the broken one is left to run.
    lines = plan_lines(manifest, root / "r2")
    to_run = [line.split()[2] for line in lines if line.startswith("run ")]
    assert to_run and all(n.startswith("mine/broken") or n == "mine" for n in to_run), lines


@pytest.mark.skipif(not BIN.exists(), reason="the release binary is built by make test")
def test_the_cli_hands_python_policies_to_the_package_or_says_what_to_install(project):
    root, manifest = project
    env = dict(os.environ, SCHEDLAB_PYTHON=sys.executable)
    out = subprocess.run(
        [str(BIN), "run", "-q", str(manifest), "--results", str(root / "cli")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert starts(root / "cli", "py-easy") == starts(root / "cli", "easy")
    env["SCHEDLAB_PYTHON"] = str(root / "no-python")
    out = subprocess.run(
        [str(BIN), "run", "-q", str(manifest), "--results", str(root / "none")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 2
    assert "is a Python policy" in out.stderr and "make venv" in out.stderr, out.stderr
    assert not (root / "none" / "mine").exists()


@pytest.mark.parametrize(
    "scheduler, expected",
    [
        ("{policy: python, class: EASY}", "needs `path`"),
        ("{policy: python, path: ../policies/nope.py, class: EASY}", "policy file not found"),
        ("{policy: python, path: ../policies/easy.py, class: Nope}", "defines no class `Nope`"),
        (
            "{policy: python, path: ../policies/easy.py, class: EASY, order: sjf}",
            "decides the order",
        ),
        ("{policy: easy, class: EASY}", "belongs to a Python policy"),
        ("{policy: fastest}", "unknown policy"),
    ],
)
def test_bad_python_schedulers_are_located_errors(project, scheduler, expected):
    root, manifest = project
    manifest.write_text(
        "name: bad\nworkloads:\n  kth: {trace: ../workloads/kth.swf.gz}\n"
        "clusters:\n  pool: {from_trace: true}\n"
        f"schedulers:\n  mine: {scheduler}\n"
    )
    with pytest.raises(schedlab.InputError) as e:
        schedlab.plan(manifest, results=root / "results")
    assert expected in str(e.value)
    assert "mine.yaml" in str(e.value)
