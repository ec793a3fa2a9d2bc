//! schedlab: reproducible job-scheduling studies.
//!
//! Layers (see ARCHITECTURE.md): [`sim`] is the pure simulator; [`swf`] turns Standard Workload
//! Format text into [`sim::Workload`]s; everything that touches files, threads or clocks lives
//! above them.

pub mod analysis;
pub mod api;
pub mod batsim;
pub mod cache;
pub mod calendar;
pub mod cli;
pub mod diff;
pub mod execute;
pub mod gym;
pub mod machines;
pub mod manifest;
pub mod plan;
pub mod report;
pub mod sim;
pub mod source;
pub mod store;
pub mod swf;
pub mod table;
