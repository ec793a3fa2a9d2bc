//! First-come first-served: start queued jobs in submission order while the head fits; never
//! start a job past one that is waiting. With reservations, "fits" means fits now and beside
//! every reservation until the job's requested time is up.

use super::profile::Profile;
use super::{Scheduler, View};

#[derive(Clone, Debug, Default)]
pub struct Fcfs {
    profile: Profile,
}

impl Scheduler for Fcfs {
    fn schedule(&mut self, view: &View<'_>, starts: &mut Vec<usize>) {
        if !view.reservations.is_empty() {
            view.committed_profile(&mut self.profile);
            for (pos, job) in view.queue.iter().enumerate() {
                let fits = self
                    .profile
                    .earliest_fit(view.now, job.requested_time, job.demand)
                    == Some(view.now);
                if !fits {
                    break;
                }
                self.profile
                    .reserve(view.now, view.now + job.requested_time, job.demand);
                starts.push(pos);
            }
            return;
        }
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
