//! Chi-square goodness-of-fit test of a direction sampler against the density it claims,
//! as in Mitsuba 3's test suite (`mitsuba.chi2.ChiSquareTest`, after Mitsuba 0.5 and pbrt):
//!
//! 1. draw many directions and count them in cells of equal solid angle, a grid over
//!    (cos theta, phi) on the whole sphere;
//! 2. integrate the density over each cell by Gauss-Legendre quadrature (nodes inside the
//!    cell, so a density that jumps at a cell's edge, as many do at the horizon, is integrated
//!    from the right side), times the number of samples: the expected counts;
//! 3. pool cells expecting fewer than [`MIN_EXPECTED`] samples (the chi-square approximation
//!    needs a handful per cell), and compute Pearson's statistic;
//! 4. reject when its p-value is below the significance level, Šidák-corrected for the
//!    number of tests in the family, so that a suite of many tests still fails by chance
//!    with the chosen probability only.
//!
//! A sample that lands in a cell where the density integrates to zero fails the test at once.
//! Failed samples (a sampler's `None`) count nowhere, so a density that integrates to less
//! than one (directions the sampler cannot produce) is tested as it is.

use std::f64::consts::PI;
use std::fmt;

use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::Uniforms;

/// The fewest samples a (pooled) cell must expect.
pub const MIN_EXPECTED: f64 = 5.0;

/// A chi-square test over the sphere of directions.
#[derive(Clone, Debug)]
pub struct SphericalChi2 {
    /// Cells along cos(theta) in [-1, 1] and along phi in [0, 2 pi): all of equal solid angle.
    pub cos_theta_cells: usize,
    pub phi_cells: usize,
    /// Simpson intervals per cell along each axis (even); more for peaked densities.
    pub integration_points: usize,
    pub sample_count: usize,
    /// Probability that at least one test of the family fails although every sampler is
    /// right, and the number of tests in the family.
    pub significance: f64,
    pub test_count: usize,
    pub seed: u64,
}

impl Default for SphericalChi2 {
    fn default() -> Self {
        SphericalChi2 {
            cos_theta_cells: 32,
            phi_cells: 64,
            integration_points: 6,
            sample_count: 1_000_000,
            significance: 0.01,
            test_count: 1,
            seed: 7,
        }
    }
}

/// Samples drawn per call of the sampler.
const BATCH: usize = 1 << 16;

/// The outcome of one test.
#[derive(Clone, Debug)]
pub struct Chi2Outcome {
    pub statistic: f64,
    /// Degrees of freedom: pooled cells minus one.
    pub dof: usize,
    pub p_value: f64,
    /// The Šidák-corrected significance level the p-value is compared with.
    pub threshold: f64,
    /// Samples that the sampler produced (not `None`).
    pub sampled: usize,
    /// The integral of the density over the sphere.
    pub total_mass: f64,
    /// Why the test failed before the statistic (samples where the density is zero).
    pub failure: Option<String>,
    /// The cells that contribute most to the statistic: (cos theta range, phi range, observed,
    /// expected), for the failure message.
    pub worst_cells: Vec<([f64; 2], [f64; 2], f64, f64)>,
}

impl Chi2Outcome {
    pub fn passed(&self) -> bool {
        self.failure.is_none() && self.p_value >= self.threshold
    }
}

impl fmt::Display for Chi2Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(failure) = &self.failure {
            writeln!(f, "{failure}")?;
        }
        writeln!(
            f,
            "chi2 = {:.1} with {} degrees of freedom: p = {:.3e} (threshold {:.3e}); {} samples, density mass {:.5}",
            self.statistic, self.dof, self.p_value, self.threshold, self.sampled, self.total_mass
        )?;
        for (cos_theta, phi, observed, expected) in &self.worst_cells {
            writeln!(
                f,
                "  cos theta in [{:.3}, {:.3}], phi in [{:.3}, {:.3}]: {observed} samples, {expected:.1} expected",
                cos_theta[0], cos_theta[1], phi[0], phi[1]
            )?;
        }
        Ok(())
    }
}

