//! A fast non-cryptographic hasher (multiply-rotate per word, as FxHash does) for the maps
//! whose keys come from the workload, not from an adversary, and whose iteration order never
//! reaches an output: the node schedulers' small integer keys, and the names and requests met
//! while reading a trace. Std's default (SipHash) resists crafted collisions, at several times
//! the cost per key.

use std::hash::Hasher;

#[derive(Clone, Copy, Debug, Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // A word at a time; the last, short one padded with zeros.
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(bytes: &[u8]) -> u64 {
        let mut h = MixHasher::default();
        h.write(bytes);
        h.finish()
    }

    #[test]
    fn bytes_are_hashed_a_zero_padded_word_at_a_time() {
        // Hand-worked: one word w from 0 is (0 ^ w) × K; a short tail is padded with zeros.
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let w = u64::from_le_bytes(*b"user0001");
        assert_eq!(hash(b"user0001"), w.wrapping_mul(K));
        assert_eq!(
            hash(b"ab"),
            u64::from_le_bytes([b'a', b'b', 0, 0, 0, 0, 0, 0]).wrapping_mul(K)
        );
        let second = u64::from_le_bytes([b'x', 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            hash(b"user0001x"),
            (w.wrapping_mul(K).rotate_left(5) ^ second).wrapping_mul(K)
        );
        assert_eq!(hash(b""), 0);
    }
}
