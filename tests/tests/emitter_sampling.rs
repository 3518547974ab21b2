//! Emitter direction sampling: chi-square tests of the `area` and `constant` emitters'
//! `sample_direction` against their `pdf_direction` (tests/src/chi2.rs), and the `spot`
//! emitter checked against its analytic intensity (falloff, inverse-square law, placement,
//! projected texture) and its scene parameters.
//!
//! The emitters run compiled: the probes of tests/probes/emitter_probe.drs are linked with the
//! test's plugin types by the runtime's linker (calls through plugin references dispatch as in
//! a render) and compiled by the Cranelift JIT, so millions of samples take a second. The host
//! functions of the area lights are the test's: a rectangle and a disk, sampled uniformly by
//! area as the runtime samples shapes.

use std::f64::consts::PI;

use drs_lower::layout::HostValue;
use drs_render::{Definitions, Scene, TensorValue};
use drs_sema::types::PluginKind;
use drs_tests::chi2::{Chi2Outcome, SphericalChi2};
use drs_tests::plugin_bench::{Bench, Entry, HostFn};
use drs_tests::stdlib_library;
use drs_tests::Uniforms;

// ------------------------------------------------------------------------ vectors (f64)

type V = [f64; 3];

fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(a: V, s: f64) -> V {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V, b: V) -> V {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalize(a: V) -> V {
    scale(a, 1.0 / dot(a, a).sqrt())
}

fn wide(v: [f32; 3]) -> V {
    v.map(f64::from)
}

fn narrow(v: V) -> [f32; 3] {
    v.map(|c| c as f32)
}

// ------------------------------------------------------------------ the area lights' shapes

/// A shape an area light is attached to, as the host sees it.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// The rectangle `center ± u ± v` (u ⊥ v), facing along u × v.
    Rectangle { center: V, u: V, v: V },
    /// The disk of `radius` around `center` in the plane of the orthonormal s and t, facing
    /// along s × t.
    Disk { center: V, s: V, t: V, radius: f64 },
}

/// The shapes by the index an `Area` emitter's `shape` param holds. The rectangle
/// (2.4 x 1.6) hangs at z = 2 facing down and toward +y, the disk (radius 0.9) at z = -1.5
/// facing up and toward -y.
const SHAPES: [Shape; 2] = [
    Shape::Rectangle { center: [0.3, -0.2, 2.0], u: [-1.2, 0.0, 0.0], v: [0.0, 0.64, 0.48] },
    Shape::Disk { center: [-0.5, 0.5, -1.5], s: [1.0, 0.0, 0.0], t: [0.0, 0.6, 0.8], radius: 0.9 },
];

impl Shape {
    fn normal(&self) -> V {
        match *self {
            Shape::Rectangle { u, v, .. } => normalize(cross(u, v)),
            Shape::Disk { s, t, .. } => cross(s, t),
        }
    }

    fn area(&self) -> f64 {
        match *self {
            Shape::Rectangle { u, v, .. } => 4.0 * dot(u, u).sqrt() * dot(v, v).sqrt(),
            Shape::Disk { radius, .. } => PI * radius * radius,
        }
    }

    /// The point for a uniform sample of the unit square: uniform by area.
    fn sample(&self, sample: [f64; 2]) -> V {
        match *self {
            Shape::Rectangle { center, u, v } => {
                add(center, add(scale(u, 2.0 * sample[0] - 1.0), scale(v, 2.0 * sample[1] - 1.0)))
            }
            Shape::Disk { center, s, t, radius } => {
                let (r, phi) = (radius * sample[0].sqrt(), 2.0 * PI * sample[1]);
                add(center, add(scale(s, r * phi.cos()), scale(t, r * phi.sin())))
            }
        }
    }

