//! The reconstruction filters: radii, border sizes, values at known points and integrals.

use drs_film::{FilmError, ReconstructionFilter};

fn gaussian(stddev: f32) -> ReconstructionFilter {
    ReconstructionFilter::gaussian(stddev).unwrap()
}

fn tent(radius: f32) -> ReconstructionFilter {
    ReconstructionFilter::tent(radius).unwrap()
}

#[test]
fn radii_and_borders_follow_mitsuba() {
    let cases = [
        (ReconstructionFilter::box_filter(), 0.5, 0),
        (ReconstructionFilter::default(), 2.0, 2),
        (gaussian(0.25), 1.0, 1),
        (gaussian(0.3), 1.2, 1),
        (tent(1.0), 1.0, 1),
        (tent(1.25), 1.25, 1),
        (tent(1.5), 1.5, 1),
        (tent(2.0), 2.0, 2),
    ];
    for (filter, radius, border) in cases {
        assert_eq!(filter.radius(), radius, "{filter:?}");
        assert_eq!(filter.border_size(), border, "{filter:?}");
        assert_eq!(filter.eval(radius), 0.0);
        // The box is half-open, [-0.5, 0.5), as Mitsuba's.
        assert_eq!(filter.eval(-radius), if filter.is_box() { 1.0 } else { 0.0 });
        assert_eq!(filter.eval(radius + 0.1), 0.0);
    }
    assert_eq!(ReconstructionFilter::default().stddev(), Some(0.5));
    assert_eq!(ReconstructionFilter::default().name(), "gaussian");
    assert!(ReconstructionFilter::box_filter().is_box());
    assert!(!tent(1.0).is_box());
}

#[test]
fn values_at_known_points() {
    let boxed = ReconstructionFilter::box_filter();
    assert_eq!([boxed.eval(0.0), boxed.eval(-0.5), boxed.eval(0.49), boxed.eval(0.5)], [1.0, 1.0, 1.0, 0.0]);

    let tent = tent(2.0);
    assert_eq!([tent.eval(0.0), tent.eval(0.5), tent.eval(-1.0), tent.eval(1.5)], [1.0, 0.75, 0.5, 0.25]);

    // The windowed Gaussian exp(-x²/2σ²) - exp(-r²/2σ²) with σ = 0.5, r = 2: exp(-2x²) - exp(-8).
    let filter = ReconstructionFilter::default();
    for x in [0.0f64, 0.3, 0.5, 1.0, 1.7, 1.99] {
        let expected = (-2.0 * x * x).exp() - (-8.0f64).exp();
        let value = f64::from(filter.eval(x as f32));
        assert!((value - expected).abs() < 1e-6, "gaussian({x}) = {value}, expected {expected}");
        assert_eq!(filter.eval(x as f32), filter.eval(-x as f32));
    }
}

/// The footprint weights that splatting uses agree with `eval` at every pixel of the run, for
/// runs of any length (the Gaussian's are computed four at a time): exactly for the box and the
/// tent, and for the Gaussian to a few units in the last place of its peak.
#[test]
fn footprint_weights_agree_with_eval() {
    let filters = [ReconstructionFilter::box_filter(), tent(1.5), ReconstructionFilter::default(), gaussian(3.3)];
    for filter in filters {
        for centre in [0.0f32, 2.5, 7.3, 12.999, 40.01] {
            for (first, len) in [(0, 1), (3, 4), (5, 5), (1, 7), (10, 30usize)] {
                // Room for whole groups of four, as `eval_pixels` asks.
                let mut weights = vec![f32::NAN; len.next_multiple_of(4)];
                filter.eval_pixels(first, centre, len, &mut weights);
                for (i, &weight) in weights[..len].iter().enumerate() {
                    let expected = filter.eval((first + i) as f32 - centre);
                    // The Gaussian's window offset is subtracted after the exponential, so its
                    // error is relative to the peak near the edge of the support.
                    let tolerance = if filter.stddev().is_some() { 4.0 * f32::EPSILON * filter.eval(0.0) } else { 0.0 };
                    assert!(
                        (weight - expected).abs() <= tolerance,
                        "{filter:?} at pixel {} for centre {centre}: {weight} against {expected}",
                        first + i
                    );
                }
            }
        }
    }
}

/// ∫ f over its support by the composite Simpson rule.
fn integral(filter: &ReconstructionFilter) -> f64 {
    let radius = f64::from(filter.radius());
    let steps = 20_000;
    let h = 2.0 * radius / f64::from(steps);
    let f = |i: u32| f64::from(filter.eval((-radius + f64::from(i) * h) as f32));
    let inner: f64 = (1..steps).map(|i| if i % 2 == 1 { 4.0 * f(i) } else { 2.0 * f(i) }).sum();
    (f(0) + inner + f(steps)) * h / 3.0
}

#[test]
fn integrals_match_the_analytic_areas_and_normalise_to_one() {
    // erf(2√2), for the Gaussian cut off at 4σ.
    const ERF_2_SQRT_2: f64 = 0.999_936_657_516_333_8;
    let gaussian_area = |sigma: f64| {
        let radius = 4.0 * sigma;
        sigma * (2.0 * std::f64::consts::PI).sqrt() * ERF_2_SQRT_2 - 2.0 * radius * (-8.0f64).exp()
    };
    let cases = [
        (ReconstructionFilter::box_filter(), 1.0),
        (tent(1.0), 1.0),
        (tent(1.25), 1.25),
        (ReconstructionFilter::default(), gaussian_area(0.5)),
        (gaussian(0.3), gaussian_area(0.3)),
    ];
    for (filter, area) in cases {
        let numeric = integral(&filter);
        // The box's jump makes Simpson's rule converge only to about one step width.
        assert!((numeric / area - 1.0).abs() < 2e-4, "{filter:?}: ∫ = {numeric}, expected {area}");
    }
}

#[test]
fn tent_weights_of_neighbouring_pixels_sum_to_one() {
    // The unit tent is a partition of unity on the pixel grid: any sample's weights sum to 1.
    let filter = tent(1.0);
    for offset in [0.0f32, 0.1, 0.25, 0.5, 0.9] {
        let sum: f32 = (-2..=2).map(|i| filter.eval(i as f32 - offset)).sum();
        assert!((sum - 1.0).abs() < 1e-6, "offset {offset}: {sum}");
    }
}

#[test]
fn invalid_parameters_are_errors() {
    for stddev in [0.0, -0.5, f32::NAN, f32::INFINITY, 16.1] {
        let error = ReconstructionFilter::gaussian(stddev).unwrap_err();
        assert!(matches!(error, FilmError::InvalidFilterParameter { filter: "gaussian", parameter: "stddev", .. }));
    }
    for radius in [0.0, -1.0, f32::NAN, 65.0] {
        assert!(ReconstructionFilter::tent(radius).is_err(), "{radius}");
    }
    let message = ReconstructionFilter::tent(-1.0).unwrap_err().to_string();
    assert_eq!(message, "tent filter: `radius` must be positive and give a radius of at most 64 pixels, got -1");
    assert!(ReconstructionFilter::gaussian(16.0).is_ok());
}
