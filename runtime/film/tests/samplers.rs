//! xoshiro128** against the reference generator, uniformity of both samplers, stratification,
//! replay and independence of streams.

mod common;

use std::collections::HashSet;

use common::{assert_uniform_1d, assert_uniform_2d};
use drs_film::{stratified_sample_count, FilmError, SampleStream, Sampler, SamplerKind, Xoshiro128};

#[test]
fn xoshiro128_matches_the_reference_implementation() {
    // Blackman and Vigna's xoshiro128starstar.c from the state {1, 2, 3, 4}.
    let mut rng = Xoshiro128::from_words([1, 2, 3, 4]);
    let expected = [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849];
    for value in expected {
        assert_eq!(rng.next_u32(), value);
    }
    // The all-zero state, which never leaves itself, is replaced.
    assert_ne!(Xoshiro128::from_words([0; 4]).words(), [0; 4]);
}

#[test]
fn xoshiro128_floats_are_the_top_24_bits() {
    let mut bits = Xoshiro128::from_words([7, 3, 0, 9]);
    let mut floats = bits;
    for _ in 0..1000 {
        let expected = (bits.next_u32() >> 8) as f32 / 16_777_216.0;
        assert_eq!(floats.next_f32(), expected);
    }
}

fn samplers() -> Vec<Sampler> {
    vec![
        Sampler::independent(16, 0).unwrap(),
        Sampler::stratified(16, 0, true).unwrap(),
        Sampler::stratified(9, 5, true).unwrap(),
    ]
}

/// The `dimension`-th value (1D, after `dimension` earlier 1D draws) of every sample of the
/// first `pixels` pixels.
fn values_1d(sampler: &Sampler, pixels: u32, dimension: usize) -> Vec<f32> {
    let mut values = Vec::new();
    for pixel in 0..pixels {
        for sample in 0..sampler.sample_count() {
            let mut stream = sampler.stream(pixel, sample, 0);
            for _ in 0..dimension {
                stream.next_1d();
            }
            values.push(stream.next_1d());
        }
    }
    values
}

fn points_2d(sampler: &Sampler, pixels: u32, dimension: usize) -> Vec<[f32; 2]> {
    let mut points = Vec::new();
    for pixel in 0..pixels {
        for sample in 0..sampler.sample_count() {
            let mut stream = sampler.stream(pixel, sample, 3);
            for _ in 0..dimension {
                stream.next_2d();
            }
            points.push(stream.next_2d());
        }
    }
    points
}

#[test]
fn next_1d_is_uniform() {
    for sampler in samplers() {
        for dimension in [0, 1, 5] {
            let values = values_1d(&sampler, 100_000 / sampler.sample_count(), dimension);
            assert_uniform_1d(&values, 100, &format!("{:?} dimension {dimension}", sampler.kind()));
        }
    }
}

#[test]
fn next_2d_is_uniform() {
    for sampler in samplers() {
        for dimension in [0, 2] {
            let points = points_2d(&sampler, 100_000 / sampler.sample_count(), dimension);
            assert_uniform_2d(&points, 16, &format!("{:?} dimension {dimension}", sampler.kind()));
        }
    }
}

#[test]
fn pairs_of_consecutive_1d_values_are_uniform() {
    // Catches correlation between successive draws, which 1D histograms cannot see.
    for sampler in samplers() {
        let mut points = Vec::new();
        for pixel in 0..100_000 / sampler.sample_count() {
            for sample in 0..sampler.sample_count() {
                let mut stream = sampler.stream(pixel, sample, 0);
                points.push([stream.next_1d(), stream.next_1d()]);
            }
        }
        assert_uniform_2d(&points, 16, &format!("{:?} (next_1d, next_1d)", sampler.kind()));
    }
}

#[test]
fn stratified_puts_exactly_one_sample_in_each_stratum() {
    for requested in [1, 4, 9, 16, 25, 64] {
        for jitter in [true, false] {
            let sampler = Sampler::stratified(requested, 17, jitter).unwrap();
            let count = sampler.sample_count();
            let resolution = count.isqrt();
            for pixel in (0..5000).step_by(37) {
                // Interleave 1D and 2D draws: each dimension is stratified on its own.
                let mut strata_1d = vec![HashSet::new(); 3];
                let mut cells_2d = vec![HashSet::new(); 3];
                for sample in 0..count {
                    let mut stream = sampler.stream(pixel, sample, 2);
                    for dimension in 0..3 {
                        let u = stream.next_1d();
                        let stratum = (f64::from(u) * f64::from(count)) as u32;
                        assert!(strata_1d[dimension].insert(stratum), "1D stratum {stratum} twice ({count} spp)");
                        let [x, y] = stream.next_2d();
                        let cell = (
                            (f64::from(x) * f64::from(resolution)) as u32,
                            (f64::from(y) * f64::from(resolution)) as u32,
                        );
                        assert!(cells_2d[dimension].insert(cell), "2D cell {cell:?} twice ({count} spp)");
                    }
                }
                for dimension in 0..3 {
                    assert_eq!(strata_1d[dimension].len(), count as usize);
                    assert!(strata_1d[dimension].iter().all(|&stratum| stratum < count));
                    assert_eq!(cells_2d[dimension].len(), count as usize);
                }
            }
        }
    }
}

