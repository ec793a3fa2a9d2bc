"""Typed stubs of the native module (python/src): private to the package, whose public API is
``schedlab``'s ``__init__``."""

from typing import Any

import pyarrow as pa

__version__: str

class SchedlabError(Exception): ...
class InputError(SchedlabError): ...
class SimulationError(SchedlabError): ...

def read_trace(
    path: str, *, lenient: bool = False, memory: str = "kb_per_proc"
) -> pa.RecordBatch: ...
def simulate(
    trace: str | None = None,
    *,
    workload: str | None = None,
    seed: int = 0,
    scheduler: str | None = None,
    policy: Any = None,
    order: str = "fcfs",
    backfill_order: str = "queue",
    procs: int | None = None,
    node_size: int | None = None,
    interval: int | None = None,
    overrun: str = "kill",
    tau: int = 10,
    warmup_jobs: int | None = None,
    warmup_seconds: int | None = None,
    lenient: bool = False,
    memory: str = "kb_per_proc",
) -> tuple[pa.RecordBatch, str, int]: ...
def cli(argv: list[str]) -> None: ...
def limit_names() -> list[str]: ...
def cli_main(argv: list[str]) -> int: ...

class ViewState:
    now: int
    capacity: int
    free: int
    procs_per_unit: int
    n_waiting: int
    n_running: int
    n_held: int
    def __init__(self) -> None: ...
    def waiting_block(self) -> bytes: ...
    def running_ints(self) -> bytes: ...
    def held_block(self) -> bytes: ...
    def reservations(self) -> list[tuple[int, int, int]]: ...
    def shadow(self, row: int, started: list[int] = ...) -> tuple[int, int] | None: ...
    def earliest_start(self, units: int, duration: int, started: list[int] = ...) -> int | None: ...
    def plan(self, started: list[int] = ...) -> Plan: ...

class Plan:
    def earliest_start(self, units: int, duration: int) -> int | None: ...
    def fits_now(self, units: int, duration: int) -> bool: ...
    def reserve(self, at: int, units: int, duration: int) -> None: ...
    def free_at(self, t: int) -> int: ...

class GymEnvs:
    """n environments over one trace (schedlab.gym's engine); observations as bytes blocks."""

    k: int
    n_features: int
    n_machine: int
    procs: int
    def __init__(
        self,
        trace: str,
        *,
        n_envs: int = 1,
        seed: int = 0,
        procs: int | None = None,
        k: int = 128,
        features: list[str] | None = None,
        running_slots: int = 8,
        backfill: str = "easy",
        episode_jobs: int | None = 256,
        starts: list[int] | None = None,
        reward: str = "bounded_slowdown",
        per_step: bool = False,
        tau: int = 10,
        time_scale: float = 86400.0,
        lenient: bool = False,
    ) -> None: ...
    @property
    def n_envs(self) -> int: ...
    @property
    def features(self) -> list[str]: ...
    def reset(self, seed: int | None = None) -> tuple[bytes, bytes, bytes]: ...
    def step_one(self, action: int) -> tuple[bytes, bytes, bytes, float, bool]: ...
    def step_many(self, actions: bytes) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
    def raw(self, i: int = 0) -> bytes: ...
    def jobs(self, i: int = 0, finished: bool = False) -> bytes: ...
    def status(self, i: int = 0) -> tuple[int, int, int, int]: ...
