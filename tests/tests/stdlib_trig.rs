//! Accuracy of the standard library's sine and cosine without range reduction
//! (`stdlib/math.drs`): `sincos_quarter_pi` on its interval and `sincos_two_pi` on angles in
//! turns, against f64, run by the interpreter on the lowered module (both use no
//! transcendental, so every backend gives the same bits: tests/tests/backends.rs).

use std::f64::consts::{FRAC_PI_4, TAU};

use drs_interp::Interpreter;
use drs_sema::LoadOptions;
use drs_tests::Uniforms;

/// `f(x) -> (sin, cos)` of math.drs on every argument.
fn run(function: &str, arguments: &[f32]) -> Vec<(f32, f32)> {
    let math = drs_sema::bundled_stdlib_dir().join("math.drs");
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let program = drs_lower::lower_files(&[math], &options).expect("math.drs lowers");
    let module = &program.lowered.module;
    let id = module.find(function).expect("the function is in math.drs");
    let mut interp = Interpreter::new(module);
    arguments
        .iter()
        .map(|x| {
            let r = interp.call(id, &[x.to_bits()]).expect("no trap");
            (f32::from_bits(r[0]), f32::from_bits(r[1]))
        })
        .collect()
}

/// The spacing of the floats around `y` (for |y| of at least 2^-126).
fn ulp(y: f64) -> f64 {
    2f64.powi(y.abs().log2().floor() as i32 - 23)
}

/// The largest error in ulps of the exact value (where that is at least 2^-20 in size) and
/// the largest absolute error in units of 2^-24, of each result.
#[derive(Debug, Default)]
struct Worst {
    ulps: [f64; 2],
    absolute: [f64; 2],
}

fn worst(arguments: &[f32], got: &[(f32, f32)], exact: impl Fn(f64) -> (f64, f64)) -> Worst {
    let mut w = Worst::default();
    for (&x, &(s, c)) in arguments.iter().zip(got) {
        let (es, ec) = exact(f64::from(x));
        for (k, (g, e)) in [(s, es), (c, ec)].into_iter().enumerate() {
            let error = (f64::from(g) - e).abs();
            w.absolute[k] = w.absolute[k].max(error * 2f64.powi(24));
            if e.abs() >= 2f64.powi(-20) {
                w.ulps[k] = w.ulps[k].max(error / ulp(e));
            }
        }
    }
    w
}

#[test]
fn sincos_quarter_pi_is_within_about_one_ulp() {
    let mut u = Uniforms(0x5eed_7717);
    let mut xs: Vec<f32> = (0..200_000).map(|_| u.range(-FRAC_PI_4 as f32, FRAC_PI_4 as f32)).collect();
    xs.extend([0.0, -0.0, FRAC_PI_4 as f32, -FRAC_PI_4 as f32, 1e-30, 1e-6]);
    let w = worst(&xs, &run("sincos_quarter_pi", &xs), |x| (x.sin(), x.cos()));
    assert!(w.ulps[0] <= 1.0 && w.ulps[1] <= 1.5, "{w:?}");
}

#[test]
fn sincos_two_pi_is_accurate_for_angles_in_turns() {
    let mut u = Uniforms(0x5eed_7718);
    // Every multiple of 2^-16 of a turn (the quarter turns and the eighths where the polynomial
    // switches among them), random samples in [0, 1) as the samplers draw them, a turn's last
    // float, and arbitrary angles of several turns either way.
    let mut xs: Vec<f32> = (0..1 << 16).map(|k| k as f32 / 65536.0).collect();
    xs.extend((0..200_000).map(|_| u.next_f32()));
    xs.push(1.0 - f32::EPSILON / 2.0);
    xs.extend((0..50_000).map(|_| u.range(-4.0, 4.0)));
    let got = run("sincos_two_pi", &xs);
    let w = worst(&xs, &got, |x| ((TAU * x).sin(), (TAU * x).cos()));
    assert!(w.ulps.iter().chain(&w.absolute).all(|&e| e <= 1.6), "{w:?}");
    // Exact at the quarter turns.
    for (x, expected) in [(0.0, (0.0, 1.0)), (0.25, (1.0, 0.0)), (0.5, (0.0, -1.0)), (0.75, (-1.0, 0.0))] {
        let (s, c) = got[(x * 65536.0) as usize];
        assert!(s == expected.0 && c == expected.1, "{x}: {s} {c}");
    }
}
