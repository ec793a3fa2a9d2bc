//! A small fixed-size vector of resource amounts, compared component-wise.
//!
//! Index 0 is the allocation unit the scheduler counts (processors on a pool machine, whole
//! nodes with exclusive node allocation); 1 is memory in KB; 2 is GPUs. A component that a
//! machine does not model is 0 in its capacity and in every demand.

use std::ops::{Add, AddAssign, Sub, SubAssign};

pub const KINDS: usize = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceVec(pub [u64; KINDS]);

impl ResourceVec {
    pub const ZERO: ResourceVec = ResourceVec([0; KINDS]);

    /// A vector with only the allocation-unit component set.
    pub const fn units(n: u64) -> Self {
        ResourceVec([n, 0, 0])
    }

    /// The allocation-unit component (processors or nodes).
    pub const fn unit_count(&self) -> u64 {
        self.0[0]
    }

    /// True when every component of `self` is at most the matching one of `available`.
    #[inline]
    pub fn fits_in(&self, available: &ResourceVec) -> bool {
        self.0[0] <= available.0[0] && self.0[1] <= available.0[1] && self.0[2] <= available.0[2]
    }

    /// Component-wise subtraction that returns `None` instead of wrapping below zero.
    #[inline]
    pub fn checked_sub(&self, other: &ResourceVec) -> Option<ResourceVec> {
        Some(ResourceVec([
            self.0[0].checked_sub(other.0[0])?,
            self.0[1].checked_sub(other.0[1])?,
            self.0[2].checked_sub(other.0[2])?,
        ]))
    }

    /// Component-wise minimum.
    #[inline]
    pub fn min(&self, other: &ResourceVec) -> ResourceVec {
        ResourceVec([
            self.0[0].min(other.0[0]),
            self.0[1].min(other.0[1]),
            self.0[2].min(other.0[2]),
        ])
    }
}

impl Add for ResourceVec {
    type Output = ResourceVec;
    #[inline]
    fn add(self, rhs: ResourceVec) -> ResourceVec {
        ResourceVec([
            self.0[0] + rhs.0[0],
            self.0[1] + rhs.0[1],
            self.0[2] + rhs.0[2],
        ])
    }
}

impl AddAssign for ResourceVec {
    #[inline]
    fn add_assign(&mut self, rhs: ResourceVec) {
        *self = *self + rhs;
    }
}

/// Panics on underflow in debug builds; callers check with [`ResourceVec::fits_in`] first.
impl Sub for ResourceVec {
    type Output = ResourceVec;
    #[inline]
    fn sub(self, rhs: ResourceVec) -> ResourceVec {
        ResourceVec([
            self.0[0] - rhs.0[0],
            self.0[1] - rhs.0[1],
            self.0[2] - rhs.0[2],
        ])
    }
}

impl SubAssign for ResourceVec {
    #[inline]
    fn sub_assign(&mut self, rhs: ResourceVec) {
        *self = *self - rhs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_is_component_wise() {
        let cap = ResourceVec([8, 100, 1]);
        assert!(ResourceVec([8, 100, 1]).fits_in(&cap));
        assert!(!ResourceVec([1, 101, 0]).fits_in(&cap));
        assert!(!ResourceVec([1, 0, 2]).fits_in(&cap));
        assert_eq!(cap.checked_sub(&ResourceVec([9, 0, 0])), None);
        assert_eq!(
            cap.checked_sub(&ResourceVec([3, 50, 1])),
            Some(ResourceVec([5, 50, 0]))
        );
    }
}
