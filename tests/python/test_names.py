"""Names where SWF has numbers (issue 33; docs/swf.md, "Names in place of numbers") reach the
jobs table through the Arrow interface: ``user_name``, ``group_name`` and ``queue_name`` beside
the ids they were given."""

from __future__ import annotations

import schedlab


def test_named_users_groups_and_queues_are_columns_beside_their_ids(tmp_path):
    rows = [
        (1, 0, "user_B", "grp", "q_long"),
        (2, 1, "7", "3", "2"),
        (3, 2, "user_A", "3", "q_short"),
    ]
    lines = ["; MaxProcs: 4"] + [
        f"{i} {s} -1 100 1 -1 -1 1 100 -1 1 {u} {g} -1 {q} -1 -1 -1" for i, s, u, g, q in rows
    ]
    trace = tmp_path / "named.swf"
    trace.write_text("\n".join(lines) + "\n")
    jobs = schedlab.simulate(trace, scheduler="fcfs").jobs.to_pydict()
    assert jobs["user"] == [8, 7, 9]
    assert jobs["user_name"] == ["user_B", None, "user_A"]
    assert jobs["group"] == [4, 3, 3]
    assert jobs["group_name"] == ["grp", None, None]
    assert jobs["queue_name"] == ["q_long", None, "q_short"]
