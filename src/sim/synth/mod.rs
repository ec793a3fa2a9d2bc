//! Synthetic workloads (Medernach 2005): the Login/Logout Markov arrival model and the
//! distributions a generator draws runtimes, estimates and sizes from. Pure and deterministic:
//! randomness comes only from seeded streams passed in.

pub mod markov;

pub use markov::{HyperExponential, LoginModel, ModelError};
