"""What a policy that misbehaves gets: a clear error naming the job and the reason, the Python
traceback of what it raised, and a report (not an endless loop) when it never starts anything."""

from __future__ import annotations

import pytest

import schedlab

JOBS = [(0, 100, 3, 100), (1, 100, 2, 100), (2, 50, 1, 50)]


class Fixed(schedlab.Policy):
    def __init__(self, rows):
        self.rows = rows

    def decide(self, view):
        return self.rows


def test_a_job_that_does_not_fit_is_named(write_trace):
    with pytest.raises(schedlab.SimulationError) as e:
        schedlab.simulate(write_trace([(0, 100, 3, 100), (0, 100, 2, 100)]), policy=Fixed([0, 1]))
    message = str(e.value)
    assert "policy Fixed made an impossible decision" in message
    assert "job 2 (row 1) does not fit: it needs 2 units, 1 are free" in message
    assert "t=0" in message


def test_a_row_that_is_not_waiting_is_named(write_trace):
    with pytest.raises(
        schedlab.SimulationError, match=r"it started row 5, but only 1 jobs are waiting"
    ):
        schedlab.simulate(write_trace(JOBS[:1]), policy=Fixed([5]))


def test_a_repeated_row_is_an_error(write_trace):
    with pytest.raises(schedlab.SimulationError, match=r"it started job 1 \(row 0\) twice"):
        schedlab.simulate(write_trace(JOBS[:1]), policy=Fixed([0, 0]))


def test_a_policy_that_raises_gets_its_traceback(write_trace):
    class Broken(schedlab.Policy):
        def decide(self, view):
            return self.helper(view)

        def helper(self, view):
            raise KeyError("no such column")

    with pytest.raises(schedlab.SimulationError) as e:
        schedlab.simulate(write_trace(JOBS), policy=Broken())
    message = str(e.value)
    assert "policy Broken failed" in message
    assert "Traceback (most recent call last)" in message
    assert "in helper" in message and "KeyError: 'no such column'" in message


def test_a_policy_that_never_starts_anything_is_reported(write_trace):
    with pytest.raises(schedlab.SimulationError) as e:
        schedlab.simulate(write_trace(JOBS), policy=Fixed([]))
    message = str(e.value)
    assert "3 jobs wait on an idle machine" in message
    assert "policy Fixed" in message


def test_a_periodic_policy_that_never_starts_anything_is_reported(write_trace):
    with pytest.raises(schedlab.SimulationError, match="wait on an idle machine"):
        schedlab.simulate(write_trace(JOBS), policy=Fixed([]), interval=60)


@pytest.mark.parametrize(
    "rows, expected",
    [
        ("0", "rows are integers"),
        ([0.5], "rows are integers"),
        ([True], "rows are integers"),
        (3, "it must return the rows"),
        ([-1], "returned row -1"),
    ],
)
def test_a_wrong_return_value_is_a_clear_error(write_trace, rows, expected):
    with pytest.raises(schedlab.SimulationError, match=expected):
        schedlab.simulate(write_trace(JOBS), policy=Fixed(rows))


def test_returning_a_numpy_array_works(write_trace):
    import numpy as np

    class Head(schedlab.Policy):
        def decide(self, view):
            return np.arange(1) if view.waiting.units[0] <= view.free else np.array([], dtype=int)

    result = schedlab.simulate(write_trace(JOBS), policy=Head())
    assert result.jobs.column("start").to_pylist() == [0, 100, 200]


def test_bad_input_raises_input_error_with_the_clis_message(tmp_path, write_trace):
    with pytest.raises(schedlab.InputError, match="no-such.swf"):
        schedlab.simulate(tmp_path / "no-such.swf")
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 -1 10 x\n")
    with pytest.raises(schedlab.InputError, match=r"bad\.swf:2"):
        schedlab.simulate(bad)
    with pytest.raises(schedlab.InputError, match="unknown scheduler"):
        schedlab.simulate(write_trace(JOBS), scheduler="fastest")
    with pytest.raises(schedlab.InputError, match="not both"):
        schedlab.simulate(write_trace(JOBS), scheduler="easy", policy=Fixed([]))
    with pytest.raises(schedlab.InputError, match="do not divide into nodes of 3"):
        schedlab.simulate(write_trace(JOBS), procs=4, node_size=3)
    assert issubclass(schedlab.InputError, schedlab.SchedlabError)


def test_a_trace_that_leaves_no_job_is_an_input_error(tmp_path):
    trace = tmp_path / "zero.swf"
    trace.write_text("; MaxProcs: 4\n1 0 -1 0 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n")
    with pytest.raises(schedlab.InputError, match=r"no job to simulate.*1 run time 0"):
        schedlab.simulate(trace, scheduler="easy")
