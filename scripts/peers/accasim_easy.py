# Runs AccaSim (installed from PyPI, not part of this repository) with EASY backfilling and
# first-fit allocation on an SWF workload: the peer side of scripts/bench-peers.sh.
import sys
# AccaSim 1.1.3 imports collections.Mapping, which Python 3.10 removed: alias it.
import collections, collections.abc
for name in ('Mapping', 'MutableMapping', 'Sequence', 'Iterable', 'Callable'):
    setattr(collections, name, getattr(collections.abc, name))
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.allocator_class import FirstFit
# Usage: accasim_easy.py WORKLOAD.swf SYSTEM.config RESULTS_DIR (run by scripts/bench-peers.sh)
workload, config = sys.argv[1], sys.argv[2]
dispatcher = EASYBackfilling(FirstFit())
sim = Simulator(workload, config, dispatcher, results_folder=sys.argv[3] if len(sys.argv) > 3 else 'results')
sim.start_simulation()
