//! Counter-based samplers: Mitsuba's `independent` and `stratified`. The random numbers of a
//! sample are a pure function of (seed, pixel, sample index, pass), so any sample can be
//! regenerated exactly (path replay re-runs a sample in the adjoint pass) and a rendering does
//! not depend on how pixels are distributed over threads.
//!
//! Each sample draws from its own xoshiro128** generator. Seeding: TEA, keyed by (seed, pass),
//! encrypts the block (pixel, sample) into the first half of the generator's state and, under a
//! second key, into the second half; being a bijection for a fixed key, it gives every sample of
//! a pass its own state. (Until session 42 the generator was PCG32, Mitsuba's; xoshiro128** is
//! as good statistically and cheaper in the 32-bit lanes of compiled code, which draw from it
//! directly.) The stratified sampler's permutation seed is
//! the encryption of (pixel, 0) under a third key, shared by the pixel's samples; dimension `d`
//! permutes with the encryption of (that seed, d) under a fourth. (Mitsuba uses `seed + d`; with
//! Kensler's permutation, consecutive seeds give related permutations, so consecutive dimensions
//! come out correlated, which `tests/samplers.rs` checks for.)

mod hash;
mod xoshiro128;

pub use xoshiro128::Xoshiro128;

use crate::FilmError;
use hash::{permute, tea, tea_lanes};
use xoshiro128::F32_UNIT;

const TEA_ROUNDS: u32 = 8;
// Fixed key words that separate the derived values: the key of Zafar et al., then the SHA-256
// initial hash words.
const STATE_KEY: [u32; 2] = [0xa341_316c, 0xc801_3ea4];
const STREAM_KEY: [u32; 2] = [0xad90_777d, 0x7e95_761e];
const PERMUTATION_KEY: [u32; 2] = [0x6a09_e667, 0xbb67_ae85];
const DIMENSION_KEY: [u32; 4] = [0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c];
const SPLIT_KEY: [u32; 4] = [0x1f83_d9ab, 0x5be0_cd19, 0xcbbb_9d5d, 0x629a_292a];

/// Which of Mitsuba's samplers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplerKind {
    /// Independent uniform numbers from xoshiro128** (`independent`).
    Independent,
    /// One sample per stratum in every dimension (`stratified`): 1D values fall one into each
    /// of `sample_count` equal intervals, 2D points one into each cell of a
    /// `√sample_count x √sample_count` grid, in an order shuffled per pixel and dimension.
    /// With `jitter` the point is uniform in its stratum, without it at the centre.
    Stratified { jitter: bool },
}

/// A configured sampler: kind, samples per pixel and base seed (Mitsuba's `seed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    kind: SamplerKind,
    sample_count: u32,
    seed: u32,
}

impl Sampler {
    /// Mitsuba's `independent` sampler.
    pub fn independent(sample_count: u32, seed: u32) -> Result<Sampler, FilmError> {
        if sample_count == 0 {
            return Err(FilmError::ZeroSampleCount);
        }
        Ok(Sampler { kind: SamplerKind::Independent, sample_count, seed })
    }

    /// Mitsuba's `stratified` sampler. `sample_count` is rounded up to the next square as
    /// [`stratified_sample_count`] says; [`sample_count`](Self::sample_count) gives the result.
    pub fn stratified(sample_count: u32, seed: u32, jitter: bool) -> Result<Sampler, FilmError> {
        let sample_count = stratified_sample_count(sample_count)?;
        Ok(Sampler { kind: SamplerKind::Stratified { jitter }, sample_count, seed })
    }

    pub fn kind(&self) -> SamplerKind {
        self.kind
    }

