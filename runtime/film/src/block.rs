//! `ImageBlock`: the private accumulation buffer of one tile, with a border wide enough for the
//! reconstruction filter, into which samples are splatted the way Mitsuba 3 does.

use std::ops::Range;

use wide::{f32x4, i32x4};

use crate::{ReconstructionFilter, Tile, MAX_FILTER_RADIUS};

/// Position of the weight channel in a stored pixel: R, G, B, W, then the AOVs.
pub(crate) const WEIGHT_CHANNEL: usize = 3;
/// Channels stored before the AOVs.
pub(crate) const BASE_CHANNELS: usize = 4;

/// Weighted sums of samples for one tile plus `border` pixels on every side. Each stored pixel
/// holds `Σ w·R, Σ w·G, Σ w·B, Σ w·weight, Σ w·aov...` where `w` is the filter weight of the
/// sample at that pixel; the film divides by the weight sum when it develops.
#[derive(Clone, Debug)]
pub struct ImageBlock {
    tile: Tile,
    border: u32,
    filter: ReconstructionFilter,
    aov_count: usize,
    normalize: bool,
    data: Vec<f32>,
    // Scratch space for one sample's filter weights along x and y ([`WEIGHTS_LEN`] each), kept
    // to avoid allocating.
    weights_x: Vec<f32>,
    weights_y: Vec<f32>,
}

impl ImageBlock {
    /// An empty block for `tile` (in film pixels) whose samples carry `aov_count` extra channels.
    pub fn new(tile: Tile, filter: ReconstructionFilter, aov_count: usize) -> Self {
        let border = filter.border_size();
        let stored_pixels = (tile.width + 2 * border) as usize * (tile.height + 2 * border) as usize;
        ImageBlock {
            tile,
            border,
            filter,
            aov_count,
            normalize: false,
            data: vec![0.0; stored_pixels * (BASE_CHANNELS + aov_count)],
            weights_x: vec![0.0; WEIGHTS_LEN],
            weights_y: vec![0.0; WEIGHTS_LEN],
        }
    }

    /// The tile this block accumulates (its border lies around it).
    pub fn tile(&self) -> Tile {
        self.tile
    }

    /// Pixels stored beyond each edge of the tile for the filter's footprint.
    pub fn border(&self) -> u32 {
        self.border
    }

    pub fn filter(&self) -> &ReconstructionFilter {
        &self.filter
    }

    pub fn aov_count(&self) -> usize {
        self.aov_count
    }

    /// Values stored per pixel: R, G, B, W and the AOVs.
    pub fn channel_count(&self) -> usize {
        BASE_CHANNELS + self.aov_count
    }

    /// Width and height of the stored area: the tile plus its border on both sides.
    pub fn stored_size(&self) -> (u32, u32) {
        (self.tile.width + 2 * self.border, self.tile.height + 2 * self.border)
    }

    /// The accumulated sums, row by row over the stored area (stored pixel `(0, 0)` is film
    /// pixel `(tile.x - border, tile.y - border)`), `channel_count()` values per pixel in the
    /// order R, G, B, W, AOVs.
    pub fn raw(&self) -> &[f32] {
        &self.data
    }

    /// Mitsuba's `normalize` option: scale each sample's filter weights so that they sum to one
    /// over its whole footprint (also the part outside the block), as needed when splatting
    /// with weight 0, e.g. particle-tracer style contributions whose total must be preserved.
    pub fn set_normalize(&mut self, normalize: bool) {
        self.normalize = normalize;
    }

    /// Resets every sum to zero.
    pub fn clear(&mut self) {
        self.data.fill(0.0);
    }

    /// Splats a sample of radiance `rgb` (and `aovs`, one value per AOV channel) at continuous
    /// film position `pos` (pixel `(x, y)` covers `[x, x + 1) x [y, y + 1)`) with weight 1.
    pub fn put(&mut self, pos: [f32; 2], rgb: [f32; 3], aovs: &[f32]) {
        self.put_weighted(pos, rgb, aovs, 1.0);
    }

