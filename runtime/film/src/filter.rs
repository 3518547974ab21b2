//! Separable image reconstruction filters with Mitsuba 3's shapes and radii (`box`, `gaussian`,
//! `tent`). A sample at film position `p` contributes `f(x - p.x) * f(y - p.y)` to the pixel
//! whose centre is `(x, y)`; pixel `i` has its centre at `i + 0.5`.

use wide::f32x4;

use crate::FilmError;

/// One of Mitsuba's `rfilter` plugins. Construct with [`box_filter`](Self::box_filter),
/// [`gaussian`](Self::gaussian) or [`tent`](Self::tent); the default is Mitsuba's default, a
/// Gaussian with standard deviation 0.5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconstructionFilter {
    shape: Shape,
    radius: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Box,
    /// `exp(-x²/(2σ²)) - exp(-r²/(2σ²))`, clamped at zero: a Gaussian cut off at `r = 4σ` and
    /// shifted down so that it reaches zero there (no step at the edge of the footprint).
    Gaussian {
        stddev: f32,
        /// `-1/(2σ²)`
        exponent_scale: f32,
        /// The Gaussian's value at the radius, subtracted everywhere.
        offset: f32,
    },
    Tent,
}

impl ReconstructionFilter {
    /// Mitsuba's `box`: 1 on `[-0.5, 0.5)`, radius 0.5. Every sample lands in exactly the pixel
    /// that contains it.
    pub fn box_filter() -> Self {
        ReconstructionFilter { shape: Shape::Box, radius: 0.5 }
    }

    /// Mitsuba's `gaussian` with the given standard deviation (`stddev`, Mitsuba's default 0.5);
    /// the radius is `4 * stddev`.
    pub fn gaussian(stddev: f32) -> Result<Self, FilmError> {
        let radius = 4.0 * stddev;
        check_parameter("gaussian", "stddev", stddev, radius)?;
        let exponent_scale = -1.0 / (2.0 * stddev * stddev);
        let offset = (exponent_scale * radius * radius).exp();
        Ok(ReconstructionFilter { shape: Shape::Gaussian { stddev, exponent_scale, offset }, radius })
    }

    /// Mitsuba's `tent`: `max(0, 1 - |x| / radius)` (Mitsuba's default radius is 1).
    pub fn tent(radius: f32) -> Result<Self, FilmError> {
        check_parameter("tent", "radius", radius, radius)?;
        Ok(ReconstructionFilter { shape: Shape::Tent, radius })
    }

    /// The plugin name in a Mitsuba scene (`box`, `gaussian`, `tent`).
    pub fn name(&self) -> &'static str {
        match self.shape {
            Shape::Box => "box",
            Shape::Gaussian { .. } => "gaussian",
            Shape::Tent => "tent",
        }
    }

    /// Half the width of the filter's support: `eval(x) == 0` for `|x| >= radius`.
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// The Gaussian's standard deviation, `None` for the other filters.
    pub fn stddev(&self) -> Option<f32> {
        match self.shape {
            Shape::Gaussian { stddev, .. } => Some(stddev),
            _ => None,
        }
    }

    /// Whether this is the box filter, which splats into a single pixel without a border.
    pub fn is_box(&self) -> bool {
        self.shape == Shape::Box
    }

    /// How many pixels beyond a tile's edge the samples inside the tile can reach: pixel `-k`
    /// has its centre `k - 0.5` away from the tile's edge, so it is reached when `k - 0.5 < r`.
    /// (Mitsuba's `ceil(r - 0.5 - ε)`; zero for the box filter.)
    pub fn border_size(&self) -> u32 {
        if self.is_box() {
            return 0;
        }
        (self.radius + 0.5).ceil() as u32 - 1
    }

    /// The filter's value at offset `x` (in pixels) from the sample. Not normalised: the film
    /// divides every pixel by its accumulated weight.
    pub fn eval(&self, x: f32) -> f32 {
        match self.shape {
            Shape::Box => {
                if (-0.5..0.5).contains(&x) {
                    1.0
                } else {
                    0.0
                }
            }
            Shape::Gaussian { exponent_scale, offset, .. } => ((exponent_scale * x * x).exp() - offset).max(0.0),
            Shape::Tent => (1.0 - (x / self.radius).abs()).max(0.0),
        }
    }

    /// The filter's values at the pixels `first, first + 1, ..., first + count - 1` for a sample
    /// at `centre` (in the coordinates of the pixel indices), in `weights[..count]`:
    /// `eval((first + i) as f32 - centre)`, except that the Gaussian's exponentials are computed
    /// four at a time by a bounded approximation, which may differ from `eval`'s in the last
    /// bits. Splatting and its transpose ([`crate::SumsAdjoint::gather`]) both weigh with this,
    /// so they stay each other's adjoint.
    ///
    /// Whole groups of four are stored, so `weights` must hold `count` rounded up to a multiple
    /// of four; what lies past `count` is left undefined. (Storing only the `count` values
    /// called the C library's `memcpy` for the last group, about 0.6% of a render.)
    ///
    /// # Panics
    /// If `weights` is shorter than that (a programming error).
    #[inline]
    pub fn eval_pixels(&self, first: usize, centre: f32, count: usize, weights: &mut [f32]) {
        let weights = &mut weights[..count.next_multiple_of(4)];
        match self.shape {
            Shape::Gaussian { exponent_scale, offset, .. } => {
                let steps = f32x4::from([0.0, 1.0, 2.0, 3.0]);
                let (chunks, _) = weights.as_chunks_mut::<4>();
                for (chunk, start) in chunks.iter_mut().zip((first..).step_by(4)) {
                    // Integers below 2^24 are exact in f32, so the offsets equal `eval`'s.
                    let x = (f32x4::splat(start as f32) + steps) - f32x4::splat(centre);
                    let gaussian = exp_nonpositive(f32x4::splat(exponent_scale) * x * x);
                    *chunk = (gaussian - f32x4::splat(offset)).max(f32x4::ZERO).to_array();
                }
            }
            Shape::Box | Shape::Tent => {
                for (weight, pixel) in weights[..count].iter_mut().zip(first..) {
                    *weight = self.eval(pixel as f32 - centre);
                }
            }
        }
    }
}

