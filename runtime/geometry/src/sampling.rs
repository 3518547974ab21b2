//! What area sampling of shapes needs: a discrete distribution (to pick a triangle by area)
//! and the warps from the unit square to triangles, disks and spheres (Mitsuba `core/warp.h`,
//! Shirley and Chiu 1997 for the concentric disk).

use std::f32::consts::{FRAC_PI_4, PI};

use crate::math::{Vec2, Vec3};

/// A position sampled uniformly by area on a shape (Mitsuba `PositionSample3f`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionSample {
    pub p: Vec3,
    /// Unit normal at `p` (the shading normal of meshes with vertex normals, like Mitsuba).
    pub n: Vec3,
    pub uv: Vec2,
    /// Density with respect to area: `1 / surface_area`, or 0 when the shape has no area.
    pub pdf: f32,
}

/// The [`PositionSample`]s of `L` lanes, each field a column per coordinate
/// (`p[axis][lane]`), as a kernel's lane group reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionSamples<const L: usize> {
    pub p: [[f32; L]; 3],
    pub n: [[f32; L]; 3],
    pub uv: [[f32; L]; 2],
    pub pdf: [f32; L],
}

impl<const L: usize> PositionSamples<L> {
    /// Zeros in every lane (a zero density: no sample).
    pub const ZERO: Self = PositionSamples { p: [[0.0; L]; 3], n: [[0.0; L]; 3], uv: [[0.0; L]; 2], pdf: [0.0; L] };

    /// Lane `lane`'s sample.
    pub fn lane(&self, lane: usize) -> PositionSample {
        let vec3 = |c: &[[f32; L]; 3]| Vec3::new(c[0][lane], c[1][lane], c[2][lane]);
        PositionSample {
            p: vec3(&self.p),
            n: vec3(&self.n),
            uv: Vec2::new(self.uv[0][lane], self.uv[1][lane]),
            pdf: self.pdf[lane],
        }
    }

    /// Makes `sample` lane `lane`'s.
    pub fn set_lane(&mut self, lane: usize, sample: &PositionSample) {
        for axis in 0..3 {
            self.p[axis][lane] = sample.p[axis];
            self.n[axis][lane] = sample.n[axis];
        }
        (self.uv[0][lane], self.uv[1][lane]) = (sample.uv.x, sample.uv.y);
        self.pdf[lane] = sample.pdf;
    }

    /// The [`PositionSample`]s that `sample` draws from the points `(u[lane], v[lane])` of the
    /// lanes in the bit mask `lanes`; other lanes hold zeros.
    pub(crate) fn by_lane(u: &[f32; L], v: &[f32; L], lanes: u32, sample: impl Fn(Vec2) -> PositionSample) -> Self {
        let mut out = PositionSamples::ZERO;
        for lane in (0..L).filter(|&lane| lanes & (1 << lane) != 0) {
            out.set_lane(lane, &sample(Vec2::new(u[lane], v[lane])));
        }
        out
    }
}

/// A distribution over `0..n` proportional to non-negative weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiscreteDistribution {
    /// Running sums of the weights (accumulated in f64); `cdf[i]` includes weight `i`.
    cdf: Vec<f32>,
    total: f64,
}

impl DiscreteDistribution {
    /// Negative or non-finite weights count as 0.
    pub fn new(weights: impl IntoIterator<Item = f32>) -> DiscreteDistribution {
        let mut total = 0.0f64;
        let cdf = weights
            .into_iter()
            .map(|w| {
                if w.is_finite() && w > 0.0 {
                    total += w as f64;
                }
                total as f32
            })
            .collect();
        DiscreteDistribution { cdf, total }
    }

    pub fn len(&self) -> usize {
        self.cdf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cdf.is_empty()
    }

    /// Sum of the weights.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Probability of index `i` (0 out of range).
    pub fn pmf(&self, i: usize) -> f32 {
        if self.total == 0.0 || i >= self.cdf.len() {
            return 0.0;
        }
        let below = if i == 0 { 0.0 } else { self.cdf[i - 1] };
        ((self.cdf[i] - below) as f64 / self.total) as f32
    }

    /// An index drawn with `u` in `[0, 1)`, and `u` rescaled to `[0, 1)` within that index's
    /// interval so that it can be reused (Mitsuba `sample_reuse`). `None` when all weights are
    /// zero.
    pub fn sample_reuse(&self, u: f32) -> Option<(usize, f32)> {
        if self.total == 0.0 {
            return None;
        }
        let target = (u.clamp(0.0, 1.0) as f64 * self.total) as f32;
        // The first index whose running sum exceeds the target. Only u = 1 or rounding can find
        // none: then take the last index with a positive weight.
        let last = self.cdf.len() - 1;
        let mut index = self.cdf.partition_point(|&c| c <= target).min(last);
        while index > 0 && self.cdf[index] == self.cdf[index - 1] {
            index -= 1;
        }
        let below = if index == 0 { 0.0 } else { self.cdf[index - 1] };
        let width = self.cdf[index] - below;
        let reused = if width > 0.0 { (target - below) / width } else { 0.0 };
        Some((index, reused.clamp(0.0, ONE_MINUS_EPSILON)))
    }
}

/// The largest f32 below 1.
const ONE_MINUS_EPSILON: f32 = 1.0 - f32::EPSILON / 2.0;

/// Barycentrics `(b1, b2)` uniform on the triangle (Mitsuba `square_to_uniform_triangle`).
pub fn square_to_uniform_triangle(sample: Vec2) -> Vec2 {
    let t = (1.0 - sample.x).max(0.0).sqrt();
    Vec2::new(1.0 - t, t * sample.y)
}

/// A point uniform on the unit disk by Shirley and Chiu's concentric map.
pub fn square_to_uniform_disk_concentric(sample: Vec2) -> Vec2 {
    let x = 2.0 * sample.x - 1.0;
    let y = 2.0 * sample.y - 1.0;
    if x == 0.0 && y == 0.0 {
        return Vec2::ZERO;
    }
    let (r, phi) =
        if x.abs() > y.abs() { (x, FRAC_PI_4 * (y / x)) } else { (y, 2.0 * FRAC_PI_4 - FRAC_PI_4 * (x / y)) };
    let (sin, cos) = phi.sin_cos();
    Vec2::new(r * cos, r * sin)
}

/// A direction uniform on the unit sphere (z uniform in [-1, 1], azimuth uniform).
pub fn square_to_uniform_sphere(sample: Vec2) -> Vec3 {
    let z = 1.0 - 2.0 * sample.y;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let (sin, cos) = (2.0 * PI * sample.x).sin_cos();
    Vec3::new(r * cos, r * sin, z)
}
