//! The local executor: every node in this process, on a rayon pool of `threads` threads.

use super::{Context, ExecuteError, Executor, Work};
use crate::execute::dag::{self, Event, Observer};

pub struct Local {
    pub threads: usize,
}

impl Executor for Local {
    fn execute(
        &self,
        context: &Context<'_>,
        work: &Work<'_>,
        observer: &dyn Observer,
    ) -> Result<Vec<Event>, ExecuteError> {
        Ok(dag::execute(context.nodes, self.threads, work, observer))
    }
}
