//! The fairshare accounts of a workload: its users (dense indices in order of user id) and the
//! group each user is charged under.
//!
//! Every user who submits a job has an account from the start of the run (a simulator knows the
//! whole workload; a production system would list the same users in its share tree). A user's
//! group is the group of their first job in submission order; a later job under another group is
//! still charged to that first group (the share tree has one place per user). Unknown ids (−1)
//! are an account like any other.

use std::collections::BTreeMap;

use crate::sim::job::Workload;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accounts {
    /// User ids by dense index, ascending.
    users: Vec<i32>,
    /// Group ids by dense index, ascending.
    groups: Vec<i32>,
    /// Per user: the dense index of their group.
    user_group: Vec<u32>,
    /// Per job of the workload: the dense index of its user.
    job_user: Vec<u32>,
}

impl Accounts {
    pub fn of(workload: &Workload) -> Self {
        let mut first_group: BTreeMap<i32, i32> = BTreeMap::new();
        for job in &workload.jobs {
            first_group.entry(job.user).or_insert(job.group);
        }
        let users: Vec<i32> = first_group.keys().copied().collect();
        let mut groups: Vec<i32> = first_group.values().copied().collect();
        groups.sort_unstable();
        groups.dedup();
        let user_group = first_group
            .values()
            .map(|g| groups.binary_search(g).expect("group listed") as u32)
            .collect();
        let job_user = workload
            .jobs
            .iter()
            .map(|j| users.binary_search(&j.user).expect("user listed") as u32)
            .collect();
        Accounts {
            users,
            groups,
            user_group,
            job_user,
        }
    }

    pub fn user_count(&self) -> usize {
        self.users.len()
    }

    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// User ids by dense index.
    pub fn users(&self) -> &[i32] {
        &self.users
    }

    /// Group ids by dense index.
    pub fn groups(&self) -> &[i32] {
        &self.groups
    }

    /// The dense group index of dense user `user`.
    pub fn group_of(&self, user: u32) -> u32 {
        self.user_group[user as usize]
    }

    /// The dense user index of the workload's job `job`.
    pub fn user_of_job(&self, job: u32) -> u32 {
        self.job_user[job as usize]
    }

    /// The dense index of user id `id`, if they have an account.
    pub fn user_index(&self, id: i32) -> Option<u32> {
        self.users.binary_search(&id).ok().map(|i| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::job::Job;

    #[test]
    fn users_are_dense_in_id_order_with_their_first_group() {
        let job = |submit, user, group| Job {
            submit,
            user,
            group,
            ..Job::default()
        };
        let w = Workload::new(vec![
            job(0, 7, 2),
            job(1, 3, 1),
            job(2, 7, 9),
            job(3, -1, -1),
        ]);
        let a = Accounts::of(&w);
        assert_eq!(a.users(), [-1, 3, 7]);
        assert_eq!(a.groups(), [-1, 1, 2]);
        assert_eq!(a.group_of(2), 2, "user 7 stays in group 2");
        assert_eq!(
            (0..4).map(|j| a.user_of_job(j)).collect::<Vec<_>>(),
            [2, 1, 2, 0]
        );
        assert_eq!(a.user_index(3), Some(1));
        assert_eq!(a.user_index(4), None);
    }
}
