//! One user's arrival process: the Login/Logout Markov chain of Medernach, section "Job
//! submittal model", simulated event by event. The user starts in its stationary state (logged
//! in with probability P_Login = λ/(λ+δ)); a *Logout* sojourn lasts Exp(λ), a *Login* sojourn
//! Exp(δ), and while logged in submissions come as a Poisson process of rate μ. By
//! memorylessness the time to the next submission and the rest of the sojourn can both be drawn
//! afresh at any event.

use rand_chacha::ChaCha8Rng;

use super::markov::LoginModel;
use crate::sim::random::{exponential, uniform};

/// What happens next to a user.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    Submit(f64),
    Login(f64),
    Logout(f64),
}

/// The arrival process of one user, in (operational) seconds from 0.
pub struct MarkovArrivals {
    model: LoginModel,
    rng: ChaCha8Rng,
    logged_in: bool,
    /// When the current sojourn ends.
    sojourn_end: f64,
    now: f64,
}

impl MarkovArrivals {
    pub fn new(model: LoginModel, mut rng: ChaCha8Rng) -> Self {
        let logged_in = uniform(&mut rng) < model.p_login();
        let rate = if logged_in {
            model.logout_rate
        } else {
            model.login_rate
        };
        let sojourn_end = exponential(&mut rng, rate);
        MarkovArrivals {
            model,
            rng,
            logged_in,
            sojourn_end,
            now: 0.0,
        }
    }

    pub fn is_logged_in(&self) -> bool {
        self.logged_in
    }

    /// The next event: a submission, or the end of the current sojourn.
    pub fn next_event(&mut self) -> Event {
        if self.logged_in {
            let next = self.now + exponential(&mut self.rng, self.model.submit_rate);
            if next < self.sojourn_end {
                self.now = next;
                return Event::Submit(next);
            }
            self.now = self.sojourn_end;
            self.logged_in = false;
            self.sojourn_end = self.now + exponential(&mut self.rng, self.model.login_rate);
            Event::Logout(self.now)
        } else {
            self.now = self.sojourn_end;
            self.logged_in = true;
            self.sojourn_end = self.now + exponential(&mut self.rng, self.model.logout_rate);
            Event::Login(self.now)
        }
    }
}

impl Iterator for MarkovArrivals {
    type Item = f64;

    /// The next submission time (never ends: λ > 0 and μ > 0).
    fn next(&mut self) -> Option<f64> {
        loop {
            if let Event::Submit(t) = self.next_event() {
                return Some(t);
            }
        }
    }
}