#[test]
fn stratified_without_jitter_uses_stratum_centres() {
    let sampler = Sampler::stratified(16, 1, false).unwrap();
    let mut values: Vec<f32> = (0..16).map(|sample| sampler.stream(42, sample, 0).next_1d()).collect();
    values.sort_by(f32::total_cmp);
    let centres: Vec<f32> = (0..16).map(|k| (k as f32 + 0.5) / 16.0).collect();
    assert_eq!(values, centres);
    let mut points: Vec<(f32, f32)> = (0..16)
        .map(|sample| {
            let [x, y] = sampler.stream(42, sample, 0).next_2d();
            (x, y)
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let grid: Vec<(f32, f32)> =
        (0..4).flat_map(|i| (0..4).map(move |j| ((i as f32 + 0.5) / 4.0, (j as f32 + 0.5) / 4.0))).collect();
    assert_eq!(points, grid);
}

#[test]
fn sample_count_rounds_up_to_a_square_as_mitsuba() {
    let cases = [(1, 1), (2, 4), (4, 4), (5, 9), (9, 9), (10, 16), (16, 16), (17, 25), (1000, 1024)];
    for (requested, rounded) in cases {
        assert_eq!(stratified_sample_count(requested), Ok(rounded), "{requested}");
        assert_eq!(Sampler::stratified(requested, 0, true).unwrap().sample_count(), rounded);
    }
    assert_eq!(stratified_sample_count(65535 * 65535), Ok(65535 * 65535));
    assert_eq!(stratified_sample_count(65535 * 65535 + 1), Err(FilmError::SampleCountTooLarge(65535 * 65535 + 1)));
    assert_eq!(stratified_sample_count(0), Err(FilmError::ZeroSampleCount));
    assert_eq!(Sampler::independent(0, 0), Err(FilmError::ZeroSampleCount));
    // The independent sampler keeps any count.
    assert_eq!(Sampler::independent(5, 0).unwrap().sample_count(), 5);
    assert_eq!(Sampler::stratified(3, 0, false).unwrap().kind(), SamplerKind::Stratified { jitter: false });
}

fn draw(sampler: &Sampler, pixel: u32, sample: u32, pass: u32) -> Vec<f32> {
    let mut stream = sampler.stream(pixel, sample, pass);
    (0..20).flat_map(|i| if i % 3 == 0 { stream.next_2d().to_vec() } else { vec![stream.next_1d()] }).collect()
}

#[test]
fn a_sample_replays_identically() {
    for sampler in samplers() {
        for (pixel, sample, pass) in [(0, 0, 0), (123_456, 7, 3), (u32::MAX, u32::MAX, u32::MAX)] {
            let first = draw(&sampler, pixel, sample, pass);
            // Other samples drawn in between change nothing: there is no shared state.
            let _ = draw(&sampler, pixel.wrapping_add(1), sample, pass);
            assert_eq!(draw(&sampler, pixel, sample, pass), first);
            // A clone taken midway continues exactly like the original.
            let mut stream = sampler.stream(pixel, sample, pass);
            stream.next_2d();
            let mut replay = stream.clone();
            let rest: Vec<f32> = (0..10).map(|_| stream.next_1d()).collect();
            let replayed: Vec<f32> = (0..10).map(|_| replay.next_1d()).collect();
            assert_eq!(rest, replayed);
        }
    }
}

#[test]
fn streams_seeded_together_equal_streams_seeded_alone() {
    let coordinates = [(0, 0), (1, 0), (123_456, 7), (u32::MAX, u32::MAX), (5, 15), (5, 16), (77, 3), (9, 1000)];
    for sampler in samplers() {
        for pass in [0, 2] {
            let together = sampler.streams(coordinates.map(|c| c.0), coordinates.map(|c| c.1), pass);
            for ((pixel, sample), mut stream) in coordinates.into_iter().zip(together) {
                let alone = draw(&sampler, pixel, sample, pass);
                let drawn: Vec<f32> = (0..20)
                    .flat_map(|i| if i % 3 == 0 { stream.next_2d().to_vec() } else { vec![stream.next_1d()] })
                    .collect();
                assert_eq!(drawn, alone, "{sampler:?}, pixel {pixel}, sample {sample}, pass {pass}");
            }
            // Any width, three lanes say, gives the same streams.
            let [a, b, c] = sampler.streams([0, 123_456, 9], [0, 7, 1000], pass);
            assert_eq!([a, b, c], [0, 2, 7].map(|i| sampler.stream(coordinates[i].0, coordinates[i].1, pass)));
        }
    }
}

#[test]
fn different_pixels_samples_passes_and_seeds_give_different_streams() {
    for kind_seed in [0, 1] {
        let sampler = Sampler::independent(64, kind_seed).unwrap();
        let mut seen = HashSet::new();
        for pixel in 0..500 {
            for sample in 0..16 {
                for pass in 0..2 {
                    let bits: Vec<u32> = draw(&sampler, pixel, sample, pass).iter().map(|v| v.to_bits()).collect();
                    assert!(seen.insert(bits), "pixel {pixel} sample {sample} pass {pass} repeats a stream");
                }
            }
        }
    }
    let a = Sampler::independent(4, 1).unwrap();
    let b = Sampler::independent(4, 2).unwrap();
    assert_ne!(draw(&a, 10, 0, 0), draw(&b, 10, 0, 0));
    let stratified_a = Sampler::stratified(4, 1, true).unwrap();
    let stratified_b = Sampler::stratified(4, 2, true).unwrap();
    assert_ne!(draw(&stratified_a, 10, 0, 0), draw(&stratified_b, 10, 0, 0));
}

/// Pearson's correlation coefficient.
fn correlation(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mean_x, mean_y) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let covariance: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let variance_x: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    let variance_y: f64 = ys.iter().map(|y| (y - mean_y).powi(2)).sum();
    covariance / (variance_x * variance_y).sqrt()
}

#[test]
fn neighbouring_pixels_and_samples_are_uncorrelated() {
    // 20 000 pairs: the coefficient of independent streams has a standard deviation of 0.007.
    let sampler = Sampler::independent(1, 0).unwrap();
    let first = |pixel, sample, pass| f64::from(sampler.stream(pixel, sample, pass).next_1d());
    let n = 20_000;
    let base: Vec<f64> = (0..n).map(|i| first(i, 0, 0)).collect();
    let next_pixel: Vec<f64> = (0..n).map(|i| first(i + 1, 0, 0)).collect();
    let next_sample: Vec<f64> = (0..n).map(|i| first(i, 1, 0)).collect();
    let next_pass: Vec<f64> = (0..n).map(|i| first(i, 0, 1)).collect();
    for (what, other) in [("pixel", &next_pixel), ("sample", &next_sample), ("pass", &next_pass)] {
        let r = correlation(&base, other);
        assert!(r.abs() < 0.035, "correlation with the next {what}: {r}");
    }
}

#[test]
fn split_streams_are_replayable_and_unrelated_to_their_parent() {
    let sampler = Sampler::independent(1, 0).unwrap();
    let n = 20_000;
    let mut parent_values = Vec::with_capacity(n as usize);
    let mut split_values = Vec::with_capacity(n as usize);
    for pixel in 0..n {
        let mut stream = sampler.stream(pixel, 0, 0);
        stream.next_1d();
        let before = stream.clone();
        let mut split = stream.split();
        // Splitting leaves the parent where it was, and a replay splits off the same stream.
        assert_eq!(stream, before);
        let mut replayed = before.split();
        let ours: Vec<f32> = (0..4).map(|_| split.next_1d()).collect();
        assert_eq!(ours, (0..4).map(|_| replayed.next_1d()).collect::<Vec<_>>());
        parent_values.push(f64::from(stream.next_1d()));
        split_values.push(f64::from(ours[0]));
    }
    // The split's numbers are neither the parent's next ones nor correlated with them.
    let r = correlation(&parent_values, &split_values);
    assert!(r.abs() < 0.035, "correlation of a split stream with its parent: {r}");
    assert!(parent_values.iter().zip(&split_values).filter(|(a, b)| a == b).count() < 5);
    // Splitting twice at different positions gives different streams.
    let mut stream = sampler.stream(7, 0, 0);
    let mut first = stream.split();
    stream.next_1d();
    let mut second = stream.split();
    assert_ne!(
        (0..4).map(|_| first.next_1d()).collect::<Vec<_>>(),
        (0..4).map(|_| second.next_1d()).collect::<Vec<_>>()
    );
}

/// An independent stream rebuilt from its generator's words continues exactly where it was, and so
/// does a split of it; a stratified stream has no such words.
#[test]
fn streams_rebuilt_from_their_words_continue_where_they_were() {
    let sampler = Sampler::independent(4, 3).unwrap();
    for pixel in [0, 1, 977, u32::MAX] {
        let mut stream = sampler.stream(pixel, 2, 1);
        stream.next_2d();
        let words = stream.words().expect("independent streams have words");
        let mut rebuilt = SampleStream::from_words(words);
        assert_eq!(rebuilt, stream);
        let (ours, theirs): (Vec<f32>, Vec<f32>) = (0..8).map(|_| (stream.next_1d(), rebuilt.next_1d())).unzip();
        assert_eq!(ours, theirs);
        assert_eq!(SampleStream::from_words(stream.words().unwrap()).split(), stream.split());
    }
    let stratified = Sampler::stratified(4, 3, true).unwrap();
    assert_eq!(stratified.stream(5, 0, 0).words(), None);
}