    /// Where the ray from x in direction d first meets the shape, if it does.
    fn hit(&self, x: V, d: V) -> Option<V> {
        let (center, n) = match *self {
            Shape::Rectangle { center, .. } | Shape::Disk { center, .. } => (center, self.normal()),
        };
        let t = dot(sub(center, x), n) / dot(d, n);
        if !(t > 0.0 && t.is_finite()) {
            return None;
        }
        let y = add(x, scale(d, t));
        let offset = sub(y, center);
        let inside = match *self {
            Shape::Rectangle { u, v, .. } => {
                (dot(offset, u) / dot(u, u)).abs() <= 1.0 && (dot(offset, v) / dot(v, v)).abs() <= 1.0
            }
            Shape::Disk { radius, .. } => dot(offset, offset) <= radius * radius,
        };
        inside.then_some(y)
    }
}

/// `shape_sample_position(shape, time, sample) -> PositionSample` (p, n, uv, time, pdf, delta).
fn shape_sample_position(args: &[u32], out: &mut [u32]) {
    let shape = &SHAPES[args[0] as usize];
    let (time, u, v) = (f32::from_bits(args[1]), f32::from_bits(args[2]), f32::from_bits(args[3]));
    let p = narrow(shape.sample([u as f64, v as f64]));
    let n = narrow(shape.normal());
    let values = [p[0], p[1], p[2], n[0], n[1], n[2], u, v, time, (1.0 / shape.area()) as f32];
    for (o, x) in out.iter_mut().zip(values) {
        *o = x.to_bits();
    }
    out[10] = 0; // delta: false
}

/// `shape_pdf_position(shape) -> f32`: 1 / area.
fn shape_pdf_position(args: &[u32], out: &mut [u32]) {
    out[0] = ((1.0 / SHAPES[args[0] as usize].area()) as f32).to_bits();
}

// ----------------------------------------------------------------------------- harness

/// The emitter queries of tests/probes/emitter_probe.drs for `bench`'s emitters, with the
/// test's shapes as host functions.
fn emitter_probes(bench: &Bench) -> Probes {
    // The emitter handle is the same in every lane of a batch.
    let hosts: [(&str, HostFn); 2] =
        [("shape_sample_position", shape_sample_position), ("shape_pdf_position", shape_pdf_position)];
    let entry = |name: &str| Entry::new(name, bench, 1, &hosts);
    Probes {
        sample: entry("probe_sample_direction"),
        pdf: entry("probe_pdf_direction"),
        eval_direction: entry("probe_eval_direction"),
        eval: entry("probe_emitter_eval"),
        flags: entry("probe_emitter_flags"),
    }
}

/// `[param][lane]` arguments: the emitter handle in every lane, then the lanes' rows of f32
/// arguments (`rows` holds them back to back).
fn probe_args(emitter: u32, lanes: usize, rows: &[f32]) -> Vec<u32> {
    if lanes == 0 {
        return Vec::new();
    }
    let width = rows.len() / lanes;
    let mut args = Vec::with_capacity((1 + width) * lanes);
    args.extend(std::iter::repeat_n(emitter, lanes));
    for c in 0..width {
        args.extend(rows.chunks_exact(width).map(|r| r[c].to_bits()));
    }
    args
}

/// A result of `sample_direction`.
#[derive(Clone, Copy, Debug)]
struct Sampled {
    d: [f32; 3],
    pdf: f32,
    /// Emitted radiance (or irradiance, for delta lights) over pdf; zero when sampling failed.
    weight: [f32; 3],
    p: [f32; 3],
    dist: f32,
    delta: bool,
}

/// The compiled queries of a [`Bench`]'s emitters, for any of its handles.
struct Probes {
    sample: Entry,
    pdf: Entry,
    eval_direction: Entry,
    eval: Entry,
    flags: Entry,
}

/// Rows of (x, y, n) for each target (y, n).
fn target_rows(x: [f32; 3], targets: &[([f32; 3], [f32; 3])]) -> Vec<f32> {
    targets.iter().flat_map(|(y, n)| [x[0], x[1], x[2], y[0], y[1], y[2], n[0], n[1], n[2]]).collect()
}

