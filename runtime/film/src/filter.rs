//! Separable image reconstruction filters with Mitsuba 3's shapes and radii (`box`, `gaussian`,
//! `tent`). A sample at film position `p` contributes `f(x - p.x) * f(y - p.y)` to the pixel
//! whose centre is `(x, y)`; pixel `i` has its centre at `i + 0.5`.

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
}

impl Default for ReconstructionFilter {
    fn default() -> Self {
        ReconstructionFilter::gaussian(0.5).expect("0.5 is a valid standard deviation")
    }
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
