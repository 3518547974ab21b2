//! The Fresnel and microfacet library and the conductor family of BSDFs (`conductor`,
//! `roughconductor`) with the adapters `twosided`, `blendbsdf` and `mask`, checked against
//! independent formulas, by chi-square tests of their sampling against their densities, and
//! for reciprocity and energy conservation.

use std::f64::consts::PI;

use drs_render::TensorValue;
use drs_sema::types::PluginKind;
use drs_tests::chi2::SphericalChi2;
use drs_tests::plugin_bench::{call_function, Bench, HostValue, Probes, Sampled, TRANSPORT_RADIANCE};
use drs_tests::Uniforms;

// ------------------------------------------------------------------------------- helpers

fn f(x: f32) -> HostValue {
    HostValue::F32(x)
}

fn rgb(c: [f32; 3]) -> HostValue {
    HostValue::List(c.iter().map(|&x| f(x)).collect())
}

fn float(v: &HostValue) -> f64 {
    match v {
        HostValue::F32(x) => *x as f64,
        other => panic!("not a float: {other}"),
    }
}

fn items(v: &HostValue) -> &[HostValue] {
    match v {
        HostValue::Tuple(items) | HostValue::List(items) => items,
        other => panic!("not a tuple: {other}"),
    }
}

/// The unit direction with polar angle theta (degrees) and azimuth phi (degrees).
fn dir(theta: f64, phi: f64) -> [f32; 3] {
    let (t, p) = (theta.to_radians(), phi.to_radians());
    [(t.sin() * p.cos()) as f32, (t.sin() * p.sin()) as f32, t.cos() as f32]
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

// ------------------------------------------------------------------- Fresnel, independently

/// A complex number, for the textbook Fresnel equations.
#[derive(Clone, Copy, Debug)]
struct C(f64, f64);

impl C {
    fn add(self, o: C) -> C {
        C(self.0 + o.0, self.1 + o.1)
    }
    fn sub(self, o: C) -> C {
        C(self.0 - o.0, self.1 - o.1)
    }
    fn mul(self, o: C) -> C {
        C(self.0 * o.0 - self.1 * o.1, self.0 * o.1 + self.1 * o.0)
    }
    fn div(self, o: C) -> C {
        let d = o.0 * o.0 + o.1 * o.1;
        C((self.0 * o.0 + self.1 * o.1) / d, (self.1 * o.0 - self.0 * o.1) / d)
    }
    fn norm2(self) -> f64 {
        self.0 * self.0 + self.1 * self.1
    }
    /// The principal square root.
    fn sqrt(self) -> C {
        let r = self.norm2().sqrt();
        let re = ((r + self.0) / 2.0).max(0.0).sqrt();
        let im = ((r - self.0) / 2.0).max(0.0).sqrt();
        C(re, if self.1 < 0.0 { -im } else { im })
    }
}

/// Unpolarised reflectance of light from a medium of index 1 onto one of complex index n
/// at incidence cosine cos_i: the Fresnel amplitude coefficients with Snell's law in
/// complex form, cos_t = sqrt(1 - sin_i^2 / n^2).
fn textbook_fresnel(cos_i: f64, n: C) -> f64 {
    let sin2 = 1.0 - cos_i * cos_i;
    let ci = C(cos_i, 0.0);
    let ct = C(1.0, 0.0).sub(C(sin2, 0.0).div(n.mul(n))).sqrt();
    let rs = ci.sub(n.mul(ct)).div(ci.add(n.mul(ct)));
    let rp = n.mul(ci).sub(ct).div(n.mul(ci).add(ct));
    0.5 * (rs.norm2() + rp.norm2())
}

fn dielectric(cos_i: f32, eta: f32) -> [f64; 4] {
    let out = call_function("fresnel", &[f(cos_i), f(eta)]);
    let v = items(&out);
    [float(&v[0]), float(&v[1]), float(&v[2]), float(&v[3])]
}

fn conductor(cos_i: f32, eta: [f32; 3], k: [f32; 3]) -> [f64; 3] {
    let out = call_function("fresnel_conductor", &[f(cos_i), rgb(eta), rgb(k)]);
    let v = items(&out);
    [float(&v[0]), float(&v[1]), float(&v[2])]
}

#[test]
fn dielectric_fresnel_matches_the_fresnel_equations() {
    for eta in [1.5f32, 1.33, 2.4, 0.7] {
        for k in 0..=20 {
            let cos_i = k as f32 / 20.0;
            let [r, cos_t, eta_it, eta_ti] = dielectric(cos_i, eta);
            // Light from outside onto index eta (eta < 1 is like light leaving glass).
            let sin_t2 = (1.0 - (cos_i as f64).powi(2)) / (eta as f64).powi(2);
            let expected = if sin_t2 >= 1.0 { 1.0 } else { textbook_fresnel(cos_i as f64, C(eta as f64, 0.0)) };
            let expected = if cos_i == 0.0 { 1.0 } else { expected };
            assert!(close(r, expected, 2e-6), "F({cos_i}, {eta}) = {r}, expected {expected}");
            assert!(close(cos_t, -(1.0 - sin_t2).max(0.0).sqrt(), 2e-6), "cos_t({cos_i}, {eta}) = {cos_t}");
            assert_eq!((eta_it, eta_ti), (eta as f64, (1.0 / eta) as f64));
            // From inside a medium of relative index 1 / eta the interface looks the same:
            // the same reflectance, the refracted ray on the other (upper) side.
            if cos_i == 0.0 {
                continue; // -0.0 counts as outside
            }
            let [r_in, cos_t_in, eta_it_in, eta_ti_in] = dielectric(-cos_i, 1.0 / eta);
            assert!(close(r_in, r, 2e-6) && close(cos_t_in, -cos_t, 2e-6), "from inside at {cos_i}, {eta}");
            assert!(close(eta_it_in, eta as f64, 1e-6) && close(eta_ti_in, 1.0 / eta as f64, 1e-6));
        }
    }
}

#[test]
fn dielectric_fresnel_special_cases() {
    // Normal incidence: ((n - 1) / (n + 1))^2 from either side.
    for n in [1.5f32, 1.33, 2.0] {
        let expected = ((n as f64 - 1.0) / (n as f64 + 1.0)).powi(2);
        assert!(close(dielectric(1.0, n)[0], expected, 1e-6));
        assert!(close(dielectric(-1.0, n)[0], expected, 1e-6));
    }
    // Brewster's angle, tan(theta_B) = n: p-polarised light is not reflected, so the
    // unpolarised reflectance is R_s / 2 with R_s = ((n^2 - 1) / (n^2 + 1))^2 there.
    let n = 1.5f64;
    let cos_b = 1.0 / (1.0 + n * n).sqrt();
    let r_s = ((n * n - 1.0) / (n * n + 1.0)).powi(2);
    assert!(close(dielectric(cos_b as f32, n as f32)[0], r_s / 2.0, 1e-5));
    // Total internal reflection beyond the critical angle, sin(theta_c) = 1 / n.
    let [r, cos_t, _, _] = dielectric(-0.3, 1.5);
    assert_eq!((r, cos_t), (1.0, 0.0));
    // An index-matched interface lets everything through undeflected.
    let [r, cos_t, _, _] = dielectric(0.6, 1.0);
    assert_eq!(r, 0.0);
    assert!(close(cos_t, -0.6, 1e-7));
}

#[test]
fn conductor_fresnel_matches_the_complex_fresnel_equations() {
    // Gold- and aluminium-like RGB constants, and a plain dielectric (k = 0).
    let eta = [0.2f32, 1.1, 1.5];
    let k = [3.6f32, 7.5, 0.0];
    for step in 0..=20 {
        let cos_i = (step as f32 / 20.0).max(1e-3);
        let r = conductor(cos_i, eta, k);
        for c in 0..3 {
            let expected = textbook_fresnel(cos_i as f64, C(eta[c] as f64, k[c] as f64));
            assert!(close(r[c], expected, 1e-5), "channel {c} at cos {cos_i}: {} vs {expected}", r[c]);
        }
    }
    // Normal incidence: ((n - 1)^2 + k^2) / ((n + 1)^2 + k^2); Mitsuba's default (0, 1) is a
    // perfect mirror at every angle.
    let r = conductor(1.0, eta, k);
    for c in 0..3 {
        let (n, kk) = (eta[c] as f64, k[c] as f64);
        assert!(close(r[c], ((n - 1.0).powi(2) + kk * kk) / ((n + 1.0).powi(2) + kk * kk), 1e-6));
    }
    for cos_i in [1.0f32, 0.5, 0.1] {
        assert!(conductor(cos_i, [0.0; 3], [1.0; 3]).iter().all(|&r| close(r, 1.0, 1e-6)));
    }
}

#[test]
fn diffuse_fresnel_reflectance_fits_the_cosine_weighted_integral() {
    for eta in [0.6f32, 0.75, 0.9, 1.1, 1.33, 1.5, 2.0, 3.0] {
        // 2 \int_0^1 F(c) c dc by the midpoint rule.
        let n = 2000;
        let integral: f64 = (0..n)
            .map(|i| {
                let c = (i as f64 + 0.5) / n as f64;
                let r = if (1.0 - c * c) / (eta as f64).powi(2) >= 1.0 {
                    1.0
                } else {
                    textbook_fresnel(c, C(eta as f64, 0.0))
                };
                2.0 * r * c / n as f64
            })
            .sum();
        let fit = float(&call_function("fresnel_diffuse_reflectance", &[f(eta)]));
        assert!((fit - integral).abs() <= 0.01 * integral, "eta {eta}: fit {fit}, integral {integral}");
    }
}

// --------------------------------------------------------------------- chi-square helpers

/// A chi-square test of `bsdf`'s sampling at wi against its pdf: smooth samples only (delta
/// ones count nowhere, matching a pdf that leaves them out).
fn chi2_bsdf(probes: &Probes, bsdf: u32, wi: [f32; 3], config: &SphericalChi2) -> drs_tests::chi2::Chi2Outcome {
    config.run(
        |u| {
            probes
                .sample(bsdf, TRANSPORT_RADIANCE, wi, u)
                .into_iter()
                .map(|s| (!s.failed() && s.pdf > 0.0 && s.sampled_type & DELTA == 0).then_some(s.wo))
                .collect()
        },
        |ds| probes.pdf(bsdf, TRANSPORT_RADIANCE, wi, ds).into_iter().map(f64::from).collect(),
    )
}

const GLOSSY_REFLECTION: u32 = 0x8;
const DIFFUSE_REFLECTION: u32 = 0x2;
const DELTA_REFLECTION: u32 = 0x20;
const NULL: u32 = 0x1;
const DELTA: u32 = NULL | DELTA_REFLECTION | 0x40;
const FRONT_SIDE: u32 = 0x8000;
const BACK_SIDE: u32 = 0x10000;

const BECKMANN: u32 = 0;
const GGX: u32 = 1;

/// Incident directions (theta, phi in degrees) of the sampling tests: near the normal, in
/// between, and grazing.
const INCIDENT: [(f64, f64); 3] = [(5.0, 30.0), (45.0, 120.0), (80.0, 250.0)];

/// (distribution, alpha_u, alpha_v, sample_visible) of the rough conductors under test.
const ROUGH: [(u32, f32, f32, bool); 8] = [
    (BECKMANN, 0.2, 0.2, true),
    (BECKMANN, 0.5, 0.5, false),
    (BECKMANN, 0.15, 0.45, true),
    (BECKMANN, 0.4, 0.15, false),
    (GGX, 0.2, 0.2, true),
    (GGX, 0.6, 0.6, false),
    (GGX, 0.15, 0.45, true),
    (GGX, 0.4, 0.15, false),
];

fn rough_conductor(bench: &mut Bench, (distribution, alpha_u, alpha_v, visible): (u32, f32, f32, bool)) -> u32 {
    bench.bsdf(
        "roughconductor",
        &[
            ("distribution", HostValue::U32(distribution)),
            ("alpha_u", f(alpha_u)),
            ("alpha_v", f(alpha_v)),
            ("sample_visible", HostValue::Bool(visible)),
            ("eta", rgb([0.2, 1.1, 1.5])),
            ("k", rgb([3.6, 2.5, 0.0])),
        ],
    )
}

// ------------------------------------------------------------------------- the harness

/// The harness is not blind: the diffuse BSDF's cosine-weighted samples pass against its own
/// pdf and fail against a uniform hemisphere density.
#[test]
fn chi2_rejects_diffuse_samples_against_a_uniform_density() {
    let mut bench = Bench::new();
    let diffuse = bench.bsdf("diffuse", &[]);
    let probes = bench.compile();
    let config = SphericalChi2 { sample_count: 200_000, test_count: 2, ..SphericalChi2::default() };
    let wi = dir(30.0, 10.0);
    let right = chi2_bsdf(&probes, diffuse, wi, &config);
    assert!(right.passed(), "{right}");
    let wrong = config.run(
        |u| probes.sample(diffuse, TRANSPORT_RADIANCE, wi, u).into_iter().map(|s| Some(s.wo)).collect(),
        |ds| ds.iter().map(|d| if d[2] > 0.0 { 0.5 / PI } else { 0.0 }).collect(),
    );
    assert!(!wrong.passed(), "{wrong}");
}

// ------------------------------------------------------------------------ rough conductor

#[test]
fn roughconductor_sampling_matches_its_pdf() {
    let mut bench = Bench::new();
    let bsdfs: Vec<u32> = ROUGH.iter().map(|&c| rough_conductor(&mut bench, c)).collect();
    let probes = bench.compile();
    let config =
        SphericalChi2 { sample_count: 500_000, test_count: ROUGH.len() * INCIDENT.len(), ..SphericalChi2::default() };
    let mut failures = Vec::new();
    for (&bsdf, case) in bsdfs.iter().zip(ROUGH) {
        for (theta, phi) in INCIDENT {
            let outcome = chi2_bsdf(&probes, bsdf, dir(theta, phi), &config);
            if !outcome.passed() {
                failures.push(format!("{case:?} at wi ({theta}, {phi}):\n{outcome}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A pdf that is wrong by a little is caught: the sampling of the anisotropic GGX with the
/// density of a slightly rougher one.
#[test]
fn roughconductor_chi2_catches_a_slightly_wrong_roughness() {
    let mut bench = Bench::new();
    let sampler = rough_conductor(&mut bench, (GGX, 0.15, 0.45, true));
    let density = rough_conductor(&mut bench, (GGX, 0.15 * 1.05, 0.45 * 1.05, true));
    let probes = bench.compile();
    let wi = dir(45.0, 120.0);
    let config = SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() };
    let outcome = config.run(
        |u| {
            probes
                .sample(sampler, TRANSPORT_RADIANCE, wi, u)
                .into_iter()
                .map(|s| (!s.failed()).then_some(s.wo))
                .collect()
        },
        |ds| probes.pdf(density, TRANSPORT_RADIANCE, wi, ds).into_iter().map(f64::from).collect(),
    );
    assert!(!outcome.passed(), "{outcome}");
}

/// Checks, for samples of `bsdf` at wi, that weight = eval / pdf and pdf = pdf(wo).
fn assert_weights_consistent(probes: &Probes, bsdf: u32, wi: [f32; 3], what: &str) -> Vec<Sampled> {
    let samples = probes.sample(bsdf, TRANSPORT_RADIANCE, wi, &Uniforms(3).triples(4000));
    let smooth: Vec<Sampled> = samples.into_iter().filter(|s| !s.failed() && s.sampled_type & DELTA == 0).collect();
    let wos: Vec<[f32; 3]> = smooth.iter().map(|s| s.wo).collect();
    let evals = probes.eval(bsdf, TRANSPORT_RADIANCE, wi, &wos);
    let pdfs = probes.pdf(bsdf, TRANSPORT_RADIANCE, wi, &wos);
    for ((s, e), p) in smooth.iter().zip(&evals).zip(&pdfs) {
        assert!(close(s.pdf as f64, *p as f64, 2e-3), "{what}: sampled pdf {} but pdf(wo) {p} at {:?}", s.pdf, s.wo);
        for (weight, value) in s.weight.iter().zip(e) {
            let expected = *value as f64 / *p as f64;
            assert!(close(*weight as f64, expected, 2e-3), "{what}: weight {:?} but eval / pdf {expected}", s.weight);
        }
    }
    smooth
}

#[test]
fn roughconductor_sample_weight_is_eval_over_pdf() {
    let mut bench = Bench::new();
    let bsdfs: Vec<u32> = ROUGH.iter().map(|&c| rough_conductor(&mut bench, c)).collect();
    let probes = bench.compile();
    for (&bsdf, case) in bsdfs.iter().zip(ROUGH) {
        for (theta, phi) in INCIDENT {
            let smooth = assert_weights_consistent(&probes, bsdf, dir(theta, phi), &format!("{case:?}"));
            assert!(smooth.len() > 1000, "{case:?}: most samples succeed");
            assert!(smooth.iter().all(|s| s.sampled_type == GLOSSY_REFLECTION && s.wo[2] > 0.0 && s.eta == 1.0));
        }
    }
}

#[test]
fn roughconductor_is_reciprocal() {
    let mut bench = Bench::new();
    let bsdfs: Vec<u32> = ROUGH.iter().map(|&c| rough_conductor(&mut bench, c)).collect();
    let probes = bench.compile();
    let mut rng = Uniforms(5);
    for &bsdf in &bsdfs {
        for _ in 0..200 {
            let a = dir(89.0 * rng.next_f32() as f64, 360.0 * rng.next_f32() as f64);
            let b = dir(89.0 * rng.next_f32() as f64, 360.0 * rng.next_f32() as f64);
            let fab = probes.eval(bsdf, TRANSPORT_RADIANCE, a, &[b])[0];
            let fba = probes.eval(bsdf, TRANSPORT_RADIANCE, b, &[a])[0];
            for c in 0..3 {
                let (x, y) = (fab[c] as f64 / b[2] as f64, fba[c] as f64 / a[2] as f64);
                assert!((x - y).abs() <= 1e-4 * x.abs().max(y.abs()) + 1e-7, "f({a:?}, {b:?}) = {x} but f(b, a) = {y}");
            }
        }
    }
}

/// With F = 1 (the default eta = 0, k = 1) a rough mirror loses only what Smith's masking
/// removes: its albedo is at most 1, close to 1 for smooth surfaces and near the normal, and
/// the mean sample weight agrees with the integral of eval.
#[test]
fn roughconductor_white_furnace() {
    let mut bench = Bench::new();
    let cases = [(BECKMANN, 0.05f32), (GGX, 0.05), (BECKMANN, 0.3), (GGX, 0.3), (BECKMANN, 0.8), (GGX, 0.8)];
    let bsdfs: Vec<u32> = cases
        .iter()
        .map(|&(d, a)| bench.bsdf("roughconductor", &[("distribution", HostValue::U32(d)), ("alpha", f(a))]))
        .collect();
    let probes = bench.compile();
    let n = 200_000;
    let u = Uniforms(9).triples(n);
    for (&bsdf, (d, alpha)) in bsdfs.iter().zip(cases) {
        for theta in [0.0, 40.0, 70.0, 85.0] {
            let wi = dir(theta, 60.0);
            let weights: Vec<f64> =
                probes.sample(bsdf, TRANSPORT_RADIANCE, wi, &u).iter().map(|s| s.weight[0] as f64).collect();
            let albedo = weights.iter().sum::<f64>() / n as f64;
            assert!(
                weights.iter().all(|&w| (0.0..=1.0 + 1e-6).contains(&w)),
                "({d}, {alpha}) at {theta}: a weight above 1"
            );
            assert!(albedo <= 1.0, "({d}, {alpha}) at {theta}: albedo {albedo}");
            if alpha <= 0.05 && theta <= 40.0 {
                assert!(albedo > 0.995, "({d}, {alpha}) at {theta}: albedo {albedo}");
            }
            // The same albedo as the integral of eval over the hemisphere (uniform directions).
            let wos: Vec<[f32; 3]> = u
                .iter()
                .map(|s| {
                    let z = s[1] as f64;
                    let r = (1.0 - z * z).sqrt();
                    let phi = 2.0 * PI * s[2] as f64;
                    [(r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32]
                })
                .collect();
            let values = probes.eval(bsdf, TRANSPORT_RADIANCE, wi, &wos);
            let integral = values.iter().map(|v| v[0] as f64).sum::<f64>() * 2.0 * PI / n as f64;
            let variance = values.iter().map(|v| (v[0] as f64 * 2.0 * PI - integral).powi(2)).sum::<f64>() / n as f64;
            let stderr = (variance / n as f64).sqrt();
            assert!(
                (integral - albedo).abs() <= 5.0 * stderr + 2e-3,
                "({d}, {alpha}) at {theta}: sampled albedo {albedo}, integral {integral} ± {stderr}"
            );
        }
    }
}

// ---------------------------------------------------------------------- smooth conductor

#[test]
fn conductor_is_a_fresnel_mirror() {
    let mut bench = Bench::new();
    let mirror = bench.bsdf("conductor", &[]);
    let (eta, k, tint) = ([0.2f32, 1.1, 1.5], [3.6f32, 2.5, 0.0], [0.9f32, 0.8, 0.5]);
    let gold = bench.bsdf("conductor", &[("eta", rgb(eta)), ("k", rgb(k)), ("specular_reflectance", rgb(tint))]);
    let probes = bench.compile();
    assert_eq!(probes.flags(mirror), DELTA_REFLECTION | FRONT_SIDE);
    let u = Uniforms(11).triples(16);
    for (theta, phi) in [(0.0, 0.0), (30.0, 40.0), (75.0, 200.0), (89.5, 300.0)] {
        let wi = dir(theta, phi);
        for s in probes.sample(mirror, TRANSPORT_RADIANCE, wi, &u) {
            // F = 1 exactly: the weight is exactly 1.
            assert_eq!(s.weight, [1.0; 3], "at {theta}");
            assert_eq!(s.wo, [-wi[0], -wi[1], wi[2]]);
            assert_eq!((s.pdf, s.sampled_type, s.eta), (1.0, DELTA_REFLECTION, 1.0));
        }
        let s = probes.sample(gold, TRANSPORT_RADIANCE, wi, &u[..1])[0];
        let expected = conductor(wi[2], eta, k);
        for c in 0..3 {
            assert!(close(s.weight[c] as f64, expected[c] * tint[c] as f64, 1e-6), "gold at {theta}: {:?}", s.weight);
        }
        // A delta lobe: nothing to evaluate.
        assert_eq!(probes.eval(gold, TRANSPORT_RADIANCE, wi, &[[-wi[0], -wi[1], wi[2]]])[0], [0.0; 3]);
        assert_eq!(probes.pdf(gold, TRANSPORT_RADIANCE, wi, &[[-wi[0], -wi[1], wi[2]]])[0], 0.0);
    }
    // From below, a one-sided conductor reflects nothing.
    assert!(probes.sample(gold, TRANSPORT_RADIANCE, dir(120.0, 0.0), &u).iter().all(Sampled::failed));
}

// ------------------------------------------------------------------------------ adapters

#[test]
fn twosided_mirrors_queries_from_the_back() {
    let mut bench = Bench::new();
    let front = bench.bsdf("diffuse", &[("reflectance", rgb([0.8, 0.4, 0.2]))]);
    let back = rough_conductor(&mut bench, (GGX, 0.3, 0.3, true));
    let one = bench.bsdf("twosided", &[("brdf_0", HostValue::Handle(front))]);
    let two = bench.bsdf("twosided", &[("brdf_0", HostValue::Handle(front)), ("brdf_1", HostValue::Handle(back))]);
    let probes = bench.compile();
    assert_eq!(probes.flags(one), DIFFUSE_REFLECTION | FRONT_SIDE | BACK_SIDE);
    assert_eq!(probes.flags(two), DIFFUSE_REFLECTION | GLOSSY_REFLECTION | FRONT_SIDE | BACK_SIDE);
    let flip = |v: [f32; 3]| [v[0], v[1], -v[2]];
    let mut rng = Uniforms(13);
    for _ in 0..100 {
        let wi = dir(85.0 * rng.next_f32() as f64, 360.0 * rng.next_f32() as f64);
        let wo = dir(85.0 * rng.next_f32() as f64, 360.0 * rng.next_f32() as f64);
        for (adapter, back_side) in [(one, front), (two, back)] {
            // The front side is the nested front BSDF itself.
            assert_eq!(probes.eval(adapter, 0, wi, &[wo]), probes.eval(front, 0, wi, &[wo]));
            assert_eq!(probes.pdf(adapter, 0, wi, &[wo]), probes.pdf(front, 0, wi, &[wo]));
            // The back side is the back BSDF seen from the front.
            assert_eq!(probes.eval(adapter, 0, flip(wi), &[flip(wo)]), probes.eval(back_side, 0, wi, &[wo]));
            assert_eq!(probes.pdf(adapter, 0, flip(wi), &[flip(wo)]), probes.pdf(back_side, 0, wi, &[wo]));
            let u = rng.triples(1);
            let s = probes.sample(adapter, 0, flip(wi), &u)[0];
            let t = probes.sample(back_side, 0, wi, &u)[0];
            assert_eq!((flip(s.wo), s.pdf, s.weight), (t.wo, t.pdf, t.weight));
        }
    }
    // Back-side sampling against the back-side pdf.
    let config = SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() };
    let outcome = chi2_bsdf(&probes, two, flip(dir(40.0, 70.0)), &config);
    assert!(outcome.passed(), "{outcome}");
}

#[test]
fn blendbsdf_mixes_values_densities_and_samples() {
    let mut bench = Bench::new();
    let diffuse = bench.bsdf("diffuse", &[("reflectance", rgb([0.2, 0.5, 0.9]))]);
    let metal = rough_conductor(&mut bench, (BECKMANN, 0.2, 0.2, true));
    let w = 0.3f32;
    let blend = bench.bsdf(
        "blendbsdf",
        &[("weight", f(w)), ("bsdf_0", HostValue::Handle(diffuse)), ("bsdf_1", HostValue::Handle(metal))],
    );
    let probes = bench.compile();
    assert_eq!(probes.flags(blend), DIFFUSE_REFLECTION | GLOSSY_REFLECTION | FRONT_SIDE);
    let wi = dir(35.0, 20.0);
    let wos: Vec<[f32; 3]> = (0..50).map(|i| dir(1.7 * i as f64, 37.0 * i as f64)).collect();
    let (e, e0, e1) =
        (probes.eval(blend, 0, wi, &wos), probes.eval(diffuse, 0, wi, &wos), probes.eval(metal, 0, wi, &wos));
    let (p, p0, p1) =
        (probes.pdf(blend, 0, wi, &wos), probes.pdf(diffuse, 0, wi, &wos), probes.pdf(metal, 0, wi, &wos));
    for i in 0..wos.len() {
        let mix = |a: f32, b: f32| (1.0 - w as f64) * a as f64 + w as f64 * b as f64;
        assert!(close(p[i] as f64, mix(p0[i], p1[i]), 1e-5));
        for c in 0..3 {
            assert!(close(e[i][c] as f64, mix(e0[i][c], e1[i][c]), 1e-5));
        }
    }
    assert_weights_consistent(&probes, blend, wi, "blendbsdf");
    let config = SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() };
    let outcome = chi2_bsdf(&probes, blend, wi, &config);
    assert!(outcome.passed(), "{outcome}");
}

#[test]
fn mask_lets_light_through_where_it_is_transparent() {
    let mut bench = Bench::new();
    let diffuse = bench.bsdf("diffuse", &[("reflectance", rgb([0.2, 0.5, 0.9]))]);
    let opacity = 0.35f32;
    let mask = bench.bsdf("mask", &[("opacity", f(opacity)), ("nested_bsdf", HostValue::Handle(diffuse))]);
    let probes = bench.compile();
    assert_eq!(probes.flags(mask), DIFFUSE_REFLECTION | FRONT_SIDE | NULL | FRONT_SIDE | BACK_SIDE);
    let wi = dir(50.0, 80.0);
    let wos: Vec<[f32; 3]> = (0..40).map(|i| dir(2.0 * i as f64, 41.0 * i as f64)).collect();
    let (e, e0) = (probes.eval(mask, 0, wi, &wos), probes.eval(diffuse, 0, wi, &wos));
    let (p, p0) = (probes.pdf(mask, 0, wi, &wos), probes.pdf(diffuse, 0, wi, &wos));
    for i in 0..wos.len() {
        assert!(close(p[i] as f64, opacity as f64 * p0[i] as f64, 1e-6));
        for c in 0..3 {
            assert!(close(e[i][c] as f64, opacity as f64 * e0[i][c] as f64, 1e-6));
        }
    }
    let n = 100_000;
    let samples = probes.sample(mask, 0, wi, &Uniforms(17).triples(n));
    let through: Vec<&Sampled> = samples.iter().filter(|s| s.sampled_type == NULL).collect();
    // Binomial count of null samples: within 5 standard deviations.
    let (mean, sd) = (n as f64 * (1.0 - opacity as f64), (n as f64 * opacity as f64 * (1.0 - opacity as f64)).sqrt());
    assert!((through.len() as f64 - mean).abs() < 5.0 * sd, "{} null samples, {mean} expected", through.len());
    for s in &through {
        assert_eq!((s.wo, s.weight, s.eta), ([-wi[0], -wi[1], -wi[2]], [1.0; 3], 1.0));
        assert!(close(s.pdf as f64, 1.0 - opacity as f64, 1e-6));
    }
    // Reflected samples keep the nested weight; their density includes the opacity.
    for s in samples.iter().filter(|s| s.sampled_type == DIFFUSE_REFLECTION) {
        assert_eq!(s.weight, [0.2, 0.5, 0.9]);
    }
    assert_weights_consistent(&probes, mask, wi, "mask");
    let config = SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() };
    let outcome = chi2_bsdf(&probes, mask, wi, &config);
    assert!(outcome.passed(), "{outcome}");
}

/// `normalmap` evaluates its nested BSDF in the frame that the map's normal tilts: with the
/// probe's frame (s, t, n) = (x, y, z) and dp/du = x, the tilted frame has n' = 2 c - 1
/// (normalised), s' the part of x across n', t' = n' × s'. A flat map changes nothing; a
/// tilted one gives the nested values at the directions seen in the tilted frame, nothing for a
/// direction on different sides of the two surfaces, and samples by its density.
#[test]
fn normalmap_tilts_the_nested_bsdf() {
    let mut bench = Bench::new();
    let diffuse = bench.bsdf("diffuse", &[("reflectance", rgb([0.2, 0.5, 0.9]))]);
    let metal = rough_conductor(&mut bench, (GGX, 0.3, 0.3, true));
    let flat_code = [0.5f32, 0.5, 1.0];
    let tilted_code = [0.8f32, 0.35, 0.75];
    let map = |bench: &mut Bench, code: [f32; 3], nested: u32| {
        bench.bsdf("normalmap", &[("normalmap", rgb(code)), ("nested_bsdf", HostValue::Handle(nested))])
    };
    let flat = map(&mut bench, flat_code, metal);
    let tilted = [map(&mut bench, tilted_code, diffuse), map(&mut bench, tilted_code, metal)];
    let probes = bench.compile();
    assert_eq!(probes.flags(tilted[0]), probes.flags(diffuse));

    let n = {
        let v = tilted_code.map(|c| 2.0 * c as f64 - 1.0);
        let len = dot3(v, v).sqrt();
        v.map(|c| c / len)
    };
    let s = {
        let v = [1.0 - n[0] * n[0], -n[0] * n[1], -n[0] * n[2]];
        let len = dot3(v, v).sqrt();
        v.map(|c| c / len)
    };
    let t = [n[1] * s[2] - n[2] * s[1], n[2] * s[0] - n[0] * s[2], n[0] * s[1] - n[1] * s[0]];
    let into_tilted = |w: [f32; 3]| {
        let w = w.map(f64::from);
        [dot3(w, s) as f32, dot3(w, t) as f32, dot3(w, n) as f32]
    };

    let wi = dir(30.0, 200.0);
    let wos: Vec<[f32; 3]> = (0..60).map(|i| dir(1.45 * i as f64, 47.0 * i as f64)).collect();
    assert_eq!(probes.eval(flat, 0, wi, &wos), probes.eval(metal, 0, wi, &wos));
    assert_eq!(probes.pdf(flat, 0, wi, &wos), probes.pdf(metal, 0, wi, &wos));
    let mut blocked = 0;
    for (&bsdf, &nested) in tilted.iter().zip(&[diffuse, metal]) {
        let local: Vec<[f32; 3]> = wos.iter().map(|&w| into_tilted(w)).collect();
        let (e, e_nested) = (probes.eval(bsdf, 0, wi, &wos), probes.eval(nested, 0, into_tilted(wi), &local));
        let (p, p_nested) = (probes.pdf(bsdf, 0, wi, &wos), probes.pdf(nested, 0, into_tilted(wi), &local));
        for i in 0..wos.len() {
            let same_side = wos[i][2] * local[i][2] > 0.0;
            blocked += usize::from(!same_side);
            let expected_pdf = if same_side { p_nested[i] as f64 } else { 0.0 };
            assert!(close(p[i] as f64, expected_pdf, 1e-4), "pdf at {:?}: {} vs {expected_pdf}", wos[i], p[i]);
            let shadowing = terminator_shadowing(n[2], wos[i][2] as f64);
            for c in 0..3 {
                let expected = if same_side { e_nested[i][c] as f64 * shadowing } else { 0.0 };
                assert!(close(e[i][c] as f64, expected, 1e-4), "eval at {:?}: {:?}", wos[i], e[i]);
            }
        }
        assert_weights_consistent(&probes, bsdf, wi, "normalmap");
        let config = SphericalChi2 { sample_count: 300_000, test_count: 2, ..SphericalChi2::default() };
        let outcome = chi2_bsdf(&probes, bsdf, wi, &config);
        assert!(outcome.passed(), "{outcome}");
    }
    assert!(blocked > 0, "some directions lie between the two surfaces");
    // Seen from just below the surface, wi lies above the tilted one: nothing is scattered.
    let below = {
        let v = [0.6f32, 0.0, -0.1];
        let len = (v[0] * v[0] + v[2] * v[2]).sqrt();
        v.map(|c| c / len)
    };
    assert!(into_tilted(below)[2] > 0.0);
    for &bsdf in &tilted {
        assert!(probes.eval(bsdf, 0, below, &wos).iter().all(|e| *e == [0.0; 3]));
        assert!(probes.pdf(bsdf, 0, below, &wos).iter().all(|&p| p == 0.0));
        assert!(probes.sample(bsdf, 0, below, &Uniforms(4).triples(200)).iter().all(|s| s.failed()));
    }
}

/// The bump-terminator shadowing (Estevez and Conty 2019) for a normal with z component
/// `cos_delta` toward a direction with z component `cos_o`.
fn terminator_shadowing(cos_delta: f64, cos_o: f64) -> f64 {
    let alpha2 = (0.125 * (1.0 - cos_delta * cos_delta) / (cos_delta * cos_delta)).min(1.0);
    let tan2_o = (1.0 - cos_o * cos_o) / (cos_o * cos_o);
    2.0 / (1.0 + (1.0 + alpha2 * tan2_o).sqrt())
}

/// The numbers Mitsuba 3.9.1 gives for a normal map of colour (0.7, 0.4, 0.85) over a white
/// `diffuse` (wi along the normal): pi eval toward wo at theta 30, 60 and 80 degrees (phi 0).
#[test]
fn normalmap_agrees_with_mitsuba() {
    let mut bench = Bench::new();
    let white = bench.bsdf("diffuse", &[("reflectance", rgb([1.0; 3]))]);
    let map =
        bench.bsdf("normalmap", &[("normalmap", rgb([0.7, 0.4, 0.85])), ("nested_bsdf", HostValue::Handle(white))]);
    let probes = bench.compile();
    // (theta_o, Mitsuba's pi eval / cos theta'_o, cos theta'_o)
    for (theta, ratio, cos_tilted) in [(30.0, 0.99578, 0.9706), (60.0, 0.96441, 0.8384), (80.0, 0.76187, 0.6206)] {
        let e = probes.eval(map, 0, [0.0, 0.0, 1.0], &[dir(theta, 0.0)])[0][0] as f64 * PI;
        assert!(close(e, ratio * cos_tilted, 2e-4), "theta {theta}: {e} vs {}", ratio * cos_tilted);
    }
}

fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `bumpmap` tilts the normal by the height's slopes: a constant height changes nothing, and a
/// 2x2 bitmap's bilinear slopes at uv (0.5, 0.5), (0.6, 0.4) times the scale 0.5, give
/// Mitsuba 3.9.1's values (wi along the normal; pi eval and pi pdf of a white `diffuse`), the
/// same as a normal map of the normal (-0.3, -0.2, 1).
#[test]
fn bumpmap_tilts_by_the_height_slopes() {
    let mut bench = Bench::new();
    let white = bench.bsdf("diffuse", &[("reflectance", rgb([1.0; 3]))]);
    let heights = TensorValue::new([2, 2, 1], vec![0.1, 0.3, 0.2, 0.6]).unwrap();
    let bitmap = bench.instance_with_tensors(PluginKind::Texture, "bitmap", &[], &[("data", heights)]);
    let bumped = bench.bsdf(
        "bumpmap",
        &[("texture", HostValue::Handle(bitmap)), ("scale", f(0.5)), ("nested_bsdf", HostValue::Handle(white))],
    );
    let level = bench.bsdf("bumpmap", &[("texture", f(0.7)), ("nested_bsdf", HostValue::Handle(white))]);
    let n = {
        let len = (0.3f64 * 0.3 + 0.2 * 0.2 + 1.0).sqrt();
        [-0.3 / len, -0.2 / len, 1.0 / len]
    };
    let code = n.map(|c| ((c + 1.0) / 2.0) as f32);
    let mapped = bench.bsdf("normalmap", &[("normalmap", rgb(code)), ("nested_bsdf", HostValue::Handle(white))]);
    let probes = bench.compile();

    let wi = [0.0, 0.0, 1.0];
    let wos: Vec<[f32; 3]> = (0..40).map(|i| dir(2.1 * i as f64, 53.0 * i as f64)).collect();
    assert_eq!(probes.eval(level, 0, wi, &wos), probes.eval(white, 0, wi, &wos));
    let (e_bump, e_map) = (probes.eval(bumped, 0, wi, &wos), probes.eval(mapped, 0, wi, &wos));
    for (a, b) in e_bump.iter().zip(&e_map) {
        assert!(close(a[0] as f64, b[0] as f64, 1e-4), "{a:?} vs {b:?}");
    }
    // (theta, phi, Mitsuba's pi eval, Mitsuba's pi pdf)
    let mitsuba = [
        (30.0, 0.0, 0.67267033, 0.67357996),
        (60.0, 0.0, 0.22326527, 0.22595395),
        (80.0, 0.0, 0.0, 0.0),
        (50.0, 120.0, 0.58460748, 0.58796134),
        (70.0, 250.0, 0.56185192, 0.57858354),
    ];
    for (theta, phi, eval, pdf) in mitsuba {
        let wo = [dir(theta, phi)];
        let e = probes.eval(bumped, 0, wi, &wo)[0][0] as f64 * PI;
        let p = probes.pdf(bumped, 0, wi, &wo)[0] as f64 * PI;
        assert!(close(e, eval, 1e-3) && close(p, pdf, 1e-3), "({theta}, {phi}): {e} {p} vs {eval} {pdf}");
    }
    assert_weights_consistent(&probes, bumped, dir(35.0, 40.0), "bumpmap");
    let config = SphericalChi2 { sample_count: 200_000, ..SphericalChi2::default() };
    let outcome = chi2_bsdf(&probes, bumped, dir(35.0, 40.0), &config);
    assert!(outcome.passed(), "{outcome}");
}