    /// Like [`put`](Self::put), but the weight channel receives `weight` times the filter weight
    /// instead of the filter weight. A non-finite position is ignored; parts of the footprint
    /// outside the stored area are dropped.
    ///
    /// # Panics
    /// If `aovs` does not have one value per AOV channel of the block (a programming error).
    pub fn put_weighted(&mut self, pos: [f32; 2], rgb: [f32; 3], aovs: &[f32], weight: f32) {
        assert_eq!(aovs.len(), self.aov_count, "ImageBlock::put: wrong number of AOV values");
        if !(pos[0].is_finite() && pos[1].is_finite()) {
            return;
        }
        let (stored_width, stored_height) = self.stored_size();
        if self.filter.is_box() {
            // The box filter covers exactly the pixel that contains the sample.
            let x = floor_to_i64(pos[0]) - i64::from(self.tile.x);
            let y = floor_to_i64(pos[1]) - i64::from(self.tile.y);
            if (0..i64::from(stored_width)).contains(&x) && (0..i64::from(stored_height)).contains(&y) {
                self.accumulate(y as usize * stored_width as usize + x as usize, rgb, aovs, weight, 1.0);
            }
            return;
        }

        // Stored coordinates in which stored pixel i has its centre at i.
        let border = self.border as f32;
        let centre_x = pos[0] - self.tile.x as f32 + border - 0.5;
        let centre_y = pos[1] - self.tile.y as f32 + border - 0.5;
        let radius = self.filter.radius();
        let Some((columns, rows)) = footprints([centre_x, centre_y], radius, [stored_width, stored_height]) else {
            return;
        };

        let filter = self.filter;
        let mut weights_x = std::mem::take(&mut self.weights_x);
        let mut weights_y = std::mem::take(&mut self.weights_y);
        filter.eval_pixels(columns.start, centre_x, columns.len(), &mut weights_x);
        filter.eval_pixels(rows.start, centre_y, rows.len(), &mut weights_y);

        let scale = if self.normalize {
            let total = footprint_weight(&filter, centre_x) * footprint_weight(&filter, centre_y);
            if total > 0.0 {
                1.0 / total
            } else {
                0.0
            }
        } else {
            1.0
        };
        if scale != 0.0 && self.aov_count == 0 {
            // The usual case: four channels per pixel, so a footprint row is a slice of
            // `[f32; 4]` that is bounds-checked once, and each pixel is one vector update.
            // (Written with plain arrays, the compiler vectorised across four pixels instead,
            // transposing their channels in and out: twice the instructions.)
            let (pixels, _) = self.data.as_chunks_mut::<BASE_CHANNELS>();
            let values = f32x4::from([rgb[0], rgb[1], rgb[2], weight]);
            for (y, &weight_y) in rows.zip(&weights_y) {
                let start = y * stored_width as usize;
                let row = &mut pixels[start + columns.start..start + columns.end];
                for (pixel, &weight_x) in row.iter_mut().zip(&weights_x) {
                    let filter_weight = weight_x * scale * weight_y;
                    *pixel = (f32x4::from(*pixel) + values * f32x4::splat(filter_weight)).to_array();
                }
            }
        } else if scale != 0.0 {
            for (y, &weight_y) in rows.zip(&weights_y) {
                for (x, &weight_x) in columns.clone().zip(&weights_x) {
                    let filter_weight = weight_x * scale * weight_y;
                    self.accumulate(y * stored_width as usize + x, rgb, aovs, weight, filter_weight);
                }
            }
        }
        self.weights_x = weights_x;
        self.weights_y = weights_y;
    }

    /// Adds a sample's values times `filter_weight` to stored pixel number `pixel` (row-major).
    fn accumulate(&mut self, pixel: usize, rgb: [f32; 3], aovs: &[f32], weight: f32, filter_weight: f32) {
        let channels = self.channel_count();
        let start = pixel * channels;
        let pixel = &mut self.data[start..start + channels];
        let (base, aov_sums) = pixel.split_at_mut(BASE_CHANNELS);
        for (sum, value) in base.iter_mut().zip([rgb[0], rgb[1], rgb[2], weight]) {
            *sum += value * filter_weight;
        }
        for (sum, value) in aov_sums.iter_mut().zip(aovs) {
            *sum += value * filter_weight;
        }
    }
}

/// Along x and y, the stored pixels `first..=last` whose centres lie within `radius` of
/// `centre` (Mitsuba's `ceil(c - r) ..= floor(c + r)`), clipped to `0..extent`; `None` when
/// either is empty. Extents beyond 2^24, where f32 positions no longer tell pixels apart, count
/// as 2^24.
///
/// Both axes' four rounding steps run as one vector of four: done one at a time with
/// saturating conversions to i64, they took about 130 instructions per sample.
fn footprints(centre: [f32; 2], radius: f32, extent: [u32; 2]) -> Option<(Range<usize>, Range<usize>)> {
    let [width, height] = extent.map(|e| e.min(1 << 24) as f32);
    // Clamped to [-1, extent] first, the ends convert to i32 exactly, and no answer changes:
    // below -1 the first pixel is 0 and the last is before it; above the extent, the first is
    // past the last stored one. (`centre` is finite.)
    let [x, y] = centre;
    let ends = f32x4::from([x - radius, y - radius, x + radius, y + radius])
        .fast_max(f32x4::splat(-1.0))
        .fast_min(f32x4::from([width, height, width, height]));
    let truncated = ends.fast_trunc_int();
    let back = truncated.round_float();
    // Ceiling for the first two lanes, floor for the last two: comparison masks are -1 where
    // the truncation has to move up (ceiling) or down (floor).
    let up: i32x4 = bytemuck::cast(back.simd_lt(ends));
    let down: i32x4 = bytemuck::cast(back.simd_gt(ends));
    let [first_x, first_y, last_x, last_y] =
        (truncated - (up & i32x4::from([-1, -1, 0, 0])) + (down & i32x4::from([0, 0, -1, -1]))).to_array();
    let axis = |first: i32, last: i32, extent: u32| {
        let (first, last) = (first.max(0) as i64, i64::from(last).min(i64::from(extent) - 1));
        (first <= last).then(|| first as usize..last as usize + 1)
    };
    Some((axis(first_x, last_x, extent[0])?, axis(first_y, last_y, extent[1])?))
}

