//! The fairshare order as it was written before session 24, kept as the reference for the
//! orders that keep their users sorted between calls (`tests/fairshare_lazy.rs`): at every call
//! the keys are recomputed (the waiting users', or every user's at each period of
//! `Reorder::Every`), the queue bucketed by user, the waiting users sorted by key and then by
//! their first waiting job, and the jobs of users with exactly equal keys merged in submission
//! order.

use schedlab::sim::fairshare::FairshareState;
use schedlab::sim::queue::Queue;
use schedlab::sim::scheduler::order::{QueueOrder, Reorder};
use schedlab::sim::{Job, Time};

pub struct FairshareReference {
    state: FairshareState,
    reorder: Reorder,
    /// The period of the last refresh.
    last: Option<Time>,
    buckets: Vec<Vec<usize>>,
    waiting_users: Vec<u32>,
}

impl FairshareReference {
    pub fn new(state: FairshareState, reorder: Reorder) -> Self {
        let users = state.accounts().user_count();
        FairshareReference {
            state,
            reorder,
            last: None,
            buckets: vec![Vec::new(); users],
            waiting_users: Vec::new(),
        }
    }

    /// Recomputes the keys when due: every call, only the waiting users' keys matter;
    /// periodically, all users', frozen until the next period.
    fn refresh(&mut self, now: Time, queue: &Queue) {
        let period = match self.reorder {
            Reorder::Call | Reorder::Start => now,
            Reorder::Every(n) => now.div_euclid(n),
        };
        let due = match self.reorder {
            Reorder::Call | Reorder::Start => true,
            Reorder::Every(_) => self.last != Some(period),
        };
        if !due {
            return;
        }
        match self.reorder {
            Reorder::Call | Reorder::Start => self.state.refresh_waiting(now, queue),
            Reorder::Every(_) => self.state.refresh(now, None),
        }
        self.last = Some(period);
    }
}

impl QueueOrder for FairshareReference {
    fn order(&mut self, now: Time, queue: &Queue, _jobs: &[Job], out: &mut Vec<usize>) {
        self.refresh(now, queue);
        for &u in &self.waiting_users {
            self.buckets[u as usize].clear();
        }
        self.waiting_users.clear();
        for (pos, q) in queue.iter().enumerate() {
            let u = self.state.user_of_job(q.job);
            let bucket = &mut self.buckets[u as usize];
            if bucket.is_empty() {
                self.waiting_users.push(u);
            }
            bucket.push(pos);
        }
        let state = &self.state;
        self.waiting_users.sort_by(|&a, &b| {
            state
                .key(a)
                .total_cmp(&state.key(b))
                .then(self.buckets[a as usize][0].cmp(&self.buckets[b as usize][0]))
        });
        out.clear();
        let mut i = 0;
        while i < self.waiting_users.len() {
            let key = state.key(self.waiting_users[i]);
            let mut j = i + 1;
            while j < self.waiting_users.len() && state.key(self.waiting_users[j]) == key {
                j += 1;
            }
            let from = out.len();
            for &u in &self.waiting_users[i..j] {
                out.extend_from_slice(&self.buckets[u as usize]);
            }
            if j - i > 1 {
                // Equal keys: submission order (positions follow submission order).
                out[from..].sort_unstable();
            }
            i = j;
        }
    }

    fn started(&mut self, now: Time, job: u32, class: u32) {
        self.state.started(now, job, class);
    }

    fn ended(&mut self, job: u32, end: Time) {
        self.state.ended(job, end);
    }
}