impl Probes {
    /// `emitter.sample_direction` from x for each sample.
    fn sample_direction(&self, emitter: u32, x: [f32; 3], samples: &[[f32; 2]]) -> Vec<Sampled> {
        let n = samples.len();
        let rows: Vec<f32> = samples.iter().flat_map(|s| [x[0], x[1], x[2], s[0], s[1]]).collect();
        let r = self.sample.call(n, &probe_args(emitter, n, &rows));
        let f = |c: usize, i: usize| f32::from_bits(r[c * n + i]);
        (0..n)
            .map(|i| Sampled {
                d: [f(0, i), f(1, i), f(2, i)],
                pdf: f(3, i),
                weight: [f(4, i), f(5, i), f(6, i)],
                p: [f(7, i), f(8, i), f(9, i)],
                dist: f(10, i),
                delta: r[11 * n + i] != 0,
            })
            .collect()
    }

    /// `emitter.pdf_direction` from x toward each target point y with emitter normal n.
    fn pdf_direction(&self, emitter: u32, x: [f32; 3], targets: &[([f32; 3], [f32; 3])]) -> Vec<f32> {
        self.pdf
            .call(targets.len(), &probe_args(emitter, targets.len(), &target_rows(x, targets)))
            .into_iter()
            .map(f32::from_bits)
            .collect()
    }

    /// `emitter.eval_direction` from x toward each target point y with emitter normal n.
    fn eval_direction(&self, emitter: u32, x: [f32; 3], targets: &[([f32; 3], [f32; 3])]) -> Vec<[f32; 3]> {
        let n = targets.len();
        let r = self.eval_direction.call(n, &probe_args(emitter, n, &target_rows(x, targets)));
        (0..n).map(|i| [0, 1, 2].map(|c| f32::from_bits(r[c * n + i]))).collect()
    }

    /// `emitter.eval` at a surface point seen from the local direction wi.
    fn eval(&self, emitter: u32, wi: [f32; 3]) -> [f32; 3] {
        let r = self.eval.call(1, &probe_args(emitter, 1, &wi));
        [0, 1, 2].map(|c| f32::from_bits(r[c]))
    }

    fn flags(&self, emitter: u32) -> u32 {
        self.flags.call(1, &probe_args(emitter, 1, &[]))[0]
    }
}

fn f(x: f32) -> HostValue {
    HostValue::F32(x)
}

fn list(values: &[f32]) -> HostValue {
    HostValue::List(values.iter().map(|&x| f(x)).collect())
}

// ---------------------------------------------------------------- chi-square: area lights

/// The reference points each area light is seen from (all on its emitting side): straight
/// on, obliquely, and (for the disk) so close that it fills most of a hemisphere.
const AREA_CASES: [(usize, [f32; 3]); 5] =
    [(0, [0.0, 0.0, 0.0]), (0, [1.5, -1.0, 0.5]), (0, [-0.5, 2.0, 1.2]), (1, [0.0, 0.0, 0.0]), (1, [-0.4, 0.3, -1.3])];

/// The density of an area light jumps to zero at the light's outline, which crosses cells:
/// there the quadrature's error falls only like 1 / (points per side), so the cells are
/// integrated with many points (64 x 64: the p-values of the right densities then look
/// uniform over seeds, where 16 x 16 gives systematically small ones and cells that expect
/// nothing but see a few samples in a sliver of the light).
fn area_config(test_count: usize) -> SphericalChi2 {
    SphericalChi2 { sample_count: 300_000, integration_points: 64, test_count, ..SphericalChi2::default() }
}

