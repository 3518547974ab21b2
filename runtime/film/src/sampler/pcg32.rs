//! PCG32 (O'Neill 2014, "PCG: A family of simple fast space-efficient statistically good
//! algorithms for random number generation"): a 64-bit LCG with the XSH-RR output permutation,
//! 2^63 selectable streams of period 2^64 each.

const MULTIPLIER: u64 = 6364136223846793005;

/// One PCG32 generator: its LCG state and its stream's increment (always odd).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pcg32 {
    state: u64,
    increment: u64,
}

impl Pcg32 {
    /// The generator at position `initial_state` of stream `stream`, seeded as the reference
    /// implementation's `pcg32_srandom_r(initstate, initseq)` does.
    pub fn new(initial_state: u64, stream: u64) -> Pcg32 {
        let mut rng = Pcg32 { state: 0, increment: (stream << 1) | 1 };
        rng.step();
        rng.state = rng.state.wrapping_add(initial_state);
        rng.step();
        rng
    }

    #[inline]
    fn step(&mut self) {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(self.increment);
    }

    /// The next 32 uniformly distributed bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.step();
        // XSH-RR: xorshift the high bits down, then rotate by the top five bits.
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// The generator's state and stream increment, from which a new, unrelated generator can
    /// be derived.
    pub(crate) fn words(&self) -> (u64, u64) {
        (self.state, self.increment)
    }

    /// A uniform float in `[0, 1)`: the top 24 bits of `next_u32` times 2^-24, so every value
    /// is exact and the largest is `1 - 2^-24`.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * F32_UNIT
    }
}

/// 2^-24, the spacing of the floats [`Pcg32::next_f32`] returns.
pub(crate) const F32_UNIT: f32 = 1.0 / (1u32 << 24) as f32;
