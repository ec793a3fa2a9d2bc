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
        check_trace_provenance(out, trace)
        cols = table.to_pydict()
        if any(s < sub for s, sub in zip(cols["start"], cols["submit"])):
            sys.exit("a job starts before it is submitted")
        if any(w != s - sub for w, s, sub in zip(cols["wait"], cols["start"], cols["submit"])):
            sys.exit("wait != start - submit")
        if any(c is not None for c in cols["cluster"]):
            sys.exit("jobs.parquet: a processor pool has no named clusters")
        check_experiment(exe, trace, pathlib.Path(tmp))
        check_users(exe, trace, pathlib.Path(tmp))
        check_topology(exe, pathlib.Path(tmp))
        check_queues(exe, trace, pathlib.Path(tmp))
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
        penalties = pathlib.Path(tmp) / "penalties.parquet"
        subprocess.run([exe, "trace", "penalties", ROOT / "workloads" / "wagap-2013.swf.gz",
                        "--machines", ROOT / "workloads" / "wagap-2013.swf.machines",
                        "--memory", "bytes_per_node", "-o", penalties],
                       check=True, stdout=subprocess.DEVNULL)
        rows = check(penalties, "penalties.parquet (`schedlab trace penalties -o`)").to_pydict()
        if rows["job_id"] != sorted(rows["job_id"]):
            sys.exit("penalties.parquet: not in trace order")
        check_trace_provenance(penalties, ROOT / "workloads" / "wagap-2013.swf.gz")
        check_trace_provenance(stats, trace)
    print("parquet outputs match docs/outputs.md")


def check_trace_provenance(path, trace):
    """A file written from one trace names it, its size and digest, and the command (docs/outputs.md,
    "Trace provenance")."""
    meta = pq.read_metadata(path).metadata
    for key in [b"schedlab.version", b"schedlab.trace", b"schedlab.traces", b"schedlab.command"]:
        if key not in meta:
            sys.exit(f"{path.name}: metadata lacks {key.decode()}")
    traces = json.loads(meta[b"schedlab.traces"])
    entry = traces.get(str(trace))
    if list(traces) != [str(trace)] or entry is None or entry["bytes"] != trace.stat().st_size \
            or not re.fullmatch(r"[0-9a-f]{64}", entry["blake3"]):
        sys.exit(f"{path.name}: schedlab.traces {traces} does not describe {trace}")
    command = meta[b"schedlab.command"].decode()
    if not command.startswith("schedlab ") or str(path) in command:
        sys.exit(f"{path.name}: schedlab.command {command!r}")


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
        check_trace_provenance(path, trace)
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
    for name in ["summary.parquet", "jobs.parquet", "timeseries.parquet", "reservations.parquet",
                 "users.parquet", "user_timeseries.parquet"]:
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


