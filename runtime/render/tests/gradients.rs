//! Gradients of rendered images: path replay (`prb`) against central finite differences,
//! against Mitsuba 3's `prb` and against the plain reverse-mode derivative of the path tracer
//! (`pathad`) with the same random numbers; through nested BSDFs and for parameters that
//! steer sampling; radiative backpropagation (`rb`, unbiased and biased) against `prb`; losses
//! and optimisers.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use drs_film::Image;
use drs_render::{
    Definitions, Gradients, LibraryOptions, Loss, Method, Optimizer, PluginLibrary, RenderOptions, Scene, Value,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY.get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib loads"))).clone()
}

/// The Cornell box at 16x16 with `integrator`; max_depth 3 keeps Russian roulette (which
/// starts at depth 5) out, so the estimator is a smooth function of the reflectances.
fn cornell(integrator: &str) -> Scene {
    let defines = [("integrator", integrator), ("resx", "16"), ("resy", "16"), ("spp", "4"), ("max_depth", "3")];
    cornell_box(library(), &defines)
}

/// lang-examples/cornell_box.xml with `defines`, its plugins from `library`.
fn cornell_box(library: Arc<PluginLibrary>, defines: &[(&str, &str)]) -> Scene {
    let mut definitions = Definitions::new();
    for &(k, v) in defines {
        definitions.set(k, v);
    }
    Scene::load_file(root().join("lang-examples/cornell_box.xml"), &definitions, library)
        .unwrap_or_else(|e| panic!("{}", e[0]))
}

