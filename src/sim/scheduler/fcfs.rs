//! First-come first-served: start queued jobs in submission order while the head fits; never
//! start a job past one that is waiting.

use super::{Scheduler, View};

#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Scheduler for Fcfs {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        let mut free = view.free;
        for (pos, job) in view.queue.iter().enumerate() {
            if !job.demand.fits_in(&free) {
                break;
            }
            free -= job.demand;
            starts.push(pos);
        }
    }
}
