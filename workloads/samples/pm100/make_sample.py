"""Writes job_table.parquet: a PM100-shaped sample written by hand for schedlab's tests (not
PM100 data). Columns, types and units follow PM100's published job features (see README.md).
Run with pyarrow: python make_sample.py"""

from datetime import datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq

# (job_id, user, group, partition, state, submit, wait s, run s, limit min, nodes, cores, gpus, mem MB)
ROWS = [
    (101, 11, 3, "m100_usr_prod", "COMPLETED", "2020-05-04 08:00:00", 0, 3600, 120, 1, 32, 4, 240000),
    (102, 12, 3, "m100_usr_prod", "COMPLETED", "2020-05-04 08:01:40", 20, 1800, 60, 2, 64, 8, 240000),
    (103, 11, 3, "m100_all_serial", "COMPLETED", "2020-05-04 08:03:00", 0, 600, 30, 1, 1, 0, 7600),
    (104, 13, 4, "m100_usr_prod", "FAILED", "2020-05-04 08:05:00", 5, 45, 60, 1, 8, 1, 30000),
    (105, 14, 4, "m100_usr_prod", "TIMEOUT", "2020-05-04 08:10:00", 60, 7200, 120, 4, 128, 16, 240000),
    (106, 12, 3, "m100_usr_prod", "CANCELLED", "2020-05-04 08:12:00", None, None, 240, 1, 32, 4, 240000),
    (107, 15, 5, "m100_fua_prod", "COMPLETED", "2020-05-04 08:15:00", 0, 900, 30, 1, 16, 2, 60000),
    (108, 13, 4, "m100_usr_prod", "COMPLETED", "2020-05-04 08:20:00", 300, 5000, 100, 1, 32, 4, 240000),
    (109, 11, 3, "m100_all_serial", "COMPLETED", "2020-05-04 08:25:00", 0, 240, 10, 1, 2, 0, 7600),
    (110, 14, 4, "m100_usr_prod", "OUT_OF_MEMORY", "2020-05-04 08:30:00", 10, 300, 60, 1, 32, 4, 120000),
    (111, 15, 5, "m100_fua_prod", "COMPLETED", "2020-05-04 08:40:00", 100, 2400, 60, 2, 64, 8, 240000),
    (112, 12, 3, "m100_usr_prod", "COMPLETED", "2020-05-04 08:50:00", 0, 1200, 30, 1, 4, 1, 30000),
]


def main():
    fmt = "%Y-%m-%d %H:%M:%S"
    cols = {k: [] for k in [
        "job_id", "user_id", "group_id", "partition", "job_state", "submit_time", "start_time",
        "end_time", "run_time", "time_limit", "num_nodes_req", "num_cores_req", "num_gpus_req",
        "mem_req",
    ]}
    for (jid, user, group, part, state, sub, wait, run, limit, nodes, cores, gpus, mem) in ROWS:
        submit = datetime.strptime(sub, fmt)
        start = None if wait is None else submit + timedelta(seconds=wait)
        end = None if start is None else start + timedelta(seconds=run)
        for k, v in [("job_id", jid), ("user_id", user), ("group_id", group),
                     ("partition", part), ("job_state", state), ("submit_time", submit),
                     ("start_time", start), ("end_time", end), ("run_time", run),
                     ("time_limit", limit), ("num_nodes_req", nodes), ("num_cores_req", cores),
                     ("num_gpus_req", gpus), ("mem_req", mem)]:
            cols[k].append(v)
    ts = pa.timestamp("ns")
    table = pa.table({
        "job_id": pa.array(cols["job_id"], pa.int64()),
        "user_id": pa.array(cols["user_id"], pa.int64()),
        "group_id": pa.array(cols["group_id"], pa.int64()),
        "partition": pa.array(cols["partition"], pa.string()).dictionary_encode(),
        "job_state": pa.array(cols["job_state"], pa.string()),
        "submit_time": pa.array(cols["submit_time"], ts),
        "start_time": pa.array(cols["start_time"], ts),
        "end_time": pa.array(cols["end_time"], ts),
        "run_time": pa.array(cols["run_time"], pa.int64()),
        "time_limit": pa.array(cols["time_limit"], pa.int64()),
        "num_nodes_req": pa.array(cols["num_nodes_req"], pa.int64()),
        "num_cores_req": pa.array(cols["num_cores_req"], pa.int64()),
        "num_gpus_req": pa.array(cols["num_gpus_req"], pa.int64()),
        "mem_req": pa.array(cols["mem_req"], pa.int64()),
    })
    pq.write_table(table, "job_table.parquet", compression="zstd")


if __name__ == "__main__":
    main()