    /// Samples per pixel (after rounding, for the stratified sampler).
    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }

    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// The random numbers of sample `sample` of pixel `pixel` (the film's `y * width + x`) in
    /// render pass `pass`. The same arguments always give the same sequence. For the
    /// stratified sampler, sample indices `sample_count` and above repeat the strata of
    /// `sample % sample_count` (with different jitter).
    pub fn stream(&self, pixel: u32, sample: u32, pass: u32) -> SampleStream {
        let [stream] = self.streams([pixel], [sample], pass);
        stream
    }

    /// The streams of `N` samples of pass `pass` at once, lane `l` equal to
    /// `stream(pixels[l], samples[l], pass)`: the seeding hashes run side by side, which is
    /// several times cheaper per stream than one at a time.
    pub fn streams<const N: usize>(&self, pixels: [u32; N], samples: [u32; N], pass: u32) -> [SampleStream; N] {
        let key = |half: [u32; 2]| [self.seed, pass, half[0], half[1]];
        let state = tea_lanes(pixels, samples, key(STATE_KEY), TEA_ROUNDS);
        let stream = tea_lanes(pixels, samples, key(STREAM_KEY), TEA_ROUNDS);
        let permutation_seeds = match self.kind {
            SamplerKind::Independent => [0; N],
            SamplerKind::Stratified { .. } => tea_lanes(pixels, [0; N], key(PERMUTATION_KEY), TEA_ROUNDS).0,
        };
        std::array::from_fn(|l| {
            let rng = Xoshiro128::from_words([state.0[l], state.1[l], stream.0[l], stream.1[l]]);
            let strata = match self.kind {
                SamplerKind::Independent => None,
                SamplerKind::Stratified { jitter } => Some(Strata {
                    permutation_seed: permutation_seeds[l],
                    dimension: 0,
                    sample: samples[l] % self.sample_count,
                    count: self.sample_count,
                    resolution: self.sample_count.isqrt(),
                    jitter,
                }),
            };
            SampleStream { rng, strata }
        })
    }
}

/// Mitsuba's rule for the stratified sampler's sample count: the smallest square number that is
/// at least `requested` (Mitsuba warns when it rounds, e.g. 5 → 9).
pub fn stratified_sample_count(requested: u32) -> Result<u32, FilmError> {
    if requested == 0 {
        return Err(FilmError::ZeroSampleCount);
    }
    let mut resolution = requested.isqrt();
    if resolution * resolution < requested {
        resolution += 1;
    }
    resolution.checked_mul(resolution).ok_or(FilmError::SampleCountTooLarge(requested))
}

/// The sequence of random numbers of one sample. Clone it, or ask the [`Sampler`] again, to
/// replay the sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleStream {
    rng: Xoshiro128,
    strata: Option<Strata>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Strata {
    /// Seed of the pixel's permutations, from which each dimension derives its own.
    permutation_seed: u32,
    dimension: u32,
    sample: u32,
    /// Strata per 1D dimension (the sample count).
    count: u32,
    /// Strata per axis in 2D: `count = resolution²`.
    resolution: u32,
    jitter: bool,
}

impl SampleStream {
    /// The next uniform number in `[0, 1)`.
    // Inline, so that the independent case (a few instructions, drawn lane by lane for
    // compiled code) costs no call; the stratified case stays out of line.
    #[inline]
    pub fn next_1d(&mut self) -> f32 {
        match &mut self.strata {
            None => self.rng.next_f32(),
            Some(strata) => strata.next_1d(&mut self.rng),
        }
    }

    /// A new stream whose numbers are unrelated to this one's, past and future, without
    /// advancing this one: a pure function of this stream's current position, so a replayed
    /// sample splits off the same streams. Radiative backpropagation draws its independent
    /// radiance estimates from such streams. The new stream is independent (not stratified).
    pub fn split(&self) -> SampleStream {
        let [a, b, c, d] = self.rng.words();
        // The state encrypted in CBC mode (a bijection of states) under a key of its own, which
        // keeps the new state apart from those that seeding or another split produces.
        let first = tea(a, b, SPLIT_KEY, TEA_ROUNDS);
        let second = tea(c ^ first.0, d ^ first.1, SPLIT_KEY, TEA_ROUNDS);
        SampleStream { rng: Xoshiro128::from_words([first.0, first.1, second.0, second.1]), strata: None }
    }

    /// An independent stream's generator state ([`Xoshiro128::words`]). Compiled kernels draw
    /// from such words with the same steps (drs-render's `streams.rs`); `None` for a stratified
    /// stream, which only the host draws from.
    pub fn words(&self) -> Option<[u32; 4]> {
        self.strata.is_none().then(|| self.rng.words())
    }

