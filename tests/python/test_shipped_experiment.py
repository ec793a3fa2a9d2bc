"""experiments/python-policies.yaml, as `make all` runs it: what its description (and so its
report) says the comparison shows holds on the results."""

from __future__ import annotations

import re

import pyarrow.parquet as pq

import schedlab

from conftest import ROOT

MANIFEST = ROOT / "experiments" / "python-policies.yaml"


def test_the_python_policies_experiment_shows_what_it_says(tmp_path):
    schedlab.run(MANIFEST, results=tmp_path)
    rows = {
        r["cell"]: r
        for r in pq.read_table(tmp_path / "python-policies" / "summary.parquet").to_pylist()
    }
    jobs = pq.read_table(tmp_path / "python-policies" / "jobs.parquet")
    start = {}
    for cell, s in zip(jobs.column("cell").to_pylist(), jobs.column("start").to_pylist()):
        start.setdefault(cell, []).append(s)
    assert start["py-easy"] == start["easy"]
    wait = {c: r["wait_mean"] for c, r in rows.items()}
    bsld = {c: r["bounded_slowdown_mean"] for c, r in rows.items()}
    for reordering in ("py-sjf", "py-wfp3", "py-unicep", "py-fairshare"):
        assert bsld[reordering] < bsld["easy"] and bsld[reordering] < bsld["conservative"]
        assert wait[reordering] < wait["easy"]
    assert 40 < wait["py-fcfs"] / wait["easy"] < 60
    # The numbers the description quotes, rounded as written: waits in hours, as the report
    # gives them (three significant digits).
    text = " ".join(MANIFEST.read_text().split())
    quoted = {
        "easy": ("wait", "mean wait 1.90 h"),
        "py-sjf": ("bsld", "SJF 42,"),
        "py-wfp3": ("bsld", "WFP3 54,"),
        "py-unicep": ("bsld", "UNICEP 50,"),
        "py-fairshare": ("bsld", "fairshare order 40,"),
        "conservative": ("bsld", "conservative's 91"),
    }
    for cell, (metric, phrase) in quoted.items():
        assert phrase in text, phrase
        if metric == "wait":
            assert f"wait {hours(wait[cell])}" in phrase, (cell, wait[cell], phrase)
        else:
            assert round(bsld[cell]) == int(phrase.split()[-1].rstrip(",")), (cell, phrase)
    assert f"EASY's {round(bsld['easy'])}" in text
    for cell, label in [
        ("py-sjf", "SJF"),
        ("py-wfp3", "WFP3"),
        ("py-unicep", "UNICEP"),
        ("py-fairshare", "fairshare order"),
    ]:
        assert f"{label} {hours(wait[cell])}" in text, (label, wait[cell])
    assert f"({hours(wait['py-fcfs'])}," in text
    # No duration in bare seconds: a reader thinks in hours (issue 35).
    assert not re.search(r"\d s\b", text), text


def hours(seconds: float) -> str:
    """Seconds as hours with three significant digits, as reports write them ("1.90 h")."""
    h = seconds / 3600
    return f"{h:.2f} h" if h < 10 else f"{h:.1f} h" if h < 100 else f"{h:,.0f} h"