impl SphericalChi2 {
    /// Runs the test. `sample` maps a batch of uniform triples (sample1, sample2.x, sample2.y)
    /// to directions (`None`: no sample); `density` gives the solid-angle density at a batch
    /// of unit directions.
    pub fn run(
        &self,
        mut sample: impl FnMut(&[[f32; 3]]) -> Vec<Option<[f32; 3]>>,
        mut density: impl FnMut(&[[f32; 3]]) -> Vec<f64>,
    ) -> Chi2Outcome {
        let (nc, np) = (self.cos_theta_cells, self.phi_cells);
        let mut observed = vec![0.0f64; nc * np];
        let mut uniforms = Uniforms(self.seed);
        let mut sampled = 0;
        let mut left = self.sample_count;
        while left > 0 {
            let n = left.min(BATCH);
            left -= n;
            for d in sample(&uniforms.triples(n)).into_iter().flatten() {
                observed[self.cell_of(d)] += 1.0;
                sampled += 1;
            }
        }
        let expected: Vec<f64> =
            self.integrate(&mut density).into_iter().map(|mass| mass * self.sample_count as f64).collect();
        let total_mass = expected.iter().sum::<f64>() / self.sample_count as f64;
        let threshold = 1.0 - (1.0 - self.significance).powf(1.0 / self.test_count as f64);

        let mut outcome = Chi2Outcome {
            statistic: 0.0,
            dof: 0,
            p_value: 0.0,
            threshold,
            sampled,
            total_mass,
            failure: None,
            worst_cells: self.worst_cells(&observed, &expected),
        };
        let stray: f64 = observed.iter().zip(&expected).filter(|(_, &e)| e <= 0.0).map(|(o, _)| o).sum();
        if stray > 0.0 {
            outcome.failure = Some(format!("{stray} samples fell where the density is zero"));
            return outcome;
        }
        match pearson(&observed, &expected) {
            Some((statistic, dof)) => {
                outcome.statistic = statistic;
                outcome.dof = dof;
                outcome.p_value = ChiSquared::new(dof as f64).map(|d| d.sf(statistic)).unwrap_or(0.0);
            }
            None => outcome.failure = Some("too few expected samples for a chi-square test".into()),
        }
        outcome
    }

    fn cell_of(&self, d: [f32; 3]) -> usize {
        let (nc, np) = (self.cos_theta_cells, self.phi_cells);
        let z = (d[2] as f64).clamp(-1.0, 1.0);
        let i = (((z + 1.0) * 0.5 * nc as f64) as usize).min(nc - 1);
        let mut phi = (d[1] as f64).atan2(d[0] as f64);
        if phi < 0.0 {
            phi += 2.0 * PI;
        }
        let j = ((phi / (2.0 * PI) * np as f64) as usize).min(np - 1);
        i * np + j
    }

