//! Builders shared by the integration tests.
#![allow(dead_code)]

use schedlab::sim::{Job, Machine, Overrun, SchedulerKind, SimConfig, Time};

/// A job with runtime = requested time unless `requested` says otherwise.
pub fn job(id: u64, submit: Time, procs: u32, runtime: Time, requested: Time) -> Job {
    Job {
        id,
        submit,
        runtime,
        requested_time: requested,
        procs,
        memory_kb: 0,
        user: (id % 7) as i32,
        group: -1,
        queue: -1,
        partition: -1,
    }
}

pub fn pool(procs: u32, scheduler: SchedulerKind) -> SimConfig {
    SimConfig {
        machine: Machine::pool(procs),
        scheduler,
        interval: None,
        overrun: Overrun::Kill,
    }
}
