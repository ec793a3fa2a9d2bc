#!/usr/bin/env python3
"""Independent check of schedlab's Parquet outputs with pyarrow.

Usage: check_parquet.py PATH/TO/schedlab

Runs the binary on a bundled trace, opens every file it writes with pyarrow, and checks the
columns and types against the tables in docs/outputs.md (so the documentation is the contract).
Exits non-zero with a message on the first mismatch.
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parent.parent
TYPES = {"int64": "int64", "int32": "int32", "double": "double", "bool": "bool", "string": "string"}


def documented(section, full=False):
    """(column, type) rows of the table under '## section' in docs/outputs.md; with full=True,
    (column, type, unit, definition)."""
    text = (ROOT / "docs" / "outputs.md").read_text()
    match = None
    for level in ["###", "##"]:
        match = re.search(rf"^{level} {re.escape(section)}\n(.*?)(?=^##|\Z)", text, re.S | re.M)
        if match and "|---|" in match.group(1):
            break
    if not match:
        sys.exit(f"docs/outputs.md has no section '{section}'")
    rows = []
    for line in match.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[1] in TYPES:
            if full:
                rows.append((cells[0], TYPES[cells[1]], cells[2], "|".join(cells[3:])))
            else:
                rows.append((cells[0], TYPES[cells[1]]))
    if not rows:
        sys.exit(f"no columns documented under '## {section}'")
    return rows


def plain(markdown):
    """Markdown link syntax to its text, as schedlab writes descriptions."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown).strip()


def check(path, section, extra_leading=()):
    table = pq.read_table(path)
    got = [(f.name, str(f.type)) for f in table.schema]
    want = list(extra_leading) + documented(section)
    if got != want:
        sys.exit(f"{path}: columns differ from docs/outputs.md '{section}':\n got  {got}\n want {want}")
    if table.num_rows == 0:
        sys.exit(f"{path}: no rows")
    # Every documented column carries its unit and definition as field metadata.
    docs = {name: (unit, definition) for name, _, unit, definition in documented(section, full=True)}
    docs.update({name: (unit, definition)
                 for name, _, unit, definition in documented("Experiment result sets: `results/<experiment>/`", full=True)
                 if name not in docs})
    for field in table.schema:
        unit, definition = docs[field.name]
        meta = field.metadata or {}
        if not definition:  # "as above": the first size class's text
            continue
        if meta.get(b"description", b"").decode() != plain(definition):
            sys.exit(f"{path}: column {field.name}: description {meta.get(b'description')!r}, docs say {definition!r}")
        want_unit = None if unit in ("–", "-", "") else plain(unit)
        got_unit = meta.get(b"unit")
        if (got_unit.decode() if got_unit else None) != want_unit:
            sys.exit(f"{path}: column {field.name}: unit {got_unit!r}, docs say {unit!r}")
    print(f"ok  {path.name}: {table.num_rows} rows, {len(got)} documented columns with units and descriptions")
    return table


def main():
    exe = pathlib.Path(sys.argv[1]).resolve()
    trace = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "jobs.parquet"
        subprocess.run([exe, "simulate", trace, "--scheduler", "easy", "--jobs-out", out, "--format", "json"],
                       check=True, stdout=subprocess.DEVNULL)
        table = check(out, "jobs.parquet")
        meta = pq.read_metadata(out).metadata
        for key in [b"schedlab.version", b"schedlab.scheduler", b"schedlab.tau", b"schedlab.overrun"]:
            if key not in meta:
                sys.exit(f"{out}: metadata lacks {key.decode()}")
        cols = table.to_pydict()
        if any(s < sub for s, sub in zip(cols["start"], cols["submit"])):
            sys.exit("a job starts before it is submitted")
        if any(w != s - sub for w, s, sub in zip(cols["wait"], cols["start"], cols["submit"])):
            sys.exit("wait != start - submit")
        check_experiment(exe, trace, pathlib.Path(tmp))
        stats = pathlib.Path(tmp) / "stats.parquet"
        subprocess.run([exe, "trace", "stats", trace, "--by", "user", "--top", "20", "-o", stats],
                       check=True, stdout=subprocess.DEVNULL)
        table = check(stats, "stats.parquet (`schedlab trace stats -o`)").to_pydict()
        if len(table["group"]) != 20 or table["jobs"] != sorted(table["jobs"], reverse=True):
            sys.exit("stats.parquet: expected the 20 busiest users, most jobs first")
        for row in range(20):
            if sum(table[f"hour_{h:02}"][row] for h in range(24)) != table["jobs"][row]:
                sys.exit("stats.parquet: the daily histogram does not add up to the jobs")
    print("parquet outputs match docs/outputs.md")