    /// The density integrated over each cell (the solid angle element is d(cos theta) d(phi)).
    fn integrate(&self, density: &mut impl FnMut(&[[f32; 3]]) -> Vec<f64>) -> Vec<f64> {
        let (nc, np) = (self.cos_theta_cells, self.phi_cells);
        let rule = gauss_legendre(self.integration_points.max(1));
        let (dz, dphi) = (2.0 / nc as f64, 2.0 * PI / np as f64);
        // Node coordinates along each axis, cell after cell.
        let zs: Vec<f64> =
            (0..nc).flat_map(|i| rule.iter().map(move |(x, _)| -1.0 + (i as f64 + 0.5 * (x + 1.0)) * dz)).collect();
        let phis: Vec<f64> =
            (0..np).flat_map(|j| rule.iter().map(move |(x, _)| (j as f64 + 0.5 * (x + 1.0)) * dphi)).collect();
        let mut points = Vec::with_capacity(zs.len() * phis.len());
        for &z in &zs {
            let r = (1.0 - z * z).max(0.0).sqrt();
            points.extend(phis.iter().map(|phi| [(r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32]));
        }
        let values = density(&points);
        assert_eq!(values.len(), points.len(), "the density gives one value per direction");
        let k = rule.len();
        let mut cells = vec![0.0; nc * np];
        for i in 0..nc {
            for j in 0..np {
                let mut sum = 0.0;
                for (a, (_, wa)) in rule.iter().enumerate() {
                    let row = (i * k + a) * phis.len() + j * k;
                    sum += wa * rule.iter().enumerate().map(|(b, (_, wb))| wb * values[row + b]).sum::<f64>();
                }
                // The rule's weights sum to 2 on [-1, 1]: scale to the cell's sides.
                cells[i * np + j] = sum * 0.25 * dz * dphi;
            }
        }
        cells
    }

    fn worst_cells(&self, observed: &[f64], expected: &[f64]) -> Vec<([f64; 2], [f64; 2], f64, f64)> {
        let np = self.phi_cells;
        let mut order: Vec<usize> = (0..observed.len()).collect();
        let contribution = |k: usize| {
            let e = expected[k].max(1e-9);
            (observed[k] - e).powi(2) / e
        };
        order.sort_by(|&a, &b| contribution(b).total_cmp(&contribution(a)));
        let dz = 2.0 / self.cos_theta_cells as f64;
        let dphi = 2.0 * PI / np as f64;
        order
            .into_iter()
            .take(5)
            .map(|k| {
                let (i, j) = (k / np, k % np);
                let z0 = -1.0 + i as f64 * dz;
                ([z0, z0 + dz], [j as f64 * dphi, (j + 1) as f64 * dphi], observed[k], expected[k])
            })
            .collect()
    }
}

/// The n-point Gauss-Legendre rule on [-1, 1]: (node, weight) pairs. Nodes are the roots of
/// the Legendre polynomial P_n, found by Newton's method from Chebyshev-like starting points
/// (Abramowitz and Stegun 25.4.29 and 22.16.6), weights 2 / ((1 - x^2) P_n'(x)^2).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let mut x = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut derivative = 1.0;
            for _ in 0..100 {
                // P_n(x) and P_n'(x) by the three-term recurrence.
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                let p_n = if n == 0 { 1.0 } else { p1 };
                let p_prev = if n == 1 { 1.0 } else { p0 };
                derivative = n as f64 * (x * p_n - p_prev) / (x * x - 1.0);
                let step = p_n / derivative;
                x -= step;
                if step.abs() < 1e-15 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * derivative * derivative))
        })
        .collect()
}

