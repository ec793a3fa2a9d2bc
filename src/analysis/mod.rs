//! Trace analysis (Medernach 2005, "Workload data analysis" and "Simulation and validation"):
//! per-group statistics of a trace — runtimes, waits, interarrivals, the normalised waiting
//! time, the daily cycle, the empirical probability R0(t) of no arrival — and the fit of the
//! Login/Logout model to a user's R0 curve; and Klusáček & Rudová's §4 analysis of job penalties
//! on a system (`penalties`). Pure: workloads in, numbers out.

mod fit;
mod moments;
mod penalties;
mod r0;
mod stats;

pub use fit::{Fit, fit_login_model, fit_r0_curve};
pub use moments::Moments;
pub use penalties::{
    AFFECTED_TOLERANCE, JobPenalties, PenaltySummary, job_penalties, summarize_penalties,
};
pub use r0::{EmpiricalR0, R0_GRID};
pub use stats::{GroupBy, GroupStats, group_stats};