    /// The independent stream whose generator is in the state `words` (as
    /// [`words`](Self::words) gives them): it yields what the stream those words came from
    /// would have yielded next.
    pub fn from_words(words: [u32; 4]) -> SampleStream {
        SampleStream { rng: Xoshiro128::from_words(words), strata: None }
    }

    /// The next uniform point in `[0, 1)²`.
    #[inline]
    pub fn next_2d(&mut self) -> [f32; 2] {
        match &mut self.strata {
            None => [self.rng.next_f32(), self.rng.next_f32()],
            Some(strata) => strata.next_2d(&mut self.rng),
        }
    }
}

impl Strata {
    #[inline(never)]
    fn next_1d(&mut self, rng: &mut Xoshiro128) -> f32 {
        let stratum = permute(self.sample, self.count, self.next_permutation_seed());
        point_in_stratum(stratum, self.count, jitter_units(rng, self.jitter))
    }

    #[inline(never)]
    fn next_2d(&mut self, rng: &mut Xoshiro128) -> [f32; 2] {
        let cell = permute(self.sample, self.count, self.next_permutation_seed());
        let resolution = self.resolution;
        let jitter_x = jitter_units(rng, self.jitter);
        let jitter_y = jitter_units(rng, self.jitter);
        [
            point_in_stratum(cell % resolution, resolution, jitter_x),
            point_in_stratum(cell / resolution, resolution, jitter_y),
        ]
    }

    fn next_permutation_seed(&mut self) -> u32 {
        let seed = tea(self.permutation_seed, self.dimension, DIMENSION_KEY, TEA_ROUNDS).0;
        self.dimension = self.dimension.wrapping_add(1);
        seed
    }
}

/// The offset inside a stratum in units of 2^-24: uniform, or the centre without jitter.
fn jitter_units(rng: &mut Xoshiro128, jitter: bool) -> u32 {
    if jitter {
        rng.next_u32() >> 8
    } else {
        1 << 23
    }
}

/// `(stratum + jitter · 2^-24) / count`, rounded down to an f32 so that the value never reaches
/// the next stratum (or 1): rounding to nearest could land exactly on `(stratum + 1) / count`.
fn point_in_stratum(stratum: u32, count: u32, jitter_units: u32) -> f32 {
    let numerator = f64::from(stratum) + f64::from(jitter_units) * f64::from(F32_UNIT);
    let exact = numerator / f64::from(count);
    let rounded = exact as f32;
    if f64::from(rounded) > exact {
        rounded.next_down()
    } else {
        rounded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_stay_inside_their_stratum_at_both_edges() {
        let largest_jitter = (1 << 24) - 1;
        for count in 1..=300u32 {
            for stratum in 0..count {
                let low = point_in_stratum(stratum, count, 0);
                let high = point_in_stratum(stratum, count, largest_jitter);
                // Rounded down: never past the upper edge, at most one f32 step below the lower.
                assert!(f64::from(high) < f64::from(stratum + 1) / f64::from(count), "{stratum}/{count}");
                assert!(f64::from(low) <= f64::from(stratum) / f64::from(count));
                assert!(f64::from(low.next_up()) > f64::from(stratum) / f64::from(count));
                assert!(low <= high);
            }
        }
        // The case that plain f32 arithmetic gets wrong: (3 + (1 - 2^-24)) * 0.25 rounds to 1.
        const { assert!((3.0f32 + (1.0 - F32_UNIT)) * 0.25 == 1.0) };
        assert!(point_in_stratum(3, 4, largest_jitter) < 1.0);
    }

    #[test]
    fn permute_is_a_bijection_for_every_length_and_seed() {
        // Seeds near 2^32 make the memo's 32-bit `(i + seed) % length` wrap.
        let seeds = [0, 1, 2, 0x1234_5678, 0x8000_0000, u32::MAX - 2, u32::MAX - 1, u32::MAX];
        for length in 1..=130u32 {
            for seed in seeds {
                let mut seen = vec![false; length as usize];
                for index in 0..length {
                    let image = permute(index, length, seed);
                    assert!(image < length && !seen[image as usize], "length {length}, seed {seed:#x}");
                    seen[image as usize] = true;
                }
            }
        }
    }
}
