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
    # The numbers the description quotes, rounded as written.
    text = " ".join(MANIFEST.read_text().split())
    quoted = {
        "easy": ("wait", "mean wait 6,837 s"),
        "py-sjf": ("bsld", "SJF 42,"),
        "py-wfp3": ("bsld", "WFP3 54,"),
        "py-unicep": ("bsld", "UNICEP 50,"),
        "py-fairshare": ("bsld", "fairshare order 40,"),
        "conservative": ("bsld", "conservative's 91"),
    }
    for cell, (metric, phrase) in quoted.items():
        assert phrase in text, phrase
        number = float(
            re.search(
                r"([\d,]+)", phrase.split()[-1] if metric == "bsld" else phrase.split("wait ")[1]
            )
            .group(1)
            .replace(",", "")
        )
        value = wait[cell] if metric == "wait" else bsld[cell]
        assert round(value) == number, (cell, value, phrase)
    assert f"EASY's {round(bsld['easy'])}" in text
    for cell, label in [
        ("py-sjf", "SJF"),
        ("py-wfp3", "WFP3"),
        ("py-unicep", "UNICEP"),
        ("py-fairshare", "fairshare order"),
    ]:
        assert f"{label} {round(wait[cell]):,} s" in text, (label, wait[cell])
    assert f"({round(wait['py-fcfs']):,} s)" in text
