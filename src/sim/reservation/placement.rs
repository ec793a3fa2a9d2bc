//! Where a reservation request goes: the earliest window of its length, at or after its
//! requested start, that is free in the availability profile of the committed work.
//!
//! The committed work depends on the placement policy: running jobs (by their requested times)
//! and granted reservations always; with [`Placement::AfterQueue`] also every queued job, each
//! given its earliest start in submission order as conservative backfilling would — the
//! Catalina rule that "users create reservations only after all eligible jobs have been given
//! reservations" (Margo et al., section 2).

use super::{OnConflict, Placement, ReservationRequest, Rule};
use crate::sim::job::Time;
use crate::sim::resources::ResourceVec;
use crate::sim::scheduler::View;
use crate::sim::scheduler::profile::Profile;

/// The granted start of `request` seen at `view.now`, or the rule that refuses it.
pub fn place(
    view: &View<'_>,
    request: &ReservationRequest,
    placement: Placement,
    on_conflict: OnConflict,
) -> Result<Time, Rule> {
    let mut profile = Profile::default();
    view.committed_profile(&mut profile);
    if placement == Placement::AfterQueue {
        for job in view.queue {
            if let Some(start) = profile.earliest_fit(view.now, job.requested_time, job.demand) {
                profile.reserve(start, start + job.requested_time, job.demand);
            }
        }
    }
    let wanted = request.start.max(view.now);
    let start = profile
        .earliest_fit(wanted, request.duration, ResourceVec::units(request.width))
        .ok_or(Rule::NoRoom)?;
    match on_conflict {
        OnConflict::Reject if start != wanted => Err(Rule::NoRoom),
        _ => Ok(start),
    }
}
