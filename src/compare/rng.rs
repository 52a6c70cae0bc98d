//! Seeded random streams, one per resample: resample `r` draws from ChaCha8 keyed by the
//! seed, on stream `r`. Which thread computes a resample does not change what it draws,
//! so a seed gives the same p-values for any thread count, and ChaCha8's output is fixed
//! by its specification (the same on every platform and version of `rand_chacha`).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The generator of one seed: its key, expanded once.
#[derive(Clone, Copy)]
pub(crate) struct Streams([u8; 32]);

impl Streams {
    pub(crate) fn new(seed: u64) -> Streams {
        Streams(ChaCha8Rng::seed_from_u64(seed).get_seed())
    }

    /// The random stream of resample `index`.
    pub(crate) fn stream(&self, index: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.0);
        rng.set_stream(index);
        rng
    }
}

/// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
#[inline]
pub(crate) fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

/// Fill `signs` with +1.0 or -1.0, one random bit each (bit 1: +1). Branch-free: the
/// bit becomes the sign bit of 1.0 (a branch on random bits is mispredicted half the
/// time, which cost more than the sums themselves).
#[inline]
pub(crate) fn fill_signs(rng: &mut ChaCha8Rng, signs: &mut [f64]) {
    const ONE: u64 = 0x3FF0_0000_0000_0000;
    for chunk in signs.chunks_mut(64) {
        let mut bits = rng.next_u64();
        for s in chunk {
            *s = f64::from_bits(ONE | ((!bits & 1) << 63));
            bits >>= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_index_only() {
        let s = Streams::new(42);
        let a: Vec<u64> = (0..4).map(|_| s.stream(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(s.stream(7).next_u64(), s.stream(8).next_u64());
        assert_ne!(
            s.stream(7).next_u64(),
            Streams::new(43).stream(7).next_u64()
        );
        let mut r = s.stream(0);
        assert!((0..1000).all(|_| below(&mut r, 10) < 10));
        // signs follow the bits: bit 1 -> +1.0, bit 0 -> -1.0
        let word = s.stream(3).next_u64();
        let mut signs = [0.0; 64];
        fill_signs(&mut s.stream(3), &mut signs);
        for (i, v) in signs.iter().enumerate() {
            assert_eq!(*v, if word >> i & 1 == 1 { 1.0 } else { -1.0 });
        }
    }
}