/// `x.floor() as i64` without a call of the C library's `floorf`, which baseline x86-64 (no
/// rounding instruction) makes of `f32::floor`: the conversion rounds toward zero, so step down
/// where it rounded up. Beyond the range of i64 it saturates as the cast does.
fn floor_to_i64(x: f32) -> i64 {
    let truncated = x as i64;
    truncated.saturating_sub(i64::from(truncated as f32 > x))
}

/// The sum of the filter's weights over every pixel centre within its radius of `centre`,
/// whether stored or not.
fn footprint_weight(filter: &ReconstructionFilter, centre: f32) -> f32 {
    let radius = filter.radius();
    let first = (centre - radius).ceil();
    let count = ((centre + radius).floor() - first) as i64 + 1;
    (0..count.max(0)).map(|i| filter.eval(first + i as f32 - centre)).sum()
}

/// The most pixels a filter footprint spans along one axis.
const MAX_FOOTPRINT: usize = 2 * MAX_FILTER_RADIUS as usize + 1;
/// The length of a footprint's weights: [`ReconstructionFilter::eval_pixels`] writes groups of
/// four.
const WEIGHTS_LEN: usize = MAX_FOOTPRINT.next_multiple_of(4);

/// The adjoint of a film's weighted sums, given the adjoint of its developed image: each
/// pixel's RGB adjoint times the reciprocal of the pixel's weight sum (zero where that sum is
/// zero), the transpose of [`Film::develop`](crate::Film::develop)'s division. Made by
/// [`Film::sums_adjoint`](crate::Film::sums_adjoint); the reverse pass gathers it once per
/// sample. A pixel is four floats (the fourth zero), read and added with one vector
/// operation.
#[derive(Clone, Debug)]
pub struct SumsAdjoint {
    width: u32,
    height: u32,
    filter: ReconstructionFilter,
    pixels: Vec<f32x4>,
}

impl SumsAdjoint {
    pub(crate) fn new(width: u32, height: u32, filter: ReconstructionFilter, pixels: Vec<f32x4>) -> SumsAdjoint {
        debug_assert_eq!(pixels.len(), width as usize * height as usize);
        SumsAdjoint { width, height, filter, pixels }
    }

    /// The transpose of splatting a sample at `pos` (ignoring a block's clipping, within the
    /// film): the sum over the pixels in its filter footprint of the adjoint times the filter
    /// weight, which is the adjoint of the sample's radiance (the weights do not depend on it).
    pub fn gather(&self, pos: [f32; 2]) -> [f32; 3] {
        let [r, g, b, _] = self.footprint_sum(pos).to_array();
        [r, g, b]
    }

