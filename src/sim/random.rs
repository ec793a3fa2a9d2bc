//! Draws from a seeded ChaCha8 stream shared by every random part of the simulator (synthetic
//! workloads, generated reservation requests): the stream is always passed in.

use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;

/// A uniform double in [0, 1) from the top 53 bits of the stream.
#[inline]
pub fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An Exp(rate) draw; infinite for a zero rate.
#[inline]
pub fn exponential(rng: &mut ChaCha8Rng, rate: f64) -> f64 {
    if rate <= 0.0 {
        return f64::INFINITY;
    }
    -(1.0 - uniform(rng)).ln() / rate
}