/// The chi-square test of an area light seen from x: sampled directions against
/// `pdf_direction` times `distortion(cos theta at the light)` (1 for the real density).
fn chi2_area(
    probes: &Probes,
    area: u32,
    shape: &Shape,
    x: [f32; 3],
    config: &SphericalChi2,
    distortion: impl Fn(f64) -> f64,
) -> Chi2Outcome {
    let n = narrow(shape.normal());
    config.run(
        |u| {
            let samples: Vec<[f32; 2]> = u.iter().map(|s| [s[1], s[2]]).collect();
            let sampled = probes.sample_direction(area, x, &samples);
            sampled.into_iter().map(|s| (s.pdf > 0.0 && s.weight != [0.0; 3]).then_some(s.d)).collect()
        },
        |ds| {
            // Directions that miss the shape have density 0; the others ask the emitter.
            let hits: Vec<Option<V>> = ds.iter().map(|&d| shape.hit(wide(x), normalize(wide(d)))).collect();
            let targets: Vec<([f32; 3], [f32; 3])> = hits.iter().flatten().map(|&y| (narrow(y), n)).collect();
            let mut pdfs = probes.pdf_direction(area, x, &targets).into_iter();
            hits.iter()
                .zip(ds)
                .map(|(hit, &d)| match hit {
                    Some(_) => {
                        let cos_light = dot(normalize(wide(d)), shape.normal()).abs();
                        pdfs.next().expect("one density per hit") as f64 * distortion(cos_light)
                    }
                    None => 0.0,
                })
                .collect()
        },
    )
}

fn area_lights() -> (Probes, Vec<u32>) {
    let mut lights = Bench::new();
    let areas = (0..SHAPES.len())
        .map(|k| lights.emitter("area", &[("radiance", list(&[1.5, 2.5, 4.0])), ("shape", HostValue::U32(k as u32))]))
        .collect();
    (emitter_probes(&lights), areas)
}