/// The stdlib and a user plugin directory holding `source` as `file`.
fn library_with_plugin(file: &str, source: &str) -> Arc<PluginLibrary> {
    let dir = std::env::temp_dir().join(format!("drs-gradients-{file}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), source).unwrap();
    let options = LibraryOptions { plugin_dirs: vec![dir.clone()], ..LibraryOptions::default() };
    let library = PluginLibrary::load(&options).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_dir_all(&dir).unwrap();
    Arc::new(library)
}

fn options(seed: u32) -> RenderOptions<'static> {
    RenderOptions { seed: Some(seed), ..RenderOptions::default() }
}

/// A fixed, uneven adjoint image: the derivative of the loss Σ_p,c a_pc · image_pc.
fn weights(width: u32, height: u32) -> Image {
    let n = (width * height * 3) as usize;
    let data = (0..n).map(|i| (1.0 + ((i * 7) % 5) as f32 * 0.25) / n as f32).collect();
    Image::from_rgb(width, height, data).unwrap()
}

fn dot(a: &Image, b: &Image) -> f64 {
    a.data().iter().zip(b.data()).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum()
}

/// Central finite difference of Σ a · image along component `k` of parameter `key`, with the
/// random numbers of `seed` in both renders.
fn finite_difference(scene: &mut Scene, key: &str, k: usize, a: &Image, seed: u32, h: f32) -> f64 {
    let base = scene.params().values(key).unwrap();
    let mut at = |offset: f32| {
        let mut v = base.clone();
        v[k] += offset;
        scene.params_mut().set_values(key, &v).unwrap();
        dot(a, &scene.render(&options(seed)).unwrap())
    };
    let (plus, minus) = (at(h), at(-h));
    scene.params_mut().set_values(key, &base).unwrap();
    (plus - minus) / (2.0 * f64::from(h))
}

const KEYS: [&str; 3] = ["red.reflectance.value", "white.reflectance.value", "light_source.emitter.radiance.value"];

#[test]
fn prb_gradients_match_finite_differences() {
    let mut scene = cornell("prb");
    for key in KEYS {
        scene.params_mut().enable_grad(key).unwrap();
    }
    let a = weights(16, 16);
    let seed = 7;
    let grads = scene.backward(&a, &options(seed)).unwrap();
    for key in KEYS {
        let g = grads.get(key).unwrap();
        let h = if key.contains("radiance") { 0.5 } else { 0.01 };
        for (k, &gk) in g.iter().enumerate() {
            let fd = finite_difference(&mut scene, key, k, &a, seed, h);
            let tolerance = 2e-3 * fd.abs() + 1e-5;
            assert!((f64::from(gk) - fd).abs() <= tolerance, "{key}[{k}]: prb {gk}, finite difference {fd}");
            assert!(fd.abs() > 1e-4, "{key}[{k}]: the test needs a visible derivative, got {fd}");
        }
    }
}

#[test]
fn prb_equals_the_reverse_mode_path_tracer_with_the_same_random_numbers() {
    let a = weights(16, 16);
    let mut grads = Vec::new();
    for integrator in ["prb", "pathad"] {
        let mut scene = cornell(integrator);
        for key in KEYS {
            scene.params_mut().enable_grad(key).unwrap();
        }
        grads.push(scene.backward(&a, &options(11)).unwrap());
    }
    for key in KEYS {
        let (prb, reference) = (grads[0].get(key).unwrap(), grads[1].get(key).unwrap());
        for (k, (&p, &r)) in prb.iter().zip(reference).enumerate() {
            assert!((p - r).abs() <= 1e-4 * r.abs() + 1e-7, "{key}[{k}]: prb {p}, reverse mode {r}");
        }
    }
}

/// `prb`'s reverse pass runs `sample`, then `sample_replay` with its results, as two kernels;
/// its `@custom_bwd` adjoint does both in one. Both give the same gradients up to the order of
/// the additions: compared against a copy of `prb` whose replay has another name, which the
/// runtime therefore differentiates through the adjoint.
#[test]
fn prb_replay_kernel_equals_its_single_adjoint_kernel() {
    let prb = std::fs::read_to_string(root().join("stdlib/integrators/prb.drs")).unwrap();
    let single = prb.replace("integrator Prb ", "integrator PrbSingle ").replace("sample_replay", "replay_given_trace");
    assert_ne!(single, prb);
    let library = library_with_plugin("prb_single.drs", &single);

    let a = weights(16, 16);
    let mut grads = Vec::new();
    for (integrator, replays) in [("prb", true), ("prbsingle", false)] {
        let defines = [("integrator", integrator), ("resx", "16"), ("resy", "16"), ("spp", "4"), ("max_depth", "6")];
        let mut scene = cornell_box(library.clone(), &defines);
        assert_eq!(scene.has_replay(), replays, "{integrator}");
        for key in KEYS {
            scene.params_mut().enable_grad(key).unwrap();
        }
        grads.push(scene.backward(&a, &options(5)).unwrap());
    }
    for key in KEYS {
        let (two, one) = (grads[0].get(key).unwrap(), grads[1].get(key).unwrap());
        for (k, (&t, &o)) in two.iter().zip(one).enumerate() {
            assert!(o != 0.0 && (t - o).abs() <= 1e-5 * o.abs(), "{key}[{k}]: two kernels {t}, one {o}");
        }
    }
}

/// A `sample_replay` that does not take what the reverse pass passes is an error, not a
/// misread argument.
#[test]
fn a_replay_of_another_signature_is_an_error() {
    let plugin = r#"
import types::*;
import runtime::*;
import color::*;
import interfaces;

integrator BadReplay {
    @no_diff param max_depth: i32 = 6;
    @no_diff param rr_depth: i32 = 5;

    fn sample(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool) {
        (Color(0.0), true)
    }

    fn sample_replay(scene: Scene, sampler: Sampler, ray: Ray, radiance: Color, d_radiance: Color) {}
}
"#;
    let library = library_with_plugin("bad_replay.drs", plugin);
    let defines = [("integrator", "badreplay"), ("resx", "8"), ("resy", "8"), ("spp", "1")];
    let mut scene = cornell_box(library, &defines);
    scene.params_mut().enable_grad("red.reflectance.value").unwrap();
    let e = scene.backward(&weights(8, 8), &options(1)).expect_err("an error").to_string();
    assert!(e.contains("`sample_replay` must take `sample`'s parameters"), "{e}");
}

/// The mean of `values` and its standard error.
fn mean_and_stderr(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}

/// Path replay agrees with Mitsuba 3's `prb` on the whole Cornell box: 32x32, 64 spp, max_depth
/// 8 with Russian roulette (which the finite-difference tests leave out), and the linear loss
/// of [`weights`]. `tests/references/cornell_gradients.json` holds Mitsuba's mean gradients
/// over 512 seeds with their standard errors (made by `cornell_gradients.py` next to it); drs's
/// mean over 48 seeds must be within 5 combined standard errors of each (about 0.5% of the
/// gradient), where a wrong term of the estimator (a missing emitter or BSDF contribution,
/// the roulette's weight, the film's normalisation) shifts it by more.
#[test]
fn prb_gradients_agree_with_mitsubas() {
    let path = root().join("tests/references/cornell_gradients.json");
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let setting = |name: &str| reference[name].as_u64().unwrap().to_string();
    let mut defines = Definitions::new();
    for (k, v) in [
        ("integrator", "prb".to_string()),
        ("resx", setting("resolution")),
        ("resy", setting("resolution")),
        ("spp", setting("spp")),
        ("max_depth", setting("max_depth")),
    ] {
        defines.set(k, &v);
    }
    let mut scene = Scene::load_file(root().join("lang-examples/cornell_box.xml"), &defines, library())
        .unwrap_or_else(|e| panic!("{}", e[0]));
    let film = scene.film();
    let a = weights(film.width, film.height);
    let runs: Vec<Gradients> = (0..48).map(|seed| gradients_of(&mut scene, &a, 1000 + seed)).collect();
    for key in KEYS {
        let theirs = &reference["gradients"][key];
        for k in 0..3 {
            let ours: Vec<f64> = runs.iter().map(|g| f64::from(g.get(key).unwrap()[k])).collect();
            let (mean, stderr) = mean_and_stderr(&ours);
            let (their_mean, their_stderr) =
                (theirs["mean"][k].as_f64().unwrap(), theirs["stderr"][k].as_f64().unwrap());
            let bound = 5.0 * stderr.hypot(their_stderr);
            let what =
                format!("{key}[{k}]: drs {mean:.6e} ± {stderr:.1e}, Mitsuba {their_mean:.6e} ± {their_stderr:.1e}");
            assert!((mean - their_mean).abs() <= bound, "{what}");
            assert!(bound < 0.01 * their_mean.abs(), "{what}: too noisy to tell a 1% difference");
        }
    }
}

/// The Cornell box of [`cornell`] with `rb`, biased or not.
fn cornell_rb(biased: bool) -> Scene {
    let mut defines = Definitions::new();
    for (k, v) in [("resx", "16"), ("resy", "16"), ("spp", "4"), ("max_depth", "3")] {
        defines.set(k, v);
    }
    let path = root().join("lang-examples/cornell_box.xml");
    Scene::load_file_with_integrator(path, &defines, library(), "rb", &[("biased", Value::Boolean(biased))])
        .unwrap_or_else(|e| panic!("{}", e[0]))
}

fn gradients_of(scene: &mut Scene, a: &Image, seed: u32) -> Gradients {
    for key in KEYS {
        scene.params_mut().enable_grad(key).unwrap();
    }
    scene.backward(a, &options(seed)).unwrap()
}

/// Unbiased radiative backpropagation estimates the incident radiance of each BSDF term with
/// paths of its own, where `prb` reuses the path's: with the same primal paths the two differ
/// by zero-mean noise. Over 16 seeds the mean difference is within 4 standard errors of zero,
/// while each seed's difference is visibly non-zero (the estimates really are independent).
/// Emitter parameters take no BSDF term: there the two agree exactly.
#[test]
fn rb_agrees_with_prb_in_expectation() {
    let a = weights(16, 16);
    let (mut rb, mut prb) = (cornell_rb(false), cornell("prb"));
    let seeds = 16;
    let mut differences: Vec<Vec<f64>> = vec![Vec::new(); 6];
    let mut prb_sums = [0.0f64; 6];
    for seed in 0..seeds {
        let (ours, theirs) = (gradients_of(&mut rb, &a, seed), gradients_of(&mut prb, &a, seed));
        let light = "light_source.emitter.radiance.value";
        for (&r, &p) in ours.get(light).unwrap().iter().zip(theirs.get(light).unwrap()) {
            assert!((r - p).abs() <= 1e-5 * p.abs(), "{light}: rb {r}, prb {p}");
        }
        let pairs = KEYS[..2].iter().flat_map(|key| ours.get(key).unwrap().iter().zip(theirs.get(key).unwrap()));
        for (i, (&r, &p)) in pairs.enumerate() {
            differences[i].push(f64::from(r) - f64::from(p));
            prb_sums[i] += f64::from(p);
        }
    }
    for (i, d) in differences.iter().enumerate() {
        let n = d.len() as f64;
        let (mean, stderr) = mean_and_stderr(d);
        let sd = stderr * n.sqrt();
        let prb_mean = prb_sums[i] / n;
        let what = format!("{}[{}]", KEYS[i / 3], i % 3);
        assert!(mean.abs() <= 4.0 * stderr, "{what}: rb - prb has mean {mean}, sd {sd} (prb {prb_mean})");
        assert!(sd > 1e-3 * prb_mean.abs(), "{what}: rb - prb has sd {sd}: the estimates are not independent");
    }
}

/// Biased radiative backpropagation (incident radiance 1) keeps the emitter gradients exact
/// and the signs of the others, and Adam, which normalises magnitudes, recovers the red wall
/// with it.
#[test]
fn biased_rb_keeps_signs_and_recovers_the_red_wall() {
    let mut scene = cornell_rb(true);
    let (mut prb, a) = (cornell("prb"), weights(16, 16));
    let (ours, theirs) = (gradients_of(&mut scene, &a, 5), gradients_of(&mut prb, &a, 5));
    for key in KEYS {
        for (&r, &p) in ours.get(key).unwrap().iter().zip(theirs.get(key).unwrap()) {
            if key.contains("radiance") {
                assert!((r - p).abs() <= 1e-5 * p.abs(), "{key}: biased rb {r}, prb {p}");
            } else {
                assert!(r * p > 0.0 && (r - p).abs() > 1e-3 * p.abs(), "{key}: biased rb {r}, prb {p}");
            }
        }
    }
    recover_the_red_wall(scene);
}

#[test]
fn gradients_do_not_depend_on_the_thread_count() {
    let mut scene = cornell("prb");
    scene.params_mut().enable_grad("red.reflectance.value").unwrap();
    let a = weights(16, 16);
    let run = |threads| {
        let options = RenderOptions { seed: Some(3), threads: Some(threads), ..RenderOptions::default() };
        scene.backward(&a, &options).unwrap()
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn only_differentiable_parameters_take_gradients() {
    let mut scene = cornell("prb");
    assert!(scene.params_mut().enable_grad("integrator0.max_depth").is_err());
    assert!(scene.params_mut().enable_grad("no.such.key").is_err());
    // No gradient asked: an empty result.
    let grads = scene.backward(&weights(16, 16), &options(1)).unwrap();
    assert_eq!(grads.iter().count(), 0);
    // A wrongly sized adjoint is an error.
    assert!(scene.backward(&weights(8, 8), &options(1)).is_err());
}

#[test]
fn the_path_integrator_has_no_reverse_mode_and_says_so() {
    let mut scene = cornell("path");
    scene.params_mut().enable_grad("red.reflectance.value").unwrap();
    let err = scene.backward(&weights(16, 16), &options(1)).unwrap_err().to_string();
    assert!(err.contains("max_iters") || err.contains("custom_bwd"), "{err}");
}

#[test]
fn losses_and_their_adjoints() {
    let image = Image::from_rgb(1, 2, vec![0.5, 0.2, 0.0, 1.0, 1.0, 1.0]).unwrap();
    let reference = Image::from_rgb(1, 2, vec![0.25, 0.2, 0.5, 1.0, 0.0, 1.0]).unwrap();
    let (l2, d2) = Loss::L2.eval(&image, &reference).unwrap();
    assert!((l2 - (0.0625 + 0.25 + 1.0) / 6.0).abs() < 1e-9);
    assert_eq!(d2.data(), &[0.5 / 6.0 * 1.0, 0.0, -1.0 / 6.0, 0.0, 2.0 / 6.0, 0.0].map(|v: f64| v as f32));
    let (l1, d1) = Loss::L1.eval(&image, &reference).unwrap();
    assert!((l1 - (0.25 + 0.5 + 1.0) / 6.0).abs() < 1e-9);
    let s = 1.0 / 6.0;
    assert_eq!(d1.data(), &[s, 0.0, -s, 0.0, s, 0.0]);
    let small = Image::from_rgb(1, 1, vec![0.0; 3]).unwrap();
    assert!(Loss::L2.eval(&image, &small).is_err());
}

/// Recovers the red wall's colour from a reference rendered with another colour (the Cornell
/// box example of issue 7, at a small size).
#[test]
fn adam_recovers_the_red_wall() {
    recover_the_red_wall(cornell("prb"));
}

/// Adam on the red wall of `scene` (the Cornell box of [`cornell`]) from grey to a target:
/// each channel within 0.05, and the loss with the reference's own random numbers below 5%
/// of where it started.
fn recover_the_red_wall(mut scene: Scene) {
    for key in KEYS {
        scene.params_mut().disable_grad(key);
    }
    let target = [0.2f32, 0.6, 0.3];
    scene.params_mut().set_values("red.reflectance.value", &target).unwrap();
    let reference = scene.render(&RenderOptions { spp: Some(1024), seed: Some(1000), ..options(0) }).unwrap();
    scene.params_mut().set_values("red.reflectance.value", &[0.5, 0.5, 0.5]).unwrap();
    scene.params_mut().enable_grad("red.reflectance.value").unwrap();
    let mut optimizer = Optimizer::new(Method::adam(), 0.05);
    optimizer.set_bounds("red.reflectance.value", 0.0, 1.0);
    // The loss with the reference's own random numbers: zero at the target.
    let clean_loss = |scene: &Scene| {
        let image = scene.render(&RenderOptions { spp: Some(1024), seed: Some(1000), ..options(0) }).unwrap();
        Loss::L2.eval(&image, &reference).unwrap().0
    };
    let initial_loss = clean_loss(&scene);
    for i in 0..60 {
        if i == 40 {
            optimizer.set_learning_rate(0.01);
        }
        let image = scene.render(&RenderOptions { spp: Some(16), ..options(2 * i) }).unwrap();
        let (_, adjoint) = Loss::L2.eval(&image, &reference).unwrap();
        let grads = scene.backward(&adjoint, &RenderOptions { spp: Some(16), ..options(2 * i + 1) }).unwrap();
        optimizer.step(scene.params_mut(), &grads).unwrap();
    }
    let final_loss = clean_loss(&scene);
    let recovered = scene.params().values("red.reflectance.value").unwrap();
    for (r, t) in recovered.iter().zip(target) {
        assert!((r - t).abs() < 0.05, "recovered {recovered:?}, target {target:?}");
    }
    assert!(final_loss < initial_loss * 0.05, "loss {initial_loss} -> {final_loss}");
}

/// lang-examples/inverse/textured_floor.xml with `prb` and the given overrides.
fn textured_floor(defines: &[(&str, &str)]) -> Scene {
    let mut definitions = Definitions::new();
    for (k, v) in defines {
        definitions.set(*k, *v);
    }
    Scene::load_file_with_integrator(
        root().join("lang-examples/inverse/textured_floor.xml"),
        &definitions,
        library(),
        "prb",
        &[],
    )
    .unwrap_or_else(|e| panic!("{}", e[0]))
}

const TEXELS: &str = "floor.bsdf.reflectance.data";

/// Texel gradients (a tensor parameter) agree with central finite differences.
#[test]
fn texel_gradients_match_finite_differences() {
    let mut scene = textured_floor(&[("resx", "24"), ("resy", "24"), ("spp", "4"), ("max_depth", "3")]);
    scene.params_mut().enable_grad(TEXELS).unwrap();
    let a = weights(24, 24);
    let grads = scene.backward(&a, &options(5)).unwrap();
    let g = grads.get(TEXELS).unwrap();
    assert_eq!(g.len(), 32 * 32 * 3);
    // In each channel, the texel with the largest gradient (few samples reach each texel).
    let largest = |c: usize| (c..g.len()).step_by(3).max_by(|&i, &j| g[i].abs().total_cmp(&g[j].abs())).unwrap();
    for k in [largest(0), largest(1), largest(2)] {
        let fd = finite_difference(&mut scene, TEXELS, k, &a, 5, 0.01);
        assert!(fd.abs() > 1e-5, "texel {k}: the test needs a visible derivative, got {fd}");
        assert!((f64::from(g[k]) - fd).abs() <= 2e-3 * fd.abs() + 1e-7, "texel {k}: prb {}, fd {fd}", g[k]);
    }
}

/// The texture example of lang-examples/inverse at few samples: Adam brings the floor's 32x32
/// texels from flat grey most of the way to the texture Mitsuba 3 rendered the target with.
#[test]
fn adam_recovers_the_floor_texture() {
    let target = textured_floor(&[("texture", "textures/target_32.png")]).params().values(TEXELS).unwrap();
    let mut scene = textured_floor(&[]);
    let reference = drs_film::load_image(root().join("lang-examples/inverse/texture_target.exr")).unwrap();
    scene.params_mut().enable_grad(TEXELS).unwrap();
    let mut optimizer = Optimizer::new(Method::adam(), 0.05);
    optimizer.set_bounds(TEXELS, 0.0, 1.0);
    let error = |scene: &Scene| -> f32 {
        let values = scene.params().values(TEXELS).unwrap();
        values.iter().zip(&target).map(|(v, t)| (v - t).abs()).sum::<f32>() / values.len() as f32
    };
    let initial = error(&scene);
    for i in 0..30 {
        let pass = |seed| RenderOptions { spp: Some(2), ..options(seed) };
        let image = scene.render(&pass(2 * i)).unwrap();
        let (_, adjoint) = Loss::L2.eval(&image, &reference).unwrap();
        let grads = scene.backward(&adjoint, &pass(2 * i + 1)).unwrap();
        optimizer.step(scene.params_mut(), &grads).unwrap();
    }
    let recovered = error(&scene);
    assert!(recovered < 0.4 * initial, "mean texel error {initial} -> {recovered}");
}

/// The scene `name` of tests/scenes at 16x16 with `integrator` and max_depth 3.
fn test_scene(name: &str, integrator: &str) -> Scene {
    let mut defines = Definitions::new();
    for (k, v) in [("resx", "16"), ("resy", "16"), ("spp", "4")] {
        defines.set(k, v);
    }
    let path = root().join(format!("tests/scenes/{name}.xml"));
    Scene::load_file_with_integrator(path, &defines, library(), integrator, &[("max_depth", Value::Integer(3))])
        .unwrap_or_else(|e| panic!("{}", e[0]))
}

/// Gradients reach the parameters of BSDFs nested in `blendbsdf` and `twosided` (plugin
/// instances the linker unrolls): for reflectances, which do not change where samples go,
/// `prb` equals the reverse-mode path tracer and central finite differences with the same
/// random numbers.
#[test]
fn prb_differentiates_through_nested_bsdfs() {
    let a = weights(16, 16);
    for (name, key) in [
        ("blendbsdf", "ball.bsdf.bsdf_0.reflectance.value"),
        ("twosided", "one_bsdf.bsdf.brdf_0.reflectance.value"),
        ("twosided", "two_bsdfs.bsdf.brdf_1.specular_reflectance.value"),
    ] {
        let mut grads = Vec::new();
        for integrator in ["prb", "pathad"] {
            let mut scene = test_scene(name, integrator);
            scene.params_mut().enable_grad(key).unwrap();
            grads.push(scene.backward(&a, &options(9)).unwrap().get(key).unwrap().to_vec());
        }
        let mut scene = test_scene(name, "prb");
        for (k, (&p, &r)) in grads[0].iter().zip(&grads[1]).enumerate() {
            assert!(r != 0.0 && (p - r).abs() <= 1e-4 * r.abs() + 1e-7, "{key}[{k}]: prb {p}, reverse mode {r}");
            let fd = finite_difference(&mut scene, key, k, &a, 9, 0.01);
            assert!((f64::from(p) - fd).abs() <= 2e-3 * fd.abs() + 1e-6, "{key}[{k}]: prb {p}, finite difference {fd}");
        }
    }
}

/// Parameters that steer sampling (the blend weight picks the lobe, the roughness shapes the
/// conductor's samples): `prb` evaluates the BSDF at the detached sampled direction, which is
/// unbiased, where differentiating the sample weight (`pathad`) misses how the samples move
/// (it even gets the roughness's sign wrong here). Against finite differences at 2048 spp with
/// the same random numbers: the weight within 5%, the roughness, whose gradient is small and
/// noisy, within 30% (measured 2% and 17%; at 8192 spp 0.4% and 5%).
#[test]
fn prb_gradients_of_parameters_that_steer_sampling_match_finite_differences() {
    let a = weights(16, 16);
    let options = RenderOptions { spp: Some(2048), seed: Some(9), ..RenderOptions::default() };
    let mut scene = test_scene("blendbsdf", "prb");
    for (key, h, tolerance) in [("ball.bsdf.weight.value", 0.05, 0.05), ("ball.bsdf.bsdf_1.alpha.value", 0.03, 0.3)] {
        scene.params_mut().enable_grad(key).unwrap();
        let g = f64::from(scene.backward(&a, &options).unwrap().get(key).unwrap()[0]);
        scene.params_mut().disable_grad(key);
        let base = scene.params().values(key).unwrap()[0];
        let mut at = |x: f32| {
            scene.params_mut().set_values(key, &[x]).unwrap();
            dot(&a, &scene.render(&options).unwrap())
        };
        let fd = (at(base + h) - at(base - h)) / (2.0 * f64::from(h));
        scene.params_mut().set_values(key, &[base]).unwrap();
        assert!((g - fd).abs() <= tolerance * fd.abs(), "{key}: prb {g}, finite difference {fd}");
    }
}
