//! Ctrl-C (SIGINT) and SIGTERM while a run waits on work it handed elsewhere (the Slurm
//! executor): the first signal sets a flag the waiting loop checks — it then cancels what it
//! submitted and says so; a second one terminates the process as usual. signal-hook chains
//! handlers, so other parts of the program may watch the same signals.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Watches SIGINT and SIGTERM for as long as it lives.
pub struct Signals {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    pub fn install() -> Signals {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for signal in [SIGINT, SIGTERM] {
            // Order matters: the conditional default sees the flag before this signal sets it.
            if let Ok(id) = flag::register_conditional_default(signal, Arc::clone(&flag)) {
                ids.push(id);
            }
            if let Ok(id) = flag::register(signal, Arc::clone(&flag)) {
                ids.push(id);
            }
        }
        Signals { flag, ids }
    }

    /// A signal arrived.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
