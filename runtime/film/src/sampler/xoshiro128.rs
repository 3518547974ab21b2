//! xoshiro128** (Blackman and Vigna 2021, "Scrambled linear pseudorandom number generators",
//! ACM TOMS 47(4)): 128 bits of state in four 32-bit words, period 2^128 - 1. It is made of
//! 32-bit shifts and rotations by constants, xors and two multiplications by constants, so that
//! compiled kernels draw from it in 32-bit vector lanes about as cheaply as the host does
//! (drs-render's `streams.rs`).

/// One xoshiro128** generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xoshiro128 {
    s: [u32; 4],
}

impl Xoshiro128 {
    /// The generator in state `words`. All zeros, the one state the generator never leaves,
    /// becomes `[1, 0, 0, 0]`.
    pub fn from_words(words: [u32; 4]) -> Xoshiro128 {
        let s = if words == [0; 4] { [1, 0, 0, 0] } else { words };
        Xoshiro128 { s }
    }

    /// The state, from which [`Xoshiro128::from_words`] makes the same generator.
    pub fn words(&self) -> [u32; 4] {
        self.s
    }

    /// The next 32 uniformly distributed bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 9;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(11);
        result
    }

    /// A uniform float in `[0, 1)`: the top 24 bits of `next_u32` times 2^-24, so every value
    /// is exact and the largest is `1 - 2^-24`.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * F32_UNIT
    }
}

/// 2^-24, the spacing of the floats [`Xoshiro128::next_f32`] returns.
pub(crate) const F32_UNIT: f32 = 1.0 / (1u32 << 24) as f32;
