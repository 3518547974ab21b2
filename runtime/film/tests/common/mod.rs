//! Helpers shared by the integration tests.

/// Pearson's chi-square statistic of `observed` counts against equal expected counts.
pub fn chi_square_uniform(observed: &[u64]) -> f64 {
    let total: u64 = observed.iter().sum();
    let expected = total as f64 / observed.len() as f64;
    observed.iter().map(|&count| (count as f64 - expected).powi(2) / expected).sum()
}

/// The chi-square value that `degrees` degrees of freedom exceed with probability 1e-4, by the
/// Wilson–Hilferty approximation (accurate to well under 1% for more than 30 degrees).
pub fn chi_square_critical_1e4(degrees: usize) -> f64 {
    const Z: f64 = 3.719_016; // standard normal quantile at 1 - 1e-4
    let k = degrees as f64;
    let h = 2.0 / (9.0 * k);
    k * (1.0 - h + Z * h.sqrt()).powi(3)
}

/// Asserts that `values` in `[0, 1)` fill `bins` equal bins uniformly (chi-square at 1e-4).
pub fn assert_uniform_1d(values: &[f32], bins: usize, what: &str) {
    let mut counts = vec![0u64; bins];
    for &value in values {
        assert!((0.0..1.0).contains(&value), "{what}: {value} outside [0, 1)");
        counts[(value as f64 * bins as f64) as usize] += 1;
    }
    let statistic = chi_square_uniform(&counts);
    let critical = chi_square_critical_1e4(bins - 1);
    assert!(statistic < critical, "{what}: chi-square {statistic:.1} >= {critical:.1} ({bins} bins)");
}

/// Asserts that points in `[0, 1)²` fill a `bins` x `bins` grid uniformly (chi-square at 1e-4).
pub fn assert_uniform_2d(points: &[[f32; 2]], bins: usize, what: &str) {
    let mut counts = vec![0u64; bins * bins];
    for &[x, y] in points {
        assert!((0.0..1.0).contains(&x) && (0.0..1.0).contains(&y), "{what}: ({x}, {y}) outside [0, 1)²");
        let column = (x as f64 * bins as f64) as usize;
        let row = (y as f64 * bins as f64) as usize;
        counts[row * bins + column] += 1;
    }
    let statistic = chi_square_uniform(&counts);
    let critical = chi_square_critical_1e4(bins * bins - 1);
    assert!(statistic < critical, "{what}: chi-square {statistic:.1} >= {critical:.1} ({bins}x{bins} bins)");
}
