//! Throttling policies for reservation requests (Margo et al., section 2: "the total
//! node-seconds of user-settable reservations within any sliding 7 day period must not exceed
//! 256 nodes × 12 hours"), composable: bounds on duration and width, a sliding-window cap on
//! reserved unit-seconds and a sliding-window cap on each owner's number of reservations.
//!
//! Sliding-window loads count a reservation in the windows that contain its *start* (with its
//! whole unit-seconds): a reservation belongs to the period it begins in, like a budget. Both
//! caps use [`SlidingWindowLoad`], O(log n) per request.

use std::collections::HashMap;

use super::window_cap::SlidingWindowLoad;
use super::{ReservationRequest, Rule};
use crate::sim::job::Time;

/// A cap on a sliding window: the load of any `window` seconds stays ≤ `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WindowCap {
    pub window: Time,
    pub max: u64,
}

/// The throttles in force; `None` disables a rule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Throttles {
    pub min_duration: Option<Time>,
    pub max_duration: Option<Time>,
    /// Allocation units.
    pub min_width: Option<u64>,
    pub max_width: Option<u64>,
    /// Reserved unit-seconds (width × duration) starting in any window.
    pub unit_seconds: Option<WindowCap>,
    /// Reservations of one owner starting in any window.
    pub per_owner: Option<WindowCap>,
}

/// Throttle bookkeeping over the granted reservations of one simulation.
#[derive(Clone, Debug)]
pub struct ThrottleState {
    throttles: Throttles,
    load: Option<SlidingWindowLoad>,
    owners: HashMap<String, SlidingWindowLoad>,
}

impl ThrottleState {
    pub fn new(throttles: Throttles) -> Self {
        ThrottleState {
            load: throttles
                .unit_seconds
                .map(|c| SlidingWindowLoad::new(c.window)),
            throttles,
            owners: HashMap::new(),
        }
    }

    /// The rules that depend on the request alone, in the order listed in docs/reservations.md.
    pub fn check_request(&self, request: &ReservationRequest, capacity: u64) -> Result<(), Rule> {
        let t = &self.throttles;
        if request.width > capacity {
            return Err(Rule::WiderThanMachine);
        }
        if t.min_duration.is_some_and(|m| request.duration < m) {
            return Err(Rule::MinDuration);
        }
        if t.max_duration.is_some_and(|m| request.duration > m) {
            return Err(Rule::MaxDuration);
        }
        if t.min_width.is_some_and(|m| request.width < m) {
            return Err(Rule::MinWidth);
        }
        if t.max_width.is_some_and(|m| request.width > m) {
            return Err(Rule::MaxWidth);
        }
        Ok(())
    }

    /// The sliding-window caps, for the request granted at `start`.
    pub fn check_window(&mut self, request: &ReservationRequest, start: Time) -> Result<(), Rule> {
        if let (Some(cap), Some(load)) = (self.throttles.unit_seconds, self.load.as_mut())
            && load.peak(start).saturating_add(unit_seconds(request)) > cap.max
        {
            return Err(Rule::NodeSecondsCap);
        }
        if let Some(cap) = self.throttles.per_owner {
            let peak = self
                .owners
                .get_mut(&request.owner)
                .map_or(0, |l| l.peak(start));
            if peak + 1 > cap.max {
                return Err(Rule::OwnerCap);
            }
        }
        Ok(())
    }

    /// Records a granted reservation.
    pub fn commit(&mut self, request: &ReservationRequest, start: Time) {
        if let Some(load) = self.load.as_mut() {
            load.add(start, unit_seconds(request));
        }
        if let Some(cap) = self.throttles.per_owner {
            self.owners
                .entry(request.owner.clone())
                .or_insert_with(|| SlidingWindowLoad::new(cap.window))
                .add(start, 1);
        }
    }
}

/// Width × duration, saturating.
pub fn unit_seconds(request: &ReservationRequest) -> u64 {
    request.width.saturating_mul(request.duration.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(owner: &str, width: u64, duration: Time) -> ReservationRequest {
        ReservationRequest {
            id: 1,
            owner: owner.into(),
            created: 0,
            start: 0,
            duration,
            width,
            cluster: None,
        }
    }

    #[test]
    fn static_rules_name_the_rule_that_refused() {
        let state = ThrottleState::new(Throttles {
            min_duration: Some(3600),
            max_duration: Some(18 * 3600),
            min_width: Some(8),
            max_width: Some(128),
            ..Throttles::default()
        });
        assert_eq!(state.check_request(&request("a", 8, 3600), 256), Ok(()));
        assert_eq!(
            state.check_request(&request("a", 300, 3600), 256),
            Err(Rule::WiderThanMachine)
        );
        assert_eq!(
            state.check_request(&request("a", 8, 3599), 256),
            Err(Rule::MinDuration)
        );
        assert_eq!(
            state.check_request(&request("a", 8, 18 * 3600 + 1), 256),
            Err(Rule::MaxDuration)
        );
        assert_eq!(
            state.check_request(&request("a", 4, 3600), 256),
            Err(Rule::MinWidth)
        );
        assert_eq!(
            state.check_request(&request("a", 129, 3600), 256),
            Err(Rule::MaxWidth)
        );
    }

    #[test]
    fn the_papers_cap_admits_half_a_day_of_the_machine_per_week() {
        // 256 nodes × 12 h in any 7 days: two 128-node 12-hour reservations fit, a third
        // starting within the same week does not, one a week later does.
        let week = 7 * 86_400;
        let mut state = ThrottleState::new(Throttles {
            unit_seconds: Some(WindowCap {
                window: week,
                max: 256 * 12 * 3600,
            }),
            ..Throttles::default()
        });
        let r = request("a", 128, 12 * 3600);
        for start in [0, 86_400] {
            assert_eq!(state.check_window(&r, start), Ok(()));
            state.commit(&r, start);
        }
        assert_eq!(
            state.check_window(&r, 3 * 86_400),
            Err(Rule::NodeSecondsCap)
        );
        // Seven days less a second after the first: one window holds all three.
        assert_eq!(state.check_window(&r, week - 1), Err(Rule::NodeSecondsCap));
        // Seven days after the first: no 7-day window holds both it and the first.
        assert_eq!(state.check_window(&r, week), Ok(()));
    }

    #[test]
    fn owner_caps_are_per_owner() {
        let mut state = ThrottleState::new(Throttles {
            per_owner: Some(WindowCap {
                window: 100,
                max: 2,
            }),
            ..Throttles::default()
        });
        let (a, b) = (request("a", 1, 10), request("b", 1, 10));
        state.commit(&a, 0);
        state.commit(&a, 50);
        assert_eq!(state.check_window(&a, 60), Err(Rule::OwnerCap));
        assert_eq!(state.check_window(&b, 60), Ok(()));
        assert_eq!(state.check_window(&a, 150), Ok(())); // (50, 150] holds one
    }
}
