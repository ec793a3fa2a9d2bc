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
        check_eet(exe, trace, pathlib.Path(tmp))
    print("parquet outputs match docs/outputs.md")


def check_eet(exe, trace, tmp):
    """`trace eet` on the bundled trace: the four files, and their definitions recomputed."""
    out = {name: tmp / f"eet_{name}.parquet" for name in ["jobs", "users", "heatmap", "usage"]}
    subprocess.run([exe, "trace", "eet", trace, "--memory", "100GiB", "--bin", "3600",
                    "--jobs-out", out["jobs"], "--users-out", out["users"],
                    "--heatmap-out", out["heatmap"], "--usage-out", out["usage"]],
                   check=True, stdout=subprocess.DEVNULL)
    jobs = check(out["jobs"], "eet_jobs.parquet (`schedlab trace eet --jobs-out`)").to_pydict()
    users = check(out["users"], "eet_users.parquet (`schedlab trace eet --users-out`)").to_pydict()
    heat = check(out["heatmap"], "eet_heatmap.parquet (`schedlab trace eet --heatmap-out`)").to_pydict()
    usage = check(out["usage"], "eet_usage.parquet (`schedlab trace eet --usage-out`)").to_pydict()
    for name, path in out.items():
        meta = pq.read_metadata(path).metadata
        for key in [b"schedlab.version", b"schedlab.trace", b"schedlab.eet.capacity", b"schedlab.eet.bin_seconds"]:
            if key not in meta:
                sys.exit(f"{path.name}: metadata lacks {key.decode()}")
    bin_seconds = int(pq.read_metadata(out["heatmap"]).metadata[b"schedlab.eet.bin_seconds"])
    if bin_seconds != 3600:
        sys.exit(f"eet bin width {bin_seconds}, asked for 3600")
    per_user = {}
    for i in range(len(jobs["job_id"])):
        eet, submit, runtime, end = jobs["eet"][i], jobs["submit"][i], jobs["runtime"][i], jobs["end"][i]
        if eet < submit + runtime or eet != max(jobs["eet_cpu"][i], jobs["eet_memory"][i], submit + runtime):
            sys.exit(f"eet_jobs row {i}: EET {eet} is not the latest over resources")
        if end is None:
            continue
        if jobs["violated"][i] != (end > eet) or jobs["tardiness"][i] != max(0, end - eet):
            sys.exit(f"eet_jobs row {i}: violated/tardiness disagree with end and EET")
        if jobs["latest_start"][i] != eet - runtime:
            sys.exit(f"eet_jobs row {i}: latest_start != eet - runtime")
        u = per_user.setdefault(jobs["user"][i], [0, 0, 0, 0])
        u[0] += 1
        u[1] += jobs["violated"][i]
        u[2] += jobs["tardiness"][i]
        u[3] += jobs["cpus"][i] * jobs["tardiness"][i]
    for i, user in enumerate(users["user"]):
        judged, violated, tardiness, weighted = per_user.get(user, [0, 0, 0, 0])
        if (users["judged"][i], users["violated"][i], users["tardiness"][i], users["weighted_tardiness"][i]) \
                != (judged, violated, tardiness, weighted):
            sys.exit(f"eet_users: user {user} disagrees with its jobs")
        if judged and abs(users["veet"][i] - 100.0 * violated / judged) > 1e-9:
            sys.exit(f"eet_users: user {user}: VEET_u is not Formula 1")
    # The heatmap's cells add up to each user's total tardiness (Σ cells × width = Σ T_j).
    plotted = {}
    for user, mean in zip(heat["user"], heat["violated_mean"]):
        plotted[user] = plotted.get(user, 0.0) + mean * bin_seconds
    for user, (_, _, tardiness, _) in per_user.items():
        if abs(plotted.get(user, 0.0) - tardiness) > 1e-6 * max(1, tardiness):
            sys.exit(f"eet_heatmap: user {user} plots {plotted.get(user)} s of {tardiness} s tardiness")
    if sum(heat["violated_max"]) == 0 or len(usage["time"]) == 0:
        sys.exit("eet: no violation plotted or no usage bins")
    cpus = int(pq.read_metadata(out["usage"]).metadata[b"schedlab.eet.cpus"])
    if any(t % bin_seconds for t in usage["time"]) or any(
            f < 0 or abs(f - c / cpus) > 1e-12 for f, c in zip(usage["cpu_fraction"], usage["cpu"])):
        sys.exit("eet_usage: bins not aligned or cpu_fraction != cpu / the system's CPUs")
    # Busy CPU-seconds in the bins = Σ cpus × runtime over the jobs with a start.
    busy = sum(c * bin_seconds for c in usage["cpu"])
    work = sum(c * r for c, r, e in zip(jobs["cpus"], jobs["runtime"], jobs["end"]) if e is not None)
    if abs(busy - work) > 1e-6 * work:
        sys.exit(f"eet_usage: {busy} busy CPU-seconds, the jobs ran {work}")


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
