//! Helpers of the crate's unit tests.

/// A seeded linear congruential generator (Knuth's MMIX constants), for test data
/// that is the same on every machine without a dependency.
pub(crate) struct Lcg(u64);

impl Lcg {
    pub(crate) fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    /// The next number below `m` (from the state's high bits).
    pub(crate) fn below(&mut self, m: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % m
    }
}