#[test]
fn area_light_sampling_matches_its_density() {
    let (probes, areas) = area_lights();
    let config = area_config(AREA_CASES.len());
    let mut failures = Vec::new();
    for (k, x) in AREA_CASES {
        let outcome = chi2_area(&probes, areas[k], &SHAPES[k], x, &config, |_| 1.0);
        // Every sample succeeds and the density is normalised (the whole shape is visible).
        let mass_ok = (outcome.total_mass - 1.0).abs() < 2e-3 && outcome.sampled == config.sample_count;
        if !outcome.passed() || !mass_ok {
            failures.push(format!("{:?} seen from {x:?}:\n{outcome}", SHAPES[k]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The test has teeth: the area density without the cosine of the solid-angle conversion
/// fails, and so does that error renormalised (the right mass, the wrong shape).
#[test]
fn area_light_chi2_rejects_a_density_off_by_a_cosine() {
    let (probes, areas) = area_lights();
    let config = area_config(2);
    let x = AREA_CASES[2].1;
    let shape = &SHAPES[0];
    let times_cos = chi2_area(&probes, areas[0], shape, x, &config, |c| c);
    assert!(!times_cos.passed(), "{times_cos}");
    let mass = times_cos.total_mass;
    assert!(mass < 0.95, "the oblique view must make the cosine matter: mass {mass}");
    let renormalised = chi2_area(&probes, areas[0], shape, x, &config, |c| c / mass);
    assert!((renormalised.total_mass - 1.0).abs() < 1e-3, "{renormalised}");
    assert!(!renormalised.passed(), "{renormalised}");
}

// ------------------------------------------------------------- chi-square: environment

#[test]
fn constant_environment_sampling_matches_its_density() {
    let mut lights = Bench::new();
    let radiance = [0.5f32, 1.0, 2.0];
    let constant = lights.emitter("constant", &[("radiance", list(&radiance))]);
    let probes = emitter_probes(&lights);
    let x = [0.3f32, -2.0, 1.0];
    let outcome = SphericalChi2 { sample_count: 500_000, ..SphericalChi2::default() }.run(
        |u| {
            let samples: Vec<[f32; 2]> = u.iter().map(|s| [s[1], s[2]]).collect();
            probes.sample_direction(constant, x, &samples).into_iter().map(|s| Some(s.d)).collect()
        },
        |ds| {
            let targets: Vec<([f32; 3], [f32; 3])> =
                ds.iter().map(|d| (narrow(add(wide(x), wide(*d))), narrow(scale(wide(*d), -1.0)))).collect();
            probes.pdf_direction(constant, x, &targets).into_iter().map(f64::from).collect()
        },
    );
    assert!(outcome.passed() && (outcome.total_mass - 1.0).abs() < 1e-4, "{outcome}");
    // The weight is radiance / pdf for every sample.
    let samples: Vec<[f32; 2]> = Uniforms(9).triples(256).iter().map(|s| [s[0], s[1]]).collect();
    for s in probes.sample_direction(constant, x, &samples) {
        assert!(!s.delta);
        for (w, r) in s.weight.into_iter().zip(radiance) {
            let expected = r as f64 * 4.0 * PI;
            assert!((w as f64 - expected).abs() < 1e-5 * expected, "{s:?}");
        }
    }
}

// ------------------------------------------------------------------ chi-square: envmap

/// A latitude-longitude map of `width` x `height` colour texels: a sky gradient, a black band
/// (texels that must never be sampled) and a bright 2 x 2 sun that holds most of the power.
fn sky_map(width: u32, height: u32) -> TensorValue {
    let mut data = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let t = y as f32 / (height - 1) as f32;
            let mut rgb = if (height / 2..height / 2 + 2).contains(&y) { [0.0; 3] } else { [0.3 + t, 0.5, 1.0 - t] };
            if (2..4).contains(&y) && (width / 3..width / 3 + 2).contains(&x) {
                rgb = rgb.map(|c| c + 300.0);
            }
            data.extend(rgb);
        }
    }
    TensorValue::new([height, width, 3], data).expect("a valid tensor")
}

/// A map's `to_world`: a turn about the axis (1, 2, 3) by 40 degrees.
fn turned() -> HostValue {
    let axis = normalize([1.0, 2.0, 3.0]);
    let (s, c) = 40f64.to_radians().sin_cos();
    // Rodrigues' rotation, column by column.
    let column = |e: V| {
        let v = add(add(scale(e, c), scale(cross(axis, e), s)), scale(axis, dot(axis, e) * (1.0 - c)));
        list(&[v[0] as f32, v[1] as f32, v[2] as f32, 0.0])
    };
    HostValue::List(vec![
        column([1.0, 0.0, 0.0]),
        column([0.0, 1.0, 0.0]),
        column([0.0, 0.0, 1.0]),
        list(&[0.0, 0.0, 0.0, 1.0]),
    ])
}

/// The chi-square test of an environment emitter's direction sampling seen from x.
fn chi2_environment(probes: &Probes, emitter: u32, x: [f32; 3], config: &SphericalChi2) -> Chi2Outcome {
    config.run(
        |u| {
            let samples: Vec<[f32; 2]> = u.iter().map(|s| [s[1], s[2]]).collect();
            probes.sample_direction(emitter, x, &samples).into_iter().map(|s| (s.pdf > 0.0).then_some(s.d)).collect()
        },
        |ds| {
            let targets: Vec<([f32; 3], [f32; 3])> =
                ds.iter().map(|d| (narrow(add(wide(x), wide(*d))), narrow(scale(wide(*d), -1.0)))).collect();
            probes.pdf_direction(emitter, x, &targets).into_iter().map(f64::from).collect()
        },
    )
}

/// The envmap samples by its density: a colour sky with a sun and a black band (turned by
/// `to_world`), a small grey map, a black map (sampled uniformly over its texels, the pole
/// rows' folded tents included), and the sky with `mis_compensation` (only the sun and the
/// sky above the mean luminance get samples). The weight is the radiance over the density, the
/// radiance that `eval` sees from the same direction.
#[test]
fn envmap_sampling_matches_its_density() {
    let mut lights = Bench::new();
    let env = PluginKind::Emitter;
    let sky = lights.instance_with_tensors(
        env,
        "envmap",
        &[("scale", f(2.0)), ("to_world", turned())],
        &[("data", sky_map(24, 12))],
    );
    let grey =
        TensorValue::new([3, 5, 1], vec![0.2, 1.0, 3.0, 0.5, 0.1, 4.0, 0.0, 2.0, 0.3, 1.0, 9.0, 0.2, 0.1, 0.0, 1.0])
            .expect("a valid tensor");
    let small = lights.instance_with_tensors(env, "envmap", &[], &[("data", grey)]);
    let black = TensorValue::new([4, 6, 3], vec![0.0; 72]).expect("a valid tensor");
    let dark = lights.instance_with_tensors(env, "envmap", &[], &[("data", black)]);
    let compensated = lights.instance_with_tensors(
        env,
        "envmap",
        &[("mis_compensation", HostValue::Bool(true))],
        &[("data", sky_map(24, 12))],
    );
    let probes = emitter_probes(&lights);
    let x = [0.3f32, -2.0, 1.0];
    let config =
        SphericalChi2 { sample_count: 500_000, integration_points: 16, test_count: 4, ..SphericalChi2::default() };
    let mut failures = Vec::new();
    for (name, emitter) in [("sky", sky), ("grey", small), ("black", dark), ("compensated", compensated)] {
        let outcome = chi2_environment(&probes, emitter, x, &config);
        if !outcome.passed() || (outcome.total_mass - 1.0).abs() > 2e-3 {
            failures.push(format!("{name}:\n{outcome}"));
        }
        let samples: Vec<[f32; 2]> = Uniforms(5).triples(512).iter().map(|s| [s[0], s[1]]).collect();
        for s in probes.sample_direction(emitter, x, &samples) {
            assert!(!s.delta && s.pdf > 0.0, "{name}: {s:?}");
            let target = [(narrow(add(wide(x), wide(s.d))), narrow(scale(wide(s.d), -1.0)))];
            let pdf = probes.pdf_direction(emitter, x, &target)[0];
            let radiance = probes.eval_direction(emitter, x, &target)[0];
            let seen = probes.eval(emitter, narrow(scale(wide(s.d), -1.0)));
            // The probes rebuild the direction from points (an f32 rounding off), which moves
            // the values by up to ~1e-4 on the steep sides of the sun.
            assert!((pdf - s.pdf).abs() <= 1e-3 * s.pdf, "{name}: pdf_direction {pdf} vs {s:?}");
            for c in 0..3 {
                let expected = radiance[c] / s.pdf;
                assert!((s.weight[c] - expected).abs() <= 1e-3 * expected.max(1e-3), "{name}: {s:?} vs {radiance:?}");
                assert!((seen[c] - radiance[c]).abs() <= 1e-3 * radiance[c].max(1.0), "{name}: eval {seen:?}");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ------------------------------------------------------------------------------ spot

/// Mitsuba's spot profile at angle theta (degrees) from the axis: 1 in the core, 0 at and
/// beyond the cutoff, linear in the angle between.
fn spot_falloff(theta: f64, cutoff: f64, beam: f64) -> f64 {
    if theta >= cutoff {
        0.0
    } else if theta <= beam {
        1.0
    } else {
        (cutoff - theta) / (cutoff - beam)
    }
}

/// The unit direction at polar angle theta and azimuth phi (degrees) in the frame (s, t, n).
fn direction_in(frame: [V; 3], theta: f64, phi: f64) -> V {
    let (t, p) = (theta.to_radians(), phi.to_radians());
    add(add(scale(frame[0], t.sin() * p.cos()), scale(frame[1], t.sin() * p.sin())), scale(frame[2], t.cos()))
}

/// A spot's `to_world`: the columns s * scale[0], t * scale[1], n * scale[2] and the position.
fn spot_to_world(frame: [V; 3], scale_by: V, position: V) -> HostValue {
    let column = |v: V, w: f32| list(&[v[0] as f32, v[1] as f32, v[2] as f32, w]);
    HostValue::List(vec![
        column(scale(frame[0], scale_by[0]), 0.0),
        column(scale(frame[1], scale_by[1]), 0.0),
        column(scale(frame[2], scale_by[2]), 0.0),
        column(position, 1.0),
    ])
}

/// An orthonormal frame (s, t, n) whose n is the unit `axis`.
fn frame_around(axis: V) -> [V; 3] {
    let n = normalize(axis);
    let helper = if n[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
    let s = normalize(cross(helper, n));
    [s, cross(n, s), n]
}

/// Reference points around the spot at angles across the profile (inside the core, on both
/// sides of beam_width, in the transition, on both sides of the cutoff, behind the light)
/// and at several distances: the weight is I * falloff / r^2, pointing at the light.
#[test]
fn spot_light_follows_its_falloff_and_the_inverse_square_law() {
    let intensity = [3.0f32, 5.0, 7.0];
    let (cutoff, beam) = (30.0, 20.0);
    let position: V = [0.5, 2.0, -1.0];
    let frame = frame_around([0.3, -1.0, 0.4]);
    // A non-uniform scale in the light's frame: the profile is measured in the local frame
    // that to_world's inverse gives, where the light's directions live.
    let stretch: V = [2.0, 0.5, 1.5];
    let mut lights = Bench::new();
    let spot = lights.emitter(
        "spot",
        &[
            ("intensity", list(&intensity)),
            ("cutoff_angle", f(cutoff as f32)),
            ("beam_width", f(beam as f32)),
            ("to_world", spot_to_world(frame, stretch, position)),
        ],
    );
    let probes = emitter_probes(&lights);
    assert_eq!(probes.flags(spot), 0x1, "EMITTER_DELTA_POSITION");
    assert_eq!(probes.eval(spot, [0.0, 0.0, 1.0]), [0.0; 3], "a delta position is never hit");

    for theta in [0.0, 8.0, 19.5, 20.5, 24.0, 27.5, 29.5, 30.5, 60.0, 150.0] {
        for phi in [0.0, 70.0, 200.0] {
            for r in [0.4, 1.0, 3.5] {
                let local = direction_in([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], theta, phi);
                let stretched = [local[0] * stretch[0], local[1] * stretch[1], local[2] * stretch[2]];
                let world = normalize(add(
                    add(scale(frame[0], stretched[0]), scale(frame[1], stretched[1])),
                    scale(frame[2], stretched[2]),
                ));
                let x = narrow(add(position, scale(world, r)));
                let s = probes.sample_direction(spot, x, &[[0.3, 0.8]])[0];
                let what = format!("theta {theta}, phi {phi}, r {r}");
                // The distance from the f32 reference point, and the profile at theta.
                let to_light = sub(position, wide(x));
                let dist2 = dot(to_light, to_light);
                let expected = spot_falloff(theta, cutoff, beam) / dist2;
                for (w, i) in s.weight.into_iter().zip(intensity) {
                    let e = i as f64 * expected;
                    assert!((w as f64 - e).abs() <= 1e-4 * e + 1e-6, "{what}: weight {:?}, expected {e}", s.weight);
                }
                assert!(s.delta && s.pdf == 1.0, "{what}: {s:?}");
                assert_eq!(s.p, narrow(position), "{what}");
                assert!((s.dist as f64 - dist2.sqrt()).abs() < 1e-5 * r, "{what}: dist {}", s.dist);
                let d = wide(s.d);
                assert!((dot(d, to_light) - dist2.sqrt()).abs() < 1e-5 * r, "{what}: d {d:?} points at the light");
                let target = [(s.p, [0.0; 3])];
                assert_eq!(probes.eval_direction(spot, x, &target)[0], s.weight, "{what}: eval_direction");
                assert_eq!(probes.pdf_direction(spot, x, &target)[0], 0.0, "{what}: pdf_direction");
            }
        }
    }
}

/// Mitsuba's defaults (20 degree cutoff, core 3/4 of it); and a core at least as wide as
/// the cone leaves a hard edge at the cutoff.
#[test]
fn spot_light_defaults_and_hard_edges() {
    let mut lights = Bench::new();
    let default = lights.emitter("spot", &[]);
    let hard = lights.emitter("spot", &[("cutoff_angle", f(20.0)), ("beam_width", f(25.0))]);
    let probes = emitter_probes(&lights);
    // The default light sits at the origin and shines along +z.
    let at = |spot: u32, theta: f64| {
        let x = narrow(scale(direction_in([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], theta, 30.0), 2.0));
        probes.sample_direction(spot, x, &[[0.5, 0.5]])[0].weight[0] as f64 * 4.0
    };
    for theta in [0.0, 10.0, 14.5, 15.5, 17.5, 19.5, 20.5, 45.0] {
        let expected = spot_falloff(theta, 20.0, 15.0);
        assert!(
            (at(default, theta) - expected).abs() < 1e-4,
            "default at {theta}: {} vs {expected}",
            at(default, theta)
        );
    }
    assert!((at(hard, 19.8) - 1.0).abs() < 1e-5 && at(hard, 20.2) == 0.0);
}

/// A projected texture multiplies the intensity at uv = 0.5 + 0.5 (x, y) / (z tan(cutoff))
/// of the local direction: a checkerboard's four quadrants meet on the axis, color0 where x
/// and y have the same sign.
#[test]
fn spot_light_projects_its_texture() {
    let mut lights = Bench::new();
    let (color0, color1) = ([1.0f32, 0.5, 0.25], [0.1f32, 0.2, 0.3]);
    let checker =
        lights.instance(PluginKind::Texture, "checkerboard", &[("color0", list(&color0)), ("color1", list(&color1))]);
    let spot = lights.emitter("spot", &[("intensity", list(&[2.0; 3])), ("texture", HostValue::Handle(checker))]);
    let probes = emitter_probes(&lights);
    let axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for (phi, colour) in [(45.0, color0), (135.0, color1), (225.0, color0), (315.0, color1)] {
        let x = narrow(direction_in(axes, 10.0, phi));
        let weight = probes.sample_direction(spot, x, &[[0.5, 0.5]])[0].weight;
        let expected = colour.map(|c| 2.0 * c);
        assert!(
            weight.iter().zip(expected).all(|(w, e)| (w - e).abs() < 1e-5),
            "phi {phi}: {weight:?} vs {expected:?}"
        );
    }
}

// ------------------------------------------------------------------- spot in a scene

fn spot_scene(emitter: &str) -> Result<Scene, String> {
    let text = format!(
        "<scene version=\"3.0.0\">\n<sensor type=\"perspective\"><float name=\"fov\" value=\"40\"/></sensor>\n\
         <shape type=\"rectangle\"/>\n{emitter}\n</scene>"
    );
    let path = drs_tests::workspace_root().join("virtual.xml");
    Scene::load_str(&text, path, &Definitions::new(), stdlib_library())
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

/// beam_width defaults to 3/4 of the scene's cutoff_angle (Mitsuba's rule), a given one is
/// kept, and to_world reaches the light as its matrix.
#[test]
fn spot_scene_parameters() {
    let scene = spot_scene(
        "<emitter type=\"spot\"><float name=\"cutoff_angle\" value=\"22\"/>\
         <transform name=\"to_world\"><translate x=\"1\" y=\"2\" z=\"3\"/></transform></emitter>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let values = |key: &str| scene.params().values(key).unwrap_or_else(|e| panic!("{key}: {e}"));
    assert_eq!(values("emitter0.cutoff_angle"), [22.0]);
    assert_eq!(values("emitter0.beam_width"), [16.5]);
    assert_eq!(&values("emitter0.to_world")[12..], [1.0, 2.0, 3.0, 1.0], "the translation column");
    let scene = spot_scene("<emitter type=\"spot\"><float name=\"beam_width\" value=\"4\"/></emitter>")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.params().values("emitter0.cutoff_angle").unwrap(), [20.0]);
    assert_eq!(scene.params().values("emitter0.beam_width").unwrap(), [4.0]);
}

/// Angles out of range are errors at their element.
#[test]
fn spot_scene_values_out_of_range_are_located_errors() {
    for (param, value) in
        [("cutoff_angle", "0"), ("cutoff_angle", "-10"), ("cutoff_angle", "190"), ("beam_width", "-1")]
    {
        let e =
            spot_scene(&format!("<emitter type=\"spot\">\n  <float name=\"{param}\" value=\"{value}\"/>\n</emitter>"))
                .err()
                .unwrap_or_else(|| panic!("{param} = {value} loads"));
        assert!(e.contains("virtual.xml:5:3") && e.contains(param), "{param} = {value}: {e}");
    }
}
