//! Derived `Tensor` params (`@derived`, spec/plugins.md § Derived tensors) that the runtime
//! computes from another `Tensor` param of the same instance, when the scene is built and
//! again whenever that source changes (as Mitsuba's plugins rebuild their sampling warps when
//! their parameters change). Tables of a plugin method (`tabulate`, `mean`) are computed by
//! kernels (`tabulate.rs`).

use std::f64::consts::PI;

use drs_sema::program::{Derivation, RowWeight};

use crate::params::TensorValue;

/// The weights of Rec. 709 luminance (stdlib/color.drs `luminance`).
const LUMINANCE: [f64; 3] = [0.212671, 0.715160, 0.072169];

/// The derived tensor computed from its source's value.
pub fn derive(derivation: &Derivation, source: &TensorValue) -> Result<TensorValue, String> {
    match derivation {
        Derivation::Distribution2d { rows, mis_compensated, .. } => distribution_2d(source, *rows, *mis_compensated),
        Derivation::Tabulate { method, .. } => {
            Err(format!("a table of `{method}` is computed by the scene's kernels, not from a tensor"))
        }
    }
}

/// The sampling table of the discrete distribution over the texels of an image of h rows and
/// w columns, texel (y, x) weighted by its luminance (its value for fewer than 3 channels;
/// negative and non-finite values count as 0) times the row weight. A list of
/// h * (w + 1) + h + 1 values: for each row its conditional CDF over x (w + 1 values from 0
/// to 1; uniform for a row that weighs nothing), then the marginal CDF over rows (h + 1
/// values from 0 to 1; uniform if the whole image weighs nothing). The probability of texel
/// (y, x) is (m[y + 1] - m[y]) (c_y[x + 1] - c_y[x]).
///
/// `mis_compensated` subtracts the mean luminance from every texel's (weights below it become
/// 0), which sends fewer samples where another technique combined by MIS does well ("MIS
/// Compensation", Karlík et al. 2019, as Mitsuba's `envmap` offers it); like Mitsuba, it is
/// left out when the mean is within 1% of the minimum (a nearly constant image).
fn distribution_2d(source: &TensorValue, rows: RowWeight, mis_compensated: bool) -> Result<TensorValue, String> {
    let [h, w, channels] = source.shape().map(|d| d as usize);
    if rows == RowWeight::SinTheta && h < 2 {
        return Err(format!(
            "a latitude-longitude map needs at least 2 rows (its first and last lie on the poles); this one has {h}"
        ));
    }
    let row_weight = |y: usize| match rows {
        RowWeight::Uniform => 1.0,
        // sin(pi y / (h - 1)), exactly 0 on both poles.
        RowWeight::SinTheta => (PI * y.min(h - 1 - y) as f64 / (h - 1) as f64).sin(),
    };
    let values: Vec<f64> = source
        .data()
        .chunks_exact(channels.max(1))
        .map(|texel| {
            let value = match texel {
                [r, g, b, ..] => LUMINANCE[0] * *r as f64 + LUMINANCE[1] * *g as f64 + LUMINANCE[2] * *b as f64,
                [v, ..] => *v as f64,
                [] => 0.0,
            };
            if value.is_finite() && value > 0.0 {
                value
            } else {
                0.0
            }
        })
        .collect();
    let offset = match mis_compensated {
        true => {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            if mean - min <= 0.01 * mean {
                0.0
            } else {
                mean
            }
        }
        false => 0.0,
    };
    let mut table = Vec::with_capacity(h * (w + 1) + h + 1);
    let mut row_sums = Vec::with_capacity(h);
    for y in 0..h {
        let weights: Vec<f64> = (0..w).map(|x| (values[y * w + x] - offset).max(0.0) * row_weight(y)).collect();
        table.extend(cdf(&weights));
        row_sums.push(weights.iter().sum());
    }
    table.extend(cdf(&row_sums));
    TensorValue::new([table.len() as u32, 1, 1], table)
}

/// The CDF of discrete weights: n + 1 values from exactly 0 to exactly 1, uniform when the
/// weights sum to zero.
fn cdf(weights: &[f64]) -> Vec<f32> {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut sum = 0.0;
    let mut values = Vec::with_capacity(n + 1);
    values.push(0.0);
    for (i, weight) in weights.iter().enumerate() {
        sum += weight;
        values.push(if total > 0.0 { (sum / total) as f32 } else { (i + 1) as f32 / n as f32 });
    }
    values[n] = 1.0;
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(shape: [u32; 3], data: Vec<f32>, rows: RowWeight) -> Vec<f32> {
        let source = TensorValue::new(shape, data).unwrap();
        distribution_2d(&source, rows, false).unwrap().data().to_vec()
    }

    #[test]
    fn grey_image_rows_and_marginal() {
        // 2 rows of 3 texels: weights (1, 0, 3) and (0, 0, 0).
        let t = table([2, 3, 1], vec![1.0, 0.0, 3.0, 0.0, -2.0, f32::NAN], RowWeight::Uniform);
        assert_eq!(t, vec![0.0, 0.25, 0.25, 1.0, 0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn colour_texels_weigh_their_luminance_and_rows_their_sine() {
        // 3 rows of 1 texel: the poles weigh nothing, the equator everything.
        let t = table([3, 1, 3], vec![1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 5.0, 5.0, 5.0], RowWeight::SinTheta);
        assert_eq!(&t[6..], &[0.0, 0.0, 1.0, 1.0]);
        let source = TensorValue::new([1, 2, 1], vec![1.0, 1.0]).unwrap();
        assert!(distribution_2d(&source, RowWeight::SinTheta, false).is_err());
    }

    #[test]
    fn mis_compensation_subtracts_the_mean() {
        // Values 1, 2, 3, 6 (mean 3): weights 0, 0, 0, 3 in one row.
        let source = TensorValue::new([1, 4, 1], vec![1.0, 2.0, 3.0, 6.0]).unwrap();
        let t = distribution_2d(&source, RowWeight::Uniform, true).unwrap();
        assert_eq!(t.data(), &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
        // Nearly constant: left out.
        let flat = TensorValue::new([1, 2, 1], vec![1.0, 1.005]).unwrap();
        let t = distribution_2d(&flat, RowWeight::Uniform, true).unwrap();
        assert!((t.data()[1] - 1.0 / 2.005).abs() < 1e-6, "{:?}", t.data());
    }

    #[test]
    fn nothing_to_weigh_is_uniform() {
        assert_eq!(table([1, 2, 1], vec![0.0, 0.0], RowWeight::Uniform), vec![0.0, 0.5, 1.0, 0.0, 1.0]);
    }
}