def check_users(exe, trace, tmp):
    """A fairshare experiment: users.parquet and user_timeseries.parquet against the jobs and the
    documented definitions (FF = 2^-(U/ΣU)/S, Jain's index, core-hours from the jobs)."""
    manifest = tmp / "fair.yaml"
    manifest.write_text(f"""name: fair
workloads:
  kth: {{trace: {trace}, first_jobs: 3000}}
schedulers:
  fcfs-easy: {{backfill: easy}}
  fair-easy:
    backfill: easy
    order: fairshare
    fairshare: {{charging: continuous, decay: {{factor: 0.75, every: 172800}}, shares: {{users: {{1: 4}}}}}}
metrics:
  expected_capacity: {{split: shares}}
""")
    results = tmp / "results"
    subprocess.run([exe, "run", "--quiet", "--results", results, manifest], check=True)
    out = results / "fair"
    summary = check(out / "summary.parquet", "summary.parquet").to_pylist()
    users = check(out / "users.parquet", "users.parquet").to_pylist()
    series = check(out / "user_timeseries.parquet", "user_timeseries.parquet").to_pylist()
    jobs = pq.read_table(out / "jobs.parquet").to_pylist()
    for row in summary:
        cell = row["cell"]
        mine = [u for u in users if u["cell"] == cell]
        if [u["user"] for u in mine] != sorted({j["user"] for j in jobs if j["cell"] == cell}):
            sys.exit(f"users.parquet {cell}: not one row per user, by id")
        if sum(u["jobs"] for u in mine) != row["jobs"] or len(mine) != row["users"]:
            sys.exit(f"users.parquet {cell}: jobs or users do not add up to the summary")
        core_hours = sum(j["units"] * j["run"] for j in jobs if j["cell"] == cell) / 3600
        if abs(sum(u["core_hours"] for u in mine) - core_hours) > 1e-6 * core_hours:
            sys.exit(f"users.parquet {cell}: core-hours differ from jobs.parquet")
        if abs(sum(u["share"] for u in mine) - 1) > 1e-9:
            sys.exit(f"users.parquet {cell}: shares do not sum to 1")
        total = sum(u["usage"] for u in mine)
        for u in mine:
            want = 2 ** (-(u["usage"] / total) / u["share"])
            if abs(u["fairshare_factor"] - want) > 1e-9:
                sys.exit(f"users.parquet {cell} user {u['user']}: factor {u['fairshare_factor']} != {want}")
            if u["usage"] > u["penalised_usage"] * (1 + 1e-12):
                sys.exit(f"users.parquet {cell}: decayed usage above what was charged")
        xs = [u["bounded_slowdown_mean"] for u in mine if u["bounded_slowdown_mean"] is not None]
        jain = sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))
        if abs(row["jain_bounded_slowdown"] - jain) > 1e-9:
            sys.exit(f"summary {cell}: jain_bounded_slowdown {row['jain_bounded_slowdown']} != {jain}")
        mine_series = [s for s in series if s["cell"] == cell]
        named = {s["user"] for s in mine_series if s["user"] is not None}
        top = sorted(mine, key=lambda u: (-u["penalised_usage"], u["user"]))[:10]
        if named != {u["user"] for u in top}:
            sys.exit(f"user_timeseries.parquet {cell}: not the 10 users with the most usage")
    orders = {r["cell"]: r["order"] for r in summary}
    if orders != {"fair-easy": "fairshare", "fcfs-easy": "fcfs"}:
        sys.exit(f"summary orders {orders}")
    # job_penalties.parquet: rows for the fairshare-ordered cell only, one per job with its wait
    # as in jobs.parquet; on a processor pool every PE model counts cores, so pe_min == cpu ==
    # the requested cores and nothing is affected (docs/outputs.md, docs/fairshare.md).
    pens = check(out / "job_penalties.parquet", "job_penalties.parquet").to_pylist()
    if {p["cell"] for p in pens} != {"fair-easy"}:
        sys.exit(f"job_penalties.parquet cells {({p['cell'] for p in pens})}")
    waits = {j["job_id"]: j["wait"] for j in jobs if j["cell"] == "fair-easy"}
    if len(pens) != 3000 or {p["job_id"]: p["wait"] for p in pens if p["wait"] is not None} != waits:
        sys.exit("job_penalties.parquet: not every job with its wait in jobs.parquet")
    for p in pens:
        if p["cpu"] != p["cores"] or abs(p["pe_min"] - p["cpu"]) > 1e-9 * p["cpu"] or abs(p["increase"]) > 1e-9:
            sys.exit(f"job_penalties.parquet: on a pool pe_min must equal cpu: {p}")
    check_user_eet(out, summary, users, jobs)


