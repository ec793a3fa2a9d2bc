//! Why the EET metric could not be computed: capacities that do not make sense, or amounts
//! beyond what the integer types hold. Never a panic.

use super::resource::Resource;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EetError {
    #[error("no resource to measure: the system's CPU capacity (at least) is needed")]
    NoResource,
    #[error("the system's {} capacity is 0", .0.name())]
    ZeroSystemCapacity(Resource),
    #[error("{owner} has an expected {} capacity of 0: none of its jobs could ever end", .resource.name())]
    ZeroCapacity { owner: String, resource: Resource },
    #[error("{owner} has a {} capacity, but the system's {} capacity is not given", .resource.name(), .resource.name())]
    UnmodelledResource { owner: String, resource: Resource },
    #[error("the capacity scale is 0")]
    ZeroScale,
    #[error("{owner} has a share of 0")]
    ZeroShare { owner: String },
    #[error("the {} capacity of user {user} cannot be represented exactly (amounts too large)", .resource.name())]
    CapacityOverflow { user: i32, resource: Resource },
    #[error("job {job} of user {user}: its {} request × runtime, or its EET, is too large to compute", .resource.name())]
    Overflow {
        job: u64,
        user: i32,
        resource: Resource,
    },
    #[error(
        "job {job} of user {user} comes before an earlier arrival of its user, or its user was not announced: jobs must be judged in arrival order"
    )]
    OutOfOrder { job: u64, user: i32 },
}