impl Default for ReconstructionFilter {
    fn default() -> Self {
        ReconstructionFilter::gaussian(0.5).expect("0.5 is a valid standard deviation")
    }
}

/// `exp(y)` for `y <= 0`, four at a time, to about one unit in the last place (arguments below
/// -87 give `exp(-87)`, far below every Gaussian window offset: inside the footprint the
/// argument `-x²/(2σ²)` is at least -8). Without positive arguments it needs none of a general
/// exponential's range checks, and it rounds with the float-addition trick instead of a
/// rounding instruction, which baseline x86-64 lacks.
fn exp_nonpositive(y: f32x4) -> f32x4 {
    // exp(y) = 2^n · exp(r) with n = round(y / ln 2) and |r| <= ln 2 / 2.
    const ROUNDING: f32 = 12_582_912.0; // 1.5 · 2^23: adding it rounds to an integer.
    const LN2_HIGH: f32 = 355.0 / 512.0; // ln 2 split so that n · LN2_HIGH is exact for |n| < 2^9
    const LN2_LOW: f32 = -2.121_944_4e-4;
    let y = y.fast_max(f32x4::splat(-87.0)).fast_min(f32x4::ZERO);
    let shifted = y * f32x4::splat(std::f32::consts::LOG2_E) + f32x4::splat(ROUNDING);
    let n = shifted - f32x4::splat(ROUNDING);
    let r = y - n * f32x4::splat(LN2_HIGH) - n * f32x4::splat(LN2_LOW);
    // Taylor series of exp(r) to r^7 (error below 2^-26 for |r| <= ln 2 / 2) by Estrin's
    // scheme: pairs of terms, then pairs of pairs, three multiply-adds deep instead of
    // Horner's seven (the film splats every sample with two of these; the chain's latency
    // showed in time profiles, not in instruction counts).
    let c = |x: f32| f32x4::splat(x);
    let r2 = r * r;
    let r4 = r2 * r2;
    let low = (c(1.0) + r) + r2 * (c(0.5) + r * c(1.0 / 6.0));
    let high = (c(1.0 / 24.0) + r * c(1.0 / 120.0)) + r2 * (c(1.0 / 720.0) + r * c(1.0 / 5040.0));
    let p = low + r4 * high;
    // 2^n as an exponent field: `shifted`'s bits are those of 1.5 · 2^23 plus n.
    let n_bits: wide::i32x4 = bytemuck::cast::<f32x4, wide::i32x4>(shifted) - wide::i32x4::splat(0x4B40_0000);
    p * bytemuck::cast::<wide::i32x4, f32x4>((n_bits + wide::i32x4::splat(127)) << 23)
}

/// The largest filter radius accepted, in pixels. Mitsuba sets none, but a block carries a
/// border of about this many pixels on each side, so an absurd radius would exhaust memory.
pub const MAX_FILTER_RADIUS: f32 = 64.0;

fn check_parameter(filter: &'static str, parameter: &'static str, value: f32, radius: f32) -> Result<(), FilmError> {
    if value > 0.0 && radius <= MAX_FILTER_RADIUS {
        Ok(())
    } else {
        Err(FilmError::InvalidFilterParameter { filter, parameter, value })
    }
}

#[cfg(test)]
mod tests {
    use super::exp_nonpositive;
    use wide::f32x4;

    /// Within two units in the last place of exp over the whole range it is used on, exactly 1
    /// at 0, and clamped below -87.
    #[test]
    fn exp_nonpositive_is_accurate() {
        let mut worst = 0.0f64;
        for i in 0..=200_000 {
            let y = -87.0 * i as f32 / 200_000.0;
            let got = exp_nonpositive(f32x4::splat(y)).to_array()[0];
            let exact = f64::from(y).exp();
            worst = worst.max((f64::from(got) - exact).abs() / exact);
        }
        assert!(worst <= 2.0 * f64::from(f32::EPSILON), "relative error {worst:e}");
        assert_eq!(exp_nonpositive(f32x4::splat(0.0)).to_array(), [1.0; 4]);
        let clamped = exp_nonpositive(f32x4::from([-100.0, -1e30, f32::NEG_INFINITY, -87.0])).to_array();
        assert!(clamped.iter().all(|&v| v == clamped[3] && v > 0.0), "{clamped:?}");
    }
}