def nearest_rank(values, p):
    values = sorted(values)
    return values[max(1, -(-len(values) * p // 100)) - 1]


def check_user_eet(out, summary, users, jobs):
    """Expected end times on simulated schedules (docs/metrics.md): per job, per user and across
    users recomputed from jobs.parquet, capacities split by shares, the heatmap against the
    users' tardiness."""
    leading = [("experiment", "string"), ("cell", "string")]
    heat = check(out / "eet_heatmap.parquet", "eet_heatmap.parquet (`schedlab trace eet --heatmap-out`)",
                 extra_leading=leading).to_pylist()
    usage = check(out / "eet_usage.parquet", "eet_usage.parquet (`schedlab trace eet --usage-out`)",
                  extra_leading=leading).to_pylist()
    for j in jobs:
        if j["eet"] < j["submit"] + j["run"]:
            sys.exit(f"jobs.parquet: job {j['job_id']} has an EET before submit + run")
        if j["eet_violated"] != (j["end"] > j["eet"]) or j["tardiness"] != max(0, j["end"] - j["eet"]):
            sys.exit(f"jobs.parquet: job {j['job_id']}: eet_violated/tardiness disagree with end and eet")
    for row in summary:
        cell = row["cell"]
        mine = [u for u in users if u["cell"] == cell]
        cell_jobs = [j for j in jobs if j["cell"] == cell]
        for u in mine:
            own = [j for j in cell_jobs if j["user"] == u["user"]]
            violated = sum(j["eet_violated"] for j in own)
            if (u["eet_judged"], u["eet_violated"]) != (len(own), violated):
                sys.exit(f"users.parquet {cell} user {u['user']}: EET counts differ from jobs.parquet")
            if abs(u["veet"] - 100 * violated / len(own)) > 1e-9:
                sys.exit(f"users.parquet {cell} user {u['user']}: veet is not Formula 1")
            if u["tardiness"] != sum(j["tardiness"] for j in own) or \
                    u["weighted_tardiness"] != sum(j["procs"] * j["tardiness"] for j in own):
                sys.exit(f"users.parquet {cell} user {u['user']}: tardiness or WT_u (Formula 3) wrong")
            # split: shares — the user's CPUs are the machine's in proportion to S_u.
            if abs(u["capacity_cpu"] - u["share"] * row["cores"]) > 1e-6 * row["cores"]:
                sys.exit(f"users.parquet {cell} user {u['user']}: capacity_cpu {u['capacity_cpu']} is not share × cores")
        veets = [u["veet"] for u in mine]
        for stat, p in [("q1", 25), ("median", 50), ("q3", 75)]:
            if row[f"veet_{stat}"] != nearest_rank(veets, p):
                sys.exit(f"summary {cell}: veet_{stat} is not the nearest-rank quartile of users.parquet")
        within = sum(v <= 35 for v in veets) / len(veets)
        if abs(row["users_veet_at_most_35"] - within) > 1e-12 or \
                row["eet_violated_jobs"] != sum(u["eet_violated"] for u in mine):
            sys.exit(f"summary {cell}: users_veet_at_most_35 or eet_violated_jobs wrong")
        times = [b["time"] for b in usage if b["cell"] == cell]
        width = times[1] - times[0]
        for u in mine:
            plotted = sum(c["violated_mean"] for c in heat if c["cell"] == cell and c["user"] == u["user"]) * width
            if abs(plotted - u["tardiness"]) > 1e-6 * max(1, u["tardiness"]):
                sys.exit(f"eet_heatmap.parquet {cell} user {u['user']}: plots {plotted} s of {u['tardiness']} s")
        rows = [c["user"] for c in heat if c["cell"] == cell]
        order = sorted(mine, key=lambda u: (-u["tardiness"], u["user"]))
        if list(dict.fromkeys(rows)) != [u["user"] for u in order if u["tardiness"] > 0]:
            sys.exit(f"eet_heatmap.parquet {cell}: rows not by total tardiness")
    print(f"ok  EET columns of {len(jobs)} jobs and {len(users)} users recomputed; heatmaps add up to the tardiness")


def check_queues(exe, trace, tmp):
    """Runs KTH with a queue setup and recomputes every cap from jobs.parquet alone
    (docs/queues.md): running jobs per queue, eligible jobs per user, walltime kills."""
    manifest = tmp / "queues.yaml"
    manifest.write_text(f"""name: limited
workloads:
  kth: {{trace: {trace}, first_jobs: 3000}}
schedulers:
  easy: {{policy: easy}}
queues:
  capped:
    routing: requested_time
    queues:
      - {{name: short, max_walltime: "1:00", max_running: 4}}
      - {{name: long, max_walltime: "4:00", max_running: 6}}
    users: {{default: {{max_queued: 2}}}}
grid:
  axes:
    queues: [none, capped]
""")
    results = tmp / "results"
    subprocess.run([exe, "run", "--quiet", "--results", results, manifest], check=True)
    out = results / "limited"
    summary = check(out / "summary.parquet", "summary.parquet").to_pydict()
    if summary["queues"] != ["none", "capped"]:
        sys.exit(f"summary queues {summary['queues']}")
    jobs = check(out / "jobs.parquet", "jobs.parquet", extra_leading=[("experiment", "string"), ("cell", "string")]).to_pylist()
    queues = check(out / "queues.parquet", "queues.parquet").to_pylist()
    capped = [j for j in jobs if j["cell"] == "capped"]
    if not any(j["held_seconds"] > 0 for j in capped):
        sys.exit("queues: no job was held; the check would prove nothing")
    caps = {"short": 4, "long": 6}
    limit = {"short": 3600, "long": 14400}
    instants = sorted({j["start"] for j in capped})
    for t in instants:
        running, eligible = {}, {}
        for j in capped:
            if j["start"] <= t < j["end"]:
                running[j["sim_queue"]] = running.get(j["sim_queue"], 0) + 1
            if j["submit"] + j["held_seconds"] <= t < j["start"]:
                eligible[j["user"]] = eligible.get(j["user"], 0) + 1
        for q, n in running.items():
            if n > caps[q]:
                sys.exit(f"queues: {n} jobs of {q} run at t={t}")
        for u, n in eligible.items():
            if n > 2:
                sys.exit(f"queues: user {u} has {n} eligible jobs at t={t}")
    for j in capped:
        if (j["held_seconds"] > 0) and j["held_by"] is None:
            sys.exit("queues: a held job names no limit")
        if j["run"] > limit[j["sim_queue"]]:
            sys.exit("queues: a job ran past its queue's max_walltime")
        if j["killed_by"] == "queue_max_walltime" and j["run"] != limit[j["sim_queue"]]:
            sys.exit("queues: a walltime kill not at the limit")
    for j in jobs:
        if j["cell"] == "none" and (j["sim_queue"] is not None or j["held_seconds"] != 0):
            sys.exit("queues: a cell without a setup has queue columns")
    rows = [q for q in queues if q["cell"] == "capped"]
    if [q["queue"] for q in rows] != ["short", "long"]:
        sys.exit(f"queues.parquet queues {[q['queue'] for q in rows]}")
    if sum(q["jobs"] for q in rows) != len(capped):
        sys.exit("queues.parquet: jobs do not add up")
    if not close(sum(q["utilization_share"] for q in rows), 1.0):
        sys.exit("queues.parquet: utilization shares do not add up to 1")
    for q in rows:
        mine = [j for j in capped if j["sim_queue"] == q["queue"]]
        if q["held_jobs"] != sum(1 for j in mine if j["held_seconds"] > 0):
            sys.exit("queues.parquet: held_jobs differs from jobs.parquet")


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def check_topology(exe, tmp):
    """Runs the bundled wagap-2013 trace on its two clusters and recomputes the per-cluster and
    per-resource columns from the per-job rows (docs/metrics.md, "Utilization by resource")."""
    manifest = tmp / "topo.yaml"
    manifest.write_text(f"""name: topo
workloads:
  wagap: {{trace: {ROOT / "workloads" / "wagap-2013.swf.gz"}, memory: bytes_per_node, first_jobs: 3000}}
clusters:
  wagap:
    machines: {ROOT / "workloads" / "wagap-2013.swf.machines"}
    properties: [x86_64, brno, nfs4]
    topology:
      zewura: {{properties: [nodecpus80]}}
      zegox: {{properties: [nodecpus12, debian, linux, infiniband]}}
schedulers:
  easy: {{policy: easy}}
grid:
  axes:
    ignore_memory: [false, true]
""")
    results = tmp / "results"
    subprocess.run([exe, "run", "--quiet", "--results", results, manifest], check=True)
    out = results / "topo"
    summary = check(out / "summary.parquet", "summary.parquet").to_pydict()
    jobs = check(out / "jobs.parquet", "jobs.parquet", extra_leading=[("experiment", "string"), ("cell", "string")]).to_pydict()
    check(out / "timeseries.parquet", "timeseries.parquet")
    clusters = check(out / "clusters.parquet", "clusters.parquet").to_pylist()
    check(out / "cluster_timeseries.parquet", "cluster_timeseries.parquet")
    for i, cell in enumerate(summary["cell"]):
        if summary["memory_reading"][i] != "bytes_per_node" or summary["placement"][i] != "first_fit":
            sys.exit(f"{cell}: reading options or placement not recorded")
        reasons = sum(v[i] for k, v in summary.items() if k.startswith("skipped_") and k != "skipped_too_large")
        if reasons != summary["skipped_too_large"][i]:
            sys.exit(f"{cell}: skipped_* by reason add up to {reasons}, not skipped_too_large")
        if summary["jobs"][i] + summary["skipped_too_large"][i] != 3000:
            sys.exit(f"{cell}: simulated + infeasible jobs != the 3000 jobs read")
        rows = [j for j in range(len(jobs["cell"])) if jobs["cell"][j] == cell]
        a, b = summary["window_start"][i], summary["window_end"][i]
        mine = [c for c in clusters if c["cell"] == cell]
        if [c["cluster"] for c in mine] != ["zewura", "zegox"]:
            sys.exit(f"{cell}: clusters {[c['cluster'] for c in mine]}")
        for kind, column in [("cores", "cores"), ("memory", "memory_kb")]:
            total = 0.0
            for c in mine:
                held = sum(jobs[column][j] * max(0, min(jobs["end"][j], b) - max(jobs["start"][j], a))
                           for j in rows if jobs["cluster"][j] == c["cluster"])
                total += held
                if not close(c[f"utilization_{kind}"], held / (c[column] * (b - a))):
                    sys.exit(f"{cell} {c['cluster']}: utilization_{kind} does not match the jobs")
            if not close(summary[f"utilization_{kind}"][i], total / (summary[column][i] * (b - a))):
                sys.exit(f"{cell}: utilization_{kind} does not match the jobs")
        for c in mine:
            waits = [jobs["wait"][j] for j in rows if jobs["cluster"][j] == c["cluster"]]
            if c["measured_jobs"] != len(waits) or not close(c["wait_mean"], sum(waits) / len(waits)):
                sys.exit(f"{cell} {c['cluster']}: per-cluster waits do not match the jobs")
        ignore = summary["ignore_memory"][i]
        for j in rows:
            if jobs["cluster"][j] not in ("zewura", "zegox") or jobs["nodes"][j] < 1:
                sys.exit(f"{cell}: job {jobs['job_id'][j]} has no cluster or nodes")
            if not ignore and jobs["memory_kb"][j] < jobs["requested_memory_kb"][j]:
                sys.exit(f"{cell}: job {jobs['job_id'][j]} holds less memory than it asked for")
    # The reading does not depend on the machine: a job asks for the same memory in both cells.
    asked = {}
    for j in range(len(jobs["cell"])):
        if asked.setdefault(jobs["job_id"][j], jobs["requested_memory_kb"][j]) != jobs["requested_memory_kb"][j]:
            sys.exit("requested_memory_kb differs between memory taken into account and ignored")
    queue_names = set(jobs["queue_name"])
    if None in queue_names or not queue_names:
        sys.exit("wagap-2013 names every job's queue (Alea's extended SWF)")


if __name__ == "__main__":
    main()