    /// [`gather`](Self::gather)'s sum as a pixel: RGB, then zero.
    fn footprint_sum(&self, pos: [f32; 2]) -> f32x4 {
        let mut sum = f32x4::ZERO;
        if !(pos[0].is_finite() && pos[1].is_finite()) {
            return sum;
        }
        let (width, height) = (self.width, self.height);
        if self.filter.is_box() {
            let (x, y) = (floor_to_i64(pos[0]), floor_to_i64(pos[1]));
            if (0..i64::from(width)).contains(&x) && (0..i64::from(height)).contains(&y) {
                sum += self.pixels[y as usize * width as usize + x as usize];
            }
            return sum;
        }
        let (centre_x, centre_y) = (pos[0] - 0.5, pos[1] - 0.5);
        let Some((columns, rows)) = footprints([centre_x, centre_y], self.filter.radius(), [width, height]) else {
            return sum;
        };
        // The filter is separable: evaluate it once per column, not once per pixel. A footprint
        // spans at most 2r + 1 pixels, so the weights fit on the stack (no allocation per sample).
        let mut weights_x = [0.0f32; WEIGHTS_LEN];
        let mut weights_y = [0.0f32; WEIGHTS_LEN];
        self.filter.eval_pixels(columns.start, centre_x, columns.len(), &mut weights_x);
        self.filter.eval_pixels(rows.start, centre_y, rows.len(), &mut weights_y);
        for (y, &weight_y) in rows.zip(&weights_y) {
            let row = &self.pixels[y * width as usize..][columns.clone()];
            for (pixel, &weight_x) in row.iter().zip(&weights_x) {
                sum += *pixel * f32x4::splat(weight_x * weight_y);
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use wide::f32x4;

    use super::{floor_to_i64, footprints, SumsAdjoint, MAX_FOOTPRINT};
    use crate::{ReconstructionFilter, MAX_FILTER_RADIUS};

    /// `footprints` equals Mitsuba's `ceil(c - r) ..= floor(c + r)` clipped to the extent, on
    /// centres on and between pixel centres, inside, at the edges of and far outside the block.
    #[test]
    fn footprints_are_the_clipped_closed_intervals() {
        let axis = |centre: f32, radius: f32, extent: u32| {
            let first = ((centre - radius).ceil() as i64).max(0);
            let last = ((centre + radius).floor() as i64).min(i64::from(extent) - 1);
            (first <= last).then(|| first as usize..last as usize + 1)
        };
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let (mut empty, mut clipped) = (0, 0);
        for case in 0..100_000 {
            let extent = [[1, 1], [3, 12], [12, 3], [40, 40], [70_000, 2]][case % 5];
            let radius = [0.5, 1.0, 1.5, 2.0, 2.5, MAX_FILTER_RADIUS][case / 5 % 6];
            let centre = [0, 1].map(|a| {
                // From 3r before the first pixel to 3r past the last.
                let c = uniform() * (extent[a] as f32 + 6.0 * radius) - 3.0 * radius;
                // A third of the centres at pixel centres or halfway between, where the
                // interval ends are integers.
                match case % 3 {
                    0 => c.round(),
                    1 => (c * 2.0).round() / 2.0,
                    _ => c,
                }
            });
            let expected = axis(centre[0], radius, extent[0]).zip(axis(centre[1], radius, extent[1]));
            assert_eq!(footprints(centre, radius, extent), expected, "{centre:?} {radius} {extent:?}");
            empty += expected.is_none() as usize;
            clipped += expected.is_some_and(|(x, _)| x.len() < (2.0 * radius) as usize) as usize;
        }
        assert!(empty > 5_000 && clipped > 5_000, "{empty} empty, {clipped} clipped");
    }

    /// With the widest filter accepted, a footprint spans `MAX_FOOTPRINT` columns and `gather`
    /// sums all of them, as a direct sum over the image does.
    #[test]
    fn gather_covers_the_widest_footprint() {
        let (width, height) = (MAX_FOOTPRINT as u32 + 10, 3);
        let widest = [
            ReconstructionFilter::gaussian(MAX_FILTER_RADIUS / 4.0).unwrap(),
            ReconstructionFilter::tent(MAX_FILTER_RADIUS).unwrap(),
        ];
        // Pixel centres fall on integers after the half-pixel shift, so the closed footprint
        // reaches its largest width.
        for filter in widest {
            let pos = [70.5, 1.5];
            let columns = (0..width).filter(|&x| (x as f32 - 70.0).abs() <= MAX_FILTER_RADIUS).count();
            assert_eq!(columns, MAX_FOOTPRINT);
            let expected: f32 = (0..height)
                .flat_map(|y| (0..width).map(move |x| (x, y)))
                .map(|(x, y)| filter.eval(x as f32 - 70.0) * filter.eval(y as f32 - 1.0))
                .sum();
            let ones = vec![f32x4::from([1.0, 1.0, 1.0, 0.0]); (width * height) as usize];
            let got = SumsAdjoint::new(width, height, filter, ones).gather(pos);
            for channel in got {
                assert!((channel - expected).abs() <= 1e-4 * expected, "{channel} against {expected}");
            }
        }
    }

    /// The footprint's rounding agrees with `floor` / `ceil` and a saturating cast everywhere:
    /// at integers, just beside them, past 2^23 (where every f32 is an integer) and past i64.
    #[test]
    fn rounding_matches_the_standard_library() {
        let mut values = vec![0.0, -0.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e30, -1e30, f32::MAX, f32::MIN];
        for i in -70..70 {
            let x = i as f32 * 0.25;
            values.extend([x, x.next_up(), x.next_down()]);
        }
        for e in [22, 23, 24, 62, 63, 64] {
            let x = (e as f32).exp2();
            values.extend([x, x.next_up(), x.next_down(), -x, (-x).next_up(), (-x).next_down()]);
        }
        for x in values {
            assert_eq!(floor_to_i64(x), x.floor() as i64, "floor of {x:e}");
        }
    }
}
