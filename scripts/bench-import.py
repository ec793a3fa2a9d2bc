"""The import figures of BENCHMARKS.md (issue 34): writes the same jobs as a PM100-shaped
Parquet job table, a `sacct --parsable2` dump (the format docs/sources.md recommends) and a
`sacct --json` dump (Slurm 22.05's form), from an SWF trace (default: the 1 M-job synthetic
trace `cargo bench --bench memory` writes), then times `schedlab trace info` on each against the
same jobs as SWF (`schedlab trace import` of the file), medians of RUNS runs.

    python scripts/bench-import.py [--swf FILE] [--jobs N] [--json-jobs N] [--runs 3]
        [--bin A --bin B ...] [--only parquet,sacct,json] [--keep DIR]

The JSON dump holds the first --json-jobs jobs (default 100,000: about 115 MB, as a binary that
reads the document whole needs many times that in memory).

Needs pyarrow for the Parquet file. Every binary must print the same `trace info` for a file,
which is checked: a faster import that reads other jobs is no import.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The sacct dumps start here (UTC); the Parquet table at PM100's first day, local +02:00.
SACCT_ORIGIN = datetime(2026, 10, 1, tzinfo=timezone.utc)
PM100_ORIGIN = datetime(2020, 5, 4)
FORMAT = (
    "JobIDRaw|JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|"
    "AllocCPUS|ReqCPUS|NNodes|ReqMem|AllocTRES|State|ExitCode"
)


def swf_jobs(path, limit):
    """(id, submit, wait, run, procs, requested, user, group, queue) of the SWF's jobs."""
    with open(path) as f:
        for line in f:
            if line.startswith(";") or not line.strip():
                continue
            v = line.split()
            run, procs = int(v[3]), int(v[4])
            if run <= 0 or procs <= 0:
                continue
            req = int(v[8]) if int(v[8]) > 0 else run
            yield (
                int(v[0]),
                int(v[1]),
                max(int(v[2]), 0),
                run,
                procs,
                req,
                int(v[11]),
                int(v[12]),
                max(int(v[14]), 1),
            )
            limit -= 1
            if limit == 0:
                return


def clock(s):
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d}-{h:02}:{m:02}:{s:02}" if d else f"{h:02}:{m:02}:{s:02}"