def check_experiment(exe, trace, tmp):
    """Runs a small manifest and checks the three result files of the experiment."""
    manifest = tmp / "small.yaml"
    manifest.write_text(f"""name: small
workloads:
  kth: {{trace: {trace}, first_jobs: 2000}}
schedulers:
  fcfs: {{policy: fcfs}}
  easy: {{policy: easy, interval: 600}}
reservations:
  some:
    generate: {{per_week: 20, procs: {{uniform: [10, 60]}}, hours: {{uniform: [2, 8]}}, notice_hours: {{fixed: 12}}}}
    on_conflict: shift
    throttle: {{max_proc_hours: 2000}}
grid:
  axes:
    reservations: [none, some]
""")
    results = tmp / "results"
    subprocess.run([exe, "run", "--quiet", "--results", results, manifest], check=True)
    out = results / "small"
    summary = check(out / "summary.parquet", "summary.parquet")
    check(out / "jobs.parquet", "jobs.parquet", extra_leading=[("experiment", "string"), ("cell", "string")])
    check(out / "timeseries.parquet", "timeseries.parquet")
    reservations = check(out / "reservations.parquet", "reservations.parquet").to_pydict()
    cells = summary.column("cell").to_pylist()
    # Implicit axes list names in sorted order; the grid lists the reservation scenarios.
    if cells != ["easy.none", "easy.some", "fcfs.none", "fcfs.some"]:
        sys.exit(f"summary cells {cells}")
    if set(reservations["cell"]) != {"easy.some", "fcfs.some"}:
        sys.exit(f"reservations.parquet cells {set(reservations['cell'])}")
    for outcome, reason, start, requested, shift in zip(reservations["outcome"], reservations["reason"],
                                                       reservations["start"], reservations["requested_start"],
                                                       reservations["shift"]):
        if (outcome == "rejected") != (reason is not None) or (outcome == "rejected") != (start is None):
            sys.exit(f"inconsistent reservation row: {outcome} {reason} {start}")
        if start is not None and start - requested != shift:
            sys.exit("shift != start - requested_start")
    for name in ["summary.parquet", "jobs.parquet", "timeseries.parquet", "reservations.parquet"]:
        meta = pq.read_metadata(out / name).metadata
        for key in [b"schedlab.manifest_hash", b"schedlab.version", b"schedlab.commit", b"schedlab.experiment",
                    b"schedlab.manifest", b"schedlab.traces", b"schedlab.command", b"schedlab.model_version"]:
            if key not in meta:
                sys.exit(f"{name}: metadata lacks {key.decode()}")
        if meta[b"schedlab.manifest"].decode() != manifest.read_text():
            sys.exit(f"{name}: schedlab.manifest is not the manifest's text")
        if meta[b"schedlab.experiment"] != b"small":
            sys.exit(f"{name}: schedlab.experiment is {meta[b'schedlab.experiment']!r}")
        traces = json.loads(meta[b"schedlab.traces"])
        (name_, digest), = traces.items()
        if digest["bytes"] != trace.stat().st_size or len(digest["blake3"]) != 64:
            sys.exit(f"{name}: schedlab.traces {traces} does not describe {trace}")
        if not meta[b"schedlab.command"].decode().startswith("schedlab run ") or b"small.yaml" not in meta[b"schedlab.command"]:
            sys.exit(f"{name}: schedlab.command {meta[b'schedlab.command']!r}")
    # The schedule of one cell exported as SWF: read independently, it matches the rows.
    swf = tmp / "easy-some.swf"
    subprocess.run([exe, "export", out / "jobs.parquet", "--cell", "easy.some", "-o", swf],
                   check=True, stderr=subprocess.DEVNULL)
    rows = [line.split() for line in swf.read_text().splitlines() if line and not line.startswith(";")]
    jobs = pq.read_table(out / "jobs.parquet").to_pydict()
    mine = [i for i, c in enumerate(jobs["cell"]) if c == "easy.some"]
    if len(rows) != len(mine) or any(len(r) != 18 for r in rows):
        sys.exit(f"{swf}: {len(rows)} job lines of 18 fields expected {len(mine)}")
    for r, i in zip(rows, mine):
        want = [jobs["job_id"][i], jobs["submit"][i], jobs["wait"][i], jobs["run"][i]]
        status = 0 if jobs["killed"][i] else 1
        if [int(x) for x in r[:4]] != want or int(r[10]) != status or int(r[7]) != jobs["procs"][i]:
            sys.exit(f"{swf}: line {r} does not match row {i} of jobs.parquet")
    print(f"ok  {swf.name}: {len(rows)} jobs with their simulated waits")
    # One query over every experiment's jobs: the experiment column tells them apart.
    import pyarrow.dataset as ds
    jobs = ds.dataset(sorted(str(p) for p in results.glob("*/jobs.parquet")), format="parquet").to_table()
    if set(jobs.column("experiment").to_pylist()) != {"small"}:
        sys.exit("results/*/jobs.parquet: experiment column")


if __name__ == "__main__":
    main()
