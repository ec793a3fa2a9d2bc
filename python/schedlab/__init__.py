"""schedlab: reproducible job-scheduling studies, from Python.

The same library as the ``schedlab`` command (an exact, fast simulator of FCFS, EASY and
conservative backfilling over SWF traces), with two more doors into it:

- ``simulate(trace, scheduler="easy")`` or ``simulate(trace, policy=MyPolicy())``: one trace on
  one machine; the per-job results and the summary come back as pyarrow tables.
- ``Policy``: write your own policy as a class with one method, ``decide(view)``, that returns
  the rows of ``view.waiting`` to start now (docs/policies.md).

Results are pyarrow tables handed over through the Arrow C data interface: ``.to_pandas()`` or
``polars.from_arrow(...)`` read them without conversion code (docs/python.md).
"""

from ._schedlab import InputError, SchedlabError, SimulationError, __version__
from .manifest import plan, report, run
from .policy import NodeShape, Placer, Plan, Policy, Shadow
from .simulate import Result, read_trace, simulate
from .view import LIMITS, Held, Nodes, Running, View, Waiting

__all__ = [
    "LIMITS",
    "Held",
    "InputError",
    "NodeShape",
    "Nodes",
    "Placer",
    "Plan",
    "Policy",
    "Result",
    "Running",
    "SchedlabError",
    "Shadow",
    "SimulationError",
    "View",
    "Waiting",
    "__version__",
    "plan",
    "read_trace",
    "report",
    "run",
    "simulate",
]
