//! Rendering tests: analytic answers (white furnace, directional light), agreement with the
//! Mitsuba 3 references in tests/references, determinism, parameters, and scene errors.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use drs_film::{compare, load_exr, Image};
use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderOptions, Scene};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib plugins compile")))
        .clone()
}

fn load(path: &str, defines: &[(&str, &str)]) -> Scene {
    let mut definitions = Definitions::new();
    for (k, v) in defines {
        definitions.set(*k, *v);
    }
    Scene::load_file(root().join(path), &definitions, library()).unwrap_or_else(|errors| {
        panic!("{path}: {}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
    })
}

fn render(scene: &Scene, spp: u32) -> Image {
    scene.render(&RenderOptions { spp: Some(spp), ..RenderOptions::default() }).expect("renders")
}

/// Pixel values of channel `c` for pixels where `keep(x, y)`.
fn pixels(image: &Image, c: usize, keep: impl Fn(u32, u32) -> bool) -> Vec<f32> {
    let mut out = Vec::new();
    for y in 0..image.height() {
        for x in 0..image.width() {
            if keep(x, y) {
                out.push(image.pixel(x, y)[c]);
            }
        }
    }
    out
}

fn mean(values: &[f32]) -> f64 {
    values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64
}

/// White furnace: a diffuse sphere of albedo a in a constant environment of radiance 1
/// reflects exactly a; the background is exactly 1.
#[test]
fn white_furnace_converges_to_the_albedo() {
    for albedo in ["0.5", "0.8"] {
        let scene = load("tests/scenes/white_furnace.xml", &[("albedo", albedo), ("resx", "32"), ("resy", "32")]);
        let image = render(&scene, 64);
        let a: f64 = albedo.parse().unwrap();
        // The sphere (radius 1 at distance 4, fov 40° on x) covers a disk of radius
        // 16 tan(asin(1/4)) / tan(20°) = 11.4 pixels around the centre; the box filter keeps
        // pixels independent.
        let r = |x: u32, y: u32| ((x as f64 + 0.5 - 16.0).powi(2) + (y as f64 + 0.5 - 16.0).powi(2)).sqrt();
        for c in 0..3 {
            let inside = pixels(&image, c, |x, y| r(x, y) < 10.0);
            let outside = pixels(&image, c, |x, y| r(x, y) > 12.5);
            let m = mean(&inside);
            assert!((m - a).abs() < 0.01 * a, "albedo {a}, channel {c}: sphere mean {m}");
            assert!(outside.iter().all(|&v| v == 1.0), "albedo {a}: the background is exactly 1");
        }
    }
}

/// A directional light on a diffuse plane: every pixel is albedo / pi * E * cos(theta)
/// (the scene's comment gives the values).
#[test]
fn directional_light_on_a_plane_is_analytic() {
    let scene = load("tests/scenes/directional_plane.xml", &[("resx", "16"), ("resy", "16")]);
    let image = render(&scene, 4);
    let expected = [0.381972, 0.238732, 0.095493];
    for (c, e) in expected.iter().enumerate() {
        for v in pixels(&image, c, |_, _| true) {
            assert!((v as f64 - e).abs() < 1e-4 * e.max(1.0), "channel {c}: {v} vs {e}");
        }
    }
}

/// Renders agree with Mitsuba 3's (16384 spp) at 64x64: per-channel means within 2% and the
/// mean absolute pixel error within about twice what our noise at 256 spp gives (measured:
/// 0.0028, 0.0000, 0.0002, 0.0011, 0.0023, 0.0031, 0.11, 0.0053, 0.0064), so a bias of a few percent fails.
/// The environment map's noise comes from its sun, 600 times the sky; Mitsuba at 256 spp is
/// as far from its own reference (0.115 against our 0.106 with another seed).
#[test]
fn renders_agree_with_mitsuba_references() {
    let cases: [(&str, &str, f64); 9] = [
        ("white_furnace", "tests/scenes/white_furnace.xml", 0.005),
        ("directional_plane", "tests/scenes/directional_plane.xml", 1e-4),
        ("sphere_point", "tests/scenes/sphere_point.xml", 0.0005),
        ("area_disk_direct", "tests/scenes/area_disk_direct.xml", 0.0025),
        ("cornell_box", "lang-examples/cornell_box.xml", 0.005),
        ("spot", "tests/scenes/spot.xml", 0.005),
        ("envmap", "tests/scenes/envmap.xml", 0.2),
        ("normalmap", "tests/scenes/normalmap.xml", 0.011),
        ("bumpmap", "tests/scenes/bumpmap.xml", 0.013),
    ];
    let mut failures = Vec::new();
    for (name, path, mae_bound) in cases {
        let scene = load(path, &[("resx", "64"), ("resy", "64")]);
        let image = render(&scene, 256);
        let reference = load_exr(root().join(format!("tests/references/{name}.exr"))).expect("the reference loads");
        let ours = compare::channel_means(&image);
        let theirs = compare::channel_means(&reference);
        let mae = compare::mean_absolute_error(&image, &reference).expect("same size");
        let means_agree = ours.iter().zip(&theirs).all(|(a, b)| (a - b).abs() <= 0.02 * b.abs() + 1e-4);
        eprintln!("{name}: means {ours:.5?} vs Mitsuba {theirs:.5?}, mean abs error {mae:.5}");
        if !means_agree || mae > mae_bound {
            failures.push(format!("{name}: means {ours:.5?} vs {theirs:.5?}, mae {mae:.5} (bound {mae_bound})"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The image depends on the seed only, not on the number of threads.
#[test]
fn renders_are_deterministic_whatever_the_thread_count() {
    let scene = load("lang-examples/cornell_box.xml", &[("resx", "40"), ("resy", "24")]);
    let run = |threads, seed| {
        scene
            .render(&RenderOptions {
                spp: Some(4),
                seed: Some(seed),
                threads: Some(threads),
                ..RenderOptions::default()
            })
            .expect("renders")
    };
    let one = run(1, 7);
    assert_eq!(one.data(), run(2, 7).data());
    assert_eq!(one.data(), run(3, 7).data());
    assert_ne!(one.data(), run(2, 8).data(), "another seed gives other noise");
}

/// A sample's value does not depend on how many lanes run beside it: scalar, 4-lane and 8-lane
/// kernels (whose host calls see one, one or two groups of four lanes) render the same image to
/// the bit.
#[test]
fn renders_are_the_same_in_every_lane_mode() {
    let scene = load("lang-examples/cornell_box.xml", &[("resx", "24"), ("resy", "16")]);
    let run = |lanes| {
        let options =
            RenderOptions { spp: Some(4), seed: Some(3), threads: Some(1), lanes, ..RenderOptions::default() };
        scene.render(&options).expect("renders")
    };
    let four = run(drs_render::Lanes::X4);
    assert_eq!(four.data(), run(drs_render::Lanes::X1).data(), "scalar");
    assert_eq!(four.data(), run(drs_render::Lanes::X8).data(), "8 lanes");
}

/// As above with four area lights of four kinds (a rectangle, a disk, a sphere and a cube
/// mesh): emitter sampling picks one per lane, so the host samples groups whose lanes name
/// different shapes, each shape's lanes together.
#[test]
fn renders_with_area_lights_of_every_kind_are_the_same_in_every_lane_mode() {
    let emitter = |shape: &str, transform: &str| {
        format!(
            r#"<shape type="{shape}"><transform name="to_world">{transform}</transform>
                <emitter type="area"><rgb name="radiance" value="3, 2, 1"/></emitter></shape>"#
        )
    };
    let lights = [
        emitter("rectangle", r#"<scale value="0.3"/><rotate x="1" angle="90"/><translate x="-1" y="2"/>"#),
        emitter("disk", r#"<scale value="0.3"/><rotate x="1" angle="90"/><translate x="1" y="2"/>"#),
        emitter("sphere", r#"<scale value="0.2"/><translate y="1.5"/>"#),
        emitter("cube", r#"<scale value="0.1"/><translate x="0.5" y="0.5" z="0.5"/>"#),
    ];
    let text = format!(
        r#"<scene version="3.0.0">
            <integrator type="path"><integer name="max_depth" value="4"/></integrator>
            <sensor type="perspective">
                <float name="fov" value="60"/>
                <transform name="to_world"><lookat origin="0, 1.5, -4" target="0, 0.5, 0" up="0, 1, 0"/></transform>
                <film type="hdrfilm"><integer name="width" value="24"/><integer name="height" value="16"/></film>
            </sensor>
            <shape type="rectangle">
                <transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/></transform>
                <bsdf type="diffuse"/>
            </shape>
            {}
        </scene>"#,
        lights.concat()
    );
    let scene = Scene::load_str(&text, root().join("lights.xml"), &Definitions::new(), library())
        .unwrap_or_else(|errors| panic!("{}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")));
    let run = |lanes| {
        let options =
            RenderOptions { spp: Some(4), seed: Some(5), threads: Some(1), lanes, ..RenderOptions::default() };
        scene.render(&options).expect("renders")
    };
    let four = run(drs_render::Lanes::X4);
    assert!(four.data().iter().any(|&x| x > 0.0), "the lights light the floor");
    assert_eq!(four.data(), run(drs_render::Lanes::X1).data(), "scalar");
    assert_eq!(four.data(), run(drs_render::Lanes::X8).data(), "8 lanes");
}

/// Parameters change between renders without recompiling: the kernel is the same object.
#[test]
fn parameters_change_without_recompiling() {
    let mut scene = load("tests/scenes/white_furnace.xml", &[("resx", "16"), ("resy", "16")]);
    let keys: Vec<String> = scene.params().params().iter().map(|p| p.key.clone()).collect();
    let key = "shape0.bsdf.reflectance.value";
    assert!(keys.iter().any(|k| k == key), "{keys:?}");
    let kernel = scene.kernel(&RenderOptions::default()).unwrap();
    let before = render(&scene, 16);
    scene.params_mut().set_text(key, "0.25").unwrap();
    assert_eq!(scene.params().get(key).unwrap().to_string(), "[0.25, 0.25, 0.25]");
    let after = render(&scene, 16);
    assert!(Arc::ptr_eq(&kernel, &scene.kernel(&RenderOptions::default()).unwrap()));
    let centre = |image: &Image| image.pixel(8, 8)[0];
    assert!(
        (centre(&before) - 0.5).abs() < 0.05 && (centre(&after) - 0.25).abs() < 0.03,
        "{} {}",
        centre(&before),
        centre(&after)
    );
    assert!(scene.params_mut().set_text(key, "vec3(1.0)").is_err());
    assert!(scene.params_mut().set_text("no.such.key", "1.0").is_err());
}

fn load_error(text: &str) -> String {
    match Scene::load_str(text, root().join("virtual.xml"), &Definitions::new(), library()) {
        Ok(_) => panic!("the scene loads"),
        Err(errors) => errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
    }
}

/// Plugin types without a .drs implementation, params of the wrong kind and missing sensors
/// are errors with file, line and column.
#[test]
fn bad_scenes_are_located_errors() {
    let sensor = r#"<sensor type="perspective"><float name="fov" value="40"/></sensor>"#;
    let e = load_error(&format!(
        "<scene version=\"3.0.0\">\n{sensor}\n<shape type=\"sphere\">\n  <bsdf type=\"roughwood\"/>\n</shape>\n</scene>"
    ));
    assert!(e.contains("virtual.xml:4:3") && e.contains("roughwood"), "{e}");
    let e = load_error(&format!(
        "<scene version=\"3.0.0\">\n{sensor}\n<bsdf type=\"diffuse\">\n  <boolean name=\"reflectance\" value=\"true\"/>\n</bsdf>\n</scene>"
    ));
    assert!(e.contains("virtual.xml:4:3") && e.contains("reflectance"), "{e}");
    let e = load_error("<scene version=\"3.0.0\">\n<shape type=\"sphere\"/>\n</scene>");
    assert!(e.contains("no <sensor>"), "{e}");
}

/// A user plugin directory overrides the stdlib plugin of the same kind and name: a `diffuse`
/// that ignores its reflectance and reflects a quarter makes the white furnace sphere 0.25.
#[test]
fn user_plugins_override_the_stdlib() {
    let dir = std::env::temp_dir().join(format!("drs-render-plugins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("quarter.drs"),
        r#"
bsdf Diffuse {
    param reflectance: Texture<Color> = 0.5;

    fn eval(ctx: BsdfContext, si: SurfaceInteraction, wo: vec3) -> Color {
        if cos_theta(si.wi) <= 0.0 || cos_theta(wo) <= 0.0 {
            return Color(0.0);
        }
        Color(0.25 * INV_PI * cos_theta(wo))
    }

    fn sample(ctx: BsdfContext, si: SurfaceInteraction, sample1: f32, sample2: vec2) -> (BsdfSample, Color) {
        var bs = BsdfSample::new(square_to_cosine_hemisphere(sample2));
        bs.pdf = square_to_cosine_hemisphere_pdf(bs.wo);
        bs.sampled_type = BSDF_DIFFUSE_REFLECTION;
        if cos_theta(si.wi) <= 0.0 || bs.pdf <= 0.0 {
            return (bs, Color(0.0));
        }
        (bs, Color(0.25))
    }

    fn pdf(ctx: BsdfContext, si: SurfaceInteraction, wo: vec3) -> f32 {
        if cos_theta(si.wi) <= 0.0 || cos_theta(wo) <= 0.0 {
            return 0.0;
        }
        square_to_cosine_hemisphere_pdf(wo)
    }

    fn flags() -> u32 {
        BSDF_DIFFUSE_REFLECTION | BSDF_FRONT_SIDE
    }
}
"#,
    )
    .unwrap();
    let library = PluginLibrary::load(&LibraryOptions { stdlib_dir: None, plugin_dirs: vec![dir.clone()] }).unwrap();
    let mut definitions = Definitions::new();
    definitions.set("resx", "16").set("resy", "16");
    let scene =
        Scene::load_file(root().join("tests/scenes/white_furnace.xml"), &definitions, Arc::new(library)).unwrap();
    let image = render(&scene, 64);
    let centre = mean(&pixels(&image, 1, |x, y| (6..10).contains(&x) && (6..10).contains(&y)));
    assert!((centre - 0.25).abs() < 0.01, "{centre}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Derivatives of calls through plugin references link to the plugins' derivatives: an
/// integrator that differentiates `bsdf.eval(.., wo = (0, 0, s))` = R / pi * s in both modes
/// gets R (times 1 / pi) on the white furnace sphere.
#[test]
fn derivatives_through_plugin_calls_are_linked() {
    let dir = std::env::temp_dir().join(format!("drs-render-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("probe.drs"),
        r#"
fn lobe(b: Bsdf, @no_diff si: SurfaceInteraction, s: f32) -> Color {
    b.eval(BsdfContext::new(TRANSPORT_RADIANCE), si, vec3(0.0, 0.0, s))
}

integrator Probe {
    fn sample(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool) {
        let si = scene.intersect(ray);
        if !si.valid {
            return (Color(0.0), true);
        }
        let (value, tangent) = fwd_diff(lobe)(si.bsdf, si, 1.0, 1.0);
        let adjoint = bwd_diff(lobe)(si.bsdf, si, 1.0, Color(1.0, 0.0, 0.0));
        (Color(tangent.r * PI, adjoint * PI, value.g * PI), true)
    }
}
"#,
    )
    .unwrap();
    let library = PluginLibrary::load(&LibraryOptions { stdlib_dir: None, plugin_dirs: vec![dir.clone()] }).unwrap();
    let text = std::fs::read_to_string(root().join("tests/scenes/white_furnace.xml"))
        .unwrap()
        .replace(r#"<integrator type="path">"#, r#"<integrator type="probe">"#)
        .replace(r#"<integer name="max_depth" value="-1"/>"#, "");
    let mut definitions = Definitions::new();
    definitions.set("resx", "16").set("resy", "16").set("albedo", "0.3");
    let scene = Scene::load_str(&text, root().join("tests/scenes/probe.xml"), &definitions, Arc::new(library)).unwrap();
    let image = render(&scene, 1);
    for c in 0..3 {
        let v = image.pixel(8, 8)[c];
        assert!((v - 0.3).abs() < 1e-5, "channel {c}: {v}");
    }
    assert_eq!(&image.pixel(0, 0)[..3], &[0.0; 3]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Kernels draw the numbers of the scene's sampler to the bit, wherever they draw them (an
/// independent sampler's own streams in compiled code, a stratified one's and derived streams
/// on the host): two probe integrators' draws, in a loop and behind an `if`, and from cloned
/// and split streams, equal those of `drs_film::Sampler` for every pixel, in every lane mode.
#[test]
fn kernels_draw_the_samplers_numbers() {
    let dir = std::env::temp_dir().join(format!("drs-render-draws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("draws.drs"),
        r#"
integrator Draws {
    fn sample(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool) {
        let first = sampler.next_1d();
        let replay = sampler.clone();
        let pair = sampler.next_2d();
        let again = replay.next_2d();
        let side = sampler.split();
        let aside = side.next_1d() + side.next_1d();
        let last = sampler.next_1d() + replay.next_1d();
        (Color(first + pair.x, aside, select(pair == again, last + pair.y, -1.0)), true)
    }
}

integrator Walk {
    fn sample(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool) {
        var sum = 0.0;
        var area = 0.0;
        for i in 0..5 {
            let u = sampler.next_1d();
            sum = sum + u;
            if u > 0.5 {
                let p = sampler.next_2d();
                area = area + p.x * p.y;
            }
        }
        (Color(sum, area, sampler.next_1d()), true)
    }
}
"#,
    )
    .unwrap();
    let library =
        Arc::new(PluginLibrary::load(&LibraryOptions { stdlib_dir: None, plugin_dirs: vec![dir.clone()] }).unwrap());
    let (width, height, seed) = (7u32, 5u32, 11u32);
    // `walk` draws from its own stream alone, which compiled code keeps in values for the
    // independent sampler; `draws` clones and splits it, which makes its kernel draw on the host.
    for (integrator, sampler) in
        ["walk", "draws"].into_iter().flat_map(|i| ["independent", "stratified"].map(move |s| (i, s)))
    {
        let text = std::fs::read_to_string(root().join("tests/scenes/white_furnace.xml"))
            .unwrap()
            .replace(r#"<integrator type="path">"#, &format!(r#"<integrator type="{integrator}">"#))
            .replace(r#"<integer name="max_depth" value="-1"/>"#, "")
            .replace(r#"<sampler type="independent">"#, &format!(r#"<sampler type="{sampler}">"#));
        let mut definitions = Definitions::new();
        definitions.set("resx", width.to_string()).set("resy", height.to_string());
        let scene =
            Scene::load_str(&text, root().join("tests/scenes/draws.xml"), &definitions, library.clone()).unwrap();
        let generator = match sampler {
            "independent" => drs_film::Sampler::independent(1, seed).unwrap(),
            _ => drs_film::Sampler::stratified(1, seed, true).unwrap(),
        };
        for lanes in [drs_render::Lanes::X1, drs_render::Lanes::X4, drs_render::Lanes::X8] {
            let options =
                RenderOptions { spp: Some(1), seed: Some(seed), threads: Some(1), lanes, ..RenderOptions::default() };
            let image = scene.render(&options).expect("renders");
            for (x, y) in (0..height).flat_map(|y| (0..width).map(move |x| (x, y))) {
                let mut stream = generator.stream(y * width + x, 0, 0);
                stream.next_2d();
                if integrator == "walk" {
                    let (mut sum, mut area) = (0.0, 0.0);
                    for _ in 0..5 {
                        let u = stream.next_1d();
                        sum += u;
                        if u > 0.5 {
                            let [px, py] = stream.next_2d();
                            area += px * py;
                        }
                    }
                    let expected = [sum, area, stream.next_1d()];
                    assert_eq!(&image.pixel(x, y)[..3], &expected, "walk, {sampler}, {lanes:?}, pixel ({x}, {y})");
                    continue;
                }
                let first = stream.next_1d();
                let mut replay = stream.clone();
                let pair = stream.next_2d();
                let mut side = stream.split();
                let aside = side.next_1d() + side.next_1d();
                replay.next_2d();
                let last = stream.next_1d() + replay.next_1d();
                let expected = [first + pair[0], aside, last + pair[1]];
                assert_eq!(&image.pixel(x, y)[..3], &expected, "draws, {sampler}, {lanes:?}, pixel ({x}, {y})");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