/// Pearson's statistic after pooling: cells sorted by expected count, the smallest merged
/// until each pool expects at least [`MIN_EXPECTED`] (a last pool short of it joins the one
/// before). Returns the statistic and the degrees of freedom (pools minus one), or `None`
/// with fewer than two pools.
pub fn pearson(observed: &[f64], expected: &[f64]) -> Option<(f64, usize)> {
    let mut order: Vec<usize> = (0..expected.len()).filter(|&k| expected[k] > 0.0).collect();
    order.sort_by(|&a, &b| expected[a].total_cmp(&expected[b]));
    let mut pools: Vec<(f64, f64)> = Vec::new();
    let mut pending = (0.0, 0.0);
    for k in order {
        pending.0 += observed[k];
        pending.1 += expected[k];
        if pending.1 >= MIN_EXPECTED {
            pools.push(pending);
            pending = (0.0, 0.0);
        }
    }
    if pending.1 > 0.0 {
        match pools.last_mut() {
            Some(last) => {
                last.0 += pending.0;
                last.1 += pending.1;
            }
            None => pools.push(pending),
        }
    }
    if pools.len() < 2 {
        return None;
    }
    let statistic = pools.iter().map(|&(o, e)| (o - e) * (o - e) / e).sum();
    Some((statistic, pools.len() - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cosine-weighted hemisphere directions (Malley's method with the polar disk map).
    fn cosine_hemisphere(batch: &[[f32; 3]]) -> Vec<Option<[f32; 3]>> {
        batch
            .iter()
            .map(|u| {
                let (r, phi) = ((u[1] as f64).sqrt(), 2.0 * PI * u[2] as f64);
                let z = (1.0 - r * r).max(0.0).sqrt();
                Some([(r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32])
            })
            .collect()
    }

    fn cosine_density(ds: &[[f32; 3]]) -> Vec<f64> {
        ds.iter().map(|d| (d[2] as f64).max(0.0) / PI).collect()
    }

    fn small() -> SphericalChi2 {
        SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() }
    }

    #[test]
    fn accepts_a_sampler_with_its_density() {
        let outcome = small().run(cosine_hemisphere, cosine_density);
        assert!(outcome.passed(), "{outcome}");
        assert!((outcome.total_mass - 1.0).abs() < 1e-4, "{outcome}");
    }

    #[test]
    fn rejects_a_wrong_density() {
        let uniform = |ds: &[[f32; 3]]| ds.iter().map(|d| if d[2] > 0.0 { 0.5 / PI } else { 0.0 }).collect();
        let outcome = small().run(cosine_hemisphere, uniform);
        assert!(!outcome.passed(), "{outcome}");
        assert!(outcome.failure.is_none() && outcome.p_value < 1e-12, "{outcome}");
    }

    #[test]
    fn rejects_samples_where_the_density_is_zero() {
        let lower =
            |batch: &[[f32; 3]]| cosine_hemisphere(batch).into_iter().map(|d| d.map(|[x, y, z]| [x, y, -z])).collect();
        let outcome = small().run(lower, cosine_density);
        assert!(outcome.failure.as_deref().is_some_and(|f| f.contains("density is zero")), "{outcome}");
    }

    #[test]
    fn rejects_a_density_off_by_a_few_percent() {
        // Right shape, 3% too little mass: the counts exceed the expectation everywhere.
        let low = |ds: &[[f32; 3]]| cosine_density(ds).into_iter().map(|p| 0.97 * p).collect();
        let outcome = SphericalChi2 { sample_count: 1_000_000, ..SphericalChi2::default() }.run(cosine_hemisphere, low);
        assert!(!outcome.passed(), "{outcome}");
    }

    #[test]
    fn pooling_merges_small_cells() {
        // Expected 1, 2, 3 pool into one cell of 6; 10 and 20 stay.
        let (statistic, dof) = pearson(&[2.0, 2.0, 2.0, 10.0, 20.0], &[1.0, 2.0, 3.0, 10.0, 20.0]).unwrap();
        assert_eq!(dof, 2);
        assert!(statistic.abs() < 1e-12);
        let (statistic, _) = pearson(&[0.0, 0.0, 12.0, 10.0, 20.0], &[1.0, 2.0, 3.0, 10.0, 20.0]).unwrap();
        assert!((statistic - 6.0).abs() < 1e-12, "{statistic}");
        assert!(pearson(&[1.0], &[3.0]).is_none());
    }

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        for n in 1..=8 {
            let rule = gauss_legendre(n);
            // Exact up to degree 2n - 1: \int_{-1}^{1} x^d dx = 2 / (d + 1) for even d, 0 for odd.
            for d in 0..2 * n {
                let sum: f64 = rule.iter().map(|(x, w)| w * x.powi(d as i32)).sum();
                let exact = if d % 2 == 0 { 2.0 / (d + 1) as f64 } else { 0.0 };
                assert!((sum - exact).abs() < 1e-12, "{n} points, degree {d}: {sum} vs {exact}");
            }
        }
    }

    #[test]
    fn cell_masses_of_a_smooth_density() {
        // (1 + z) / (4 pi) over the sphere: linear in z, so a cell's mass is its solid angle
        // times the density at its middle z.
        let chi2 = SphericalChi2 { cos_theta_cells: 4, phi_cells: 8, ..SphericalChi2::default() };
        let cells =
            chi2.integrate(&mut |ds: &[[f32; 3]]| ds.iter().map(|d| (1.0 + d[2] as f64) / (4.0 * PI)).collect());
        assert!((cells.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        let dz = 0.5;
        for (k, c) in cells.iter().enumerate() {
            let z_mid = -1.0 + (k / 8) as f64 * dz + dz / 2.0;
            let exact = (1.0 + z_mid) * dz * (2.0 * PI / 8.0) / (4.0 * PI);
            assert!((c - exact).abs() < 1e-6, "cell {k}: {c} vs {exact}");
        }
    }
}