def iso(t):
    return (SACCT_ORIGIN + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S")


def shape(procs, jid):
    """Nodes of 32 cores; every 10th job asks for a V100 per node."""
    nodes = math.ceil(procs / 32)
    gpus = nodes * 4 if jid % 10 == 0 else 0
    return nodes, gpus


def write_sacct(jobs, path):
    with open(path, "w") as f:
        f.write(FORMAT + "\n")
        for jid, sub, wait, run, procs, req, user, group, queue in jobs:
            nodes, gpus = shape(procs, jid)
            mem = f"{2 * procs}G"
            tres = f"billing={procs},cpu={procs}"
            if gpus:
                tres += f",gres/gpu={gpus},gres/gpu:v100={gpus}"
            tres += f",mem={mem},node={nodes}"
            f.write(
                f"{jid}|{jid}|user{user}|group{group}|queue{queue}|normal|{iso(sub)}|{iso(sub)}|"
                f"{iso(sub + wait)}|{iso(sub + wait + run)}|{clock(run)}|{clock(req)}|{procs}|"
                f"{procs}|{nodes}|{mem}|{tres}|COMPLETED|0:0\n"
            )


def write_json(jobs, path):
    base = int(SACCT_ORIGIN.timestamp())
    with open(path, "w") as f:
        f.write(
            '{\n  "meta": {"plugin": {"type": "openapi/dbv0.0.38", "name": "Slurm OpenAPI DB '
            'v0.0.38"}, "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, '
            '"release": "22.05.8"}},\n  "errors": [],\n  "jobs": [\n'
        )
        first = True
        for jid, sub, wait, run, procs, req, user, group, queue in jobs:
            nodes, gpus = shape(procs, jid)
            tres = [
                {"type": "cpu", "name": None, "id": 1, "count": procs},
                {"type": "mem", "name": None, "id": 2, "count": 2048 * procs},
                {"type": "node", "name": None, "id": 4, "count": nodes},
                {"type": "billing", "name": None, "id": 5, "count": procs},
            ]
            if gpus:
                tres += [
                    {"type": "gres", "name": "gpu", "id": 1001, "count": gpus},
                    {"type": "gres", "name": "gpu:v100", "id": 1002, "count": gpus},
                ]
            job = {
                "account": f"group{group}",
                "allocation_nodes": nodes,
                "array": {
                    "job_id": 0,
                    "limits": {"max": {"running": {"tasks": 0}}},
                    "task": None,
                    "task_id": None,
                },
                "cluster": "bench",
                "group": f"group{group}",
                "het": {"job_id": 0, "job_offset": None},
                "job_id": jid,
                "name": f"job{jid}",
                "partition": f"queue{queue}",
                "qos": "normal",
                "required": {"CPUs": procs, "memory": 2048 * procs},
                "state": {"current": "COMPLETED", "reason": "None"},
                "steps": [{"step": {"id": f"{jid}.batch", "name": "batch"}, "state": "COMPLETED"}],
                "time": {
                    "elapsed": run,
                    "eligible": base + sub,
                    "end": base + sub + wait + run,
                    "start": base + sub + wait,
                    "submission": base + sub,
                    "suspended": 0,
                    "limit": math.ceil(req / 60),
                },
                "tres": {"allocated": tres, "requested": tres},
                "user": f"user{user}",
            }
            f.write(("" if first else ",\n") + "    " + json.dumps(job))
            first = False
        f.write("\n  ]\n}\n")


def write_parquet(jobs, path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {
        k: []
        for k in [
            "job_id",
            "user_id",
            "group_id",
            "partition",
            "job_state",
            "submit_time",
            "start_time",
            "end_time",
            "run_time",
            "time_limit",
            "num_nodes_req",
            "num_cores_req",
            "num_gpus_req",
            "mem_req",
        ]
    }
    for jid, sub, wait, run, procs, req, user, group, queue in jobs:
        nodes, gpus = shape(procs, jid)
        submit = PM100_ORIGIN + timedelta(seconds=sub)
        for k, v in [
            ("job_id", jid),
            ("user_id", user),
            ("group_id", group),
            ("partition", f"m100_q{queue}"),
            ("job_state", "COMPLETED"),
            ("submit_time", submit),
            ("start_time", submit + timedelta(seconds=wait)),
            ("end_time", submit + timedelta(seconds=wait + run)),
            ("run_time", run),
            ("time_limit", math.ceil(req / 60)),
            ("num_nodes_req", nodes),
            ("num_cores_req", procs),
            ("num_gpus_req", gpus),
            ("mem_req", 7600 * min(procs, 32)),
        ]:
            cols[k].append(v)
    ts = pa.timestamp("ns")
    table = pa.table(
        {
            k: (
                pa.array(v, ts)
                if k.endswith("_time") and k != "run_time"
                else pa.array(v).dictionary_encode()
                if k == "partition"
                else pa.array(v)
            )
            for k, v in cols.items()
        }
    )
    pq.write_table(table, path, compression="zstd")


def timed(cmd):
    """(seconds, peak MB, stdout) of one run."""
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True, check=True
    )
    secs, kb = out.stderr.strip().splitlines()[-1].split()
    return float(secs), int(kb) / 1024, out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swf", default=ROOT / "target/bench-memory/synthetic-1m.swf")
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--json-jobs", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", action="append", default=None)
    ap.add_argument("--only", default="parquet,sacct,json")
    ap.add_argument("--keep", help="a folder to write (or reuse) the files in")
    a = ap.parse_args()
    bins = a.bin or [str(ROOT / "target/release/schedlab")]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    jobs = None
    sources = {
        "parquet": ("job_table.parquet", write_parquet, ["--mapping", "pm100"]),
        "sacct": ("dump.txt", write_sacct, ["--mapping", "slurm"]),
        "json": ("dump.json", write_json, ["--mapping", "slurm"]),
    }
    for kind in a.only.split(","):
        name, write, args = sources[kind]
        path = work / name
        if not path.exists():
            jobs = jobs or list(swf_jobs(a.swf, a.jobs))
            write(jobs[: a.json_jobs] if kind == "json" else jobs, path)
        swf = work / (name + ".swf")
        if not swf.exists():
            subprocess.run(
                [bins[0], "trace", "import", str(path), *args, "-o", str(swf)],
                check=True,
                capture_output=True,
            )
        size = os.path.getsize(path) / 1e6
        print(f"{kind}: {path.name} {size:.0f} MB; as SWF {os.path.getsize(swf) / 1e6:.0f} MB")
        infos = set()
        for b in bins:
            for label, cmd in [
                (kind, [b, "trace", "info", str(path), *args]),
                ("swf", [b, "trace", "info", str(swf)]),
            ]:
                runs = [timed(cmd) for _ in range(a.runs)]
                if label == kind:
                    infos.add(runs[0][2])
                t = statistics.median(r[0] for r in runs)
                m = statistics.median(r[1] for r in runs)
                print(
                    f"  {b}: {label:8} {t:.2f} s, {m:.0f} MB  (runs: "
                    + ", ".join(f"{r[0]:.2f}" for r in runs)
                    + ")"
                )
        if len(infos) != 1:
            sys.exit(f"{kind}: the binaries' `trace info` differ")
    if not a.keep:
        for p in work.iterdir():
            p.unlink()
        work.rmdir()


if __name__ == "__main__":
    main()
