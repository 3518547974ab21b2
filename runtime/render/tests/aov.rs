//! The `aov` integrator: what the camera rays see first, in film channels named as Mitsuba
//! names them, checked against the analytic answers of a sphere in front of the camera; the
//! colour channels hold the nested integrator's image.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use drs_film::Image;
use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderOptions, Scene};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY.get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib loads"))).clone()
}

/// A unit sphere (albedo (0.2, 0.4, 0.6)) at the origin seen from z = 4 at 32x32 under a
/// constant sky, rendered by `integrator` (XML).
fn sphere_scene(integrator: &str) -> Result<Scene, String> {
    let text = format!(
        r#"<scene version="3.0.0">
            {integrator}
            <sensor type="perspective">
                <float name="fov" value="30"/>
                <transform name="to_world"><lookat origin="0, 0, 4" target="0, 0, 0" up="0, 1, 0"/></transform>
                <sampler type="independent"><integer name="sample_count" value="4"/></sampler>
                <film type="hdrfilm">
                    <integer name="width" value="32"/><integer name="height" value="32"/>
                    <rfilter type="box"/>
                </film>
            </sensor>
            <emitter type="constant"/>
            <shape type="sphere">
                <bsdf type="diffuse"><rgb name="reflectance" value="0.2, 0.4, 0.6"/></bsdf>
            </shape>
        </scene>"#
    );
    Scene::load_str(&text, root().join("aov_test.xml"), &Definitions::new(), library())
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

fn render(scene: &Scene) -> Image {
    scene.render(&RenderOptions { seed: Some(1), ..RenderOptions::default() }).expect("renders")
}

fn channel(image: &Image, name: &str, x: u32, y: u32) -> f32 {
    let c = image.channel_index(name).unwrap_or_else(|| panic!("no channel {name} in {:?}", image.channels()));
    image.pixel(x, y)[c]
}

const AOVS: &str = r#"<string name="aovs" value="dd:depth, p:position, n:sh_normal, g:geo_normal, a:albedo, t:uv"/>"#;

#[test]
fn aovs_describe_the_first_hit() {
    let scene =
        sphere_scene(&format!(r#"<integrator type="aov">{AOVS}<integrator type="path" name="image"/></integrator>"#))
            .unwrap();
    let image = render(&scene);
    let names: Vec<&str> = image.channels().iter().map(String::as_str).collect();
    let expected = [
        "R", "G", "B", "dd.T", "p.X", "p.Y", "p.Z", "n.X", "n.Y", "n.Z", "g.X", "g.Y", "g.Z", "a.R", "a.G", "a.B",
        "t.U", "t.V",
    ];
    assert_eq!(names, expected);
    // The pixels around the centre see the sphere's front, (0, 0, 1), 3 from the camera.
    for (x, y) in [(15, 15), (16, 16)] {
        let near = |name: &str, value: f32, tolerance: f32| {
            let v = channel(&image, name, x, y);
            assert!((v - value).abs() < tolerance, "{name} at ({x}, {y}): {v}, expected {value}");
        };
        near("dd.T", 3.0, 0.01);
        near("p.Z", 1.0, 0.01);
        for axis in ["n", "g"] {
            near(&format!("{axis}.Z"), 1.0, 0.01);
            near(&format!("{axis}.X"), 0.0, 0.1);
        }
        for (c, a) in [("a.R", 0.2), ("a.G", 0.4), ("a.B", 0.6)] {
            near(c, a, 1e-5);
        }
    }
    // Each hit lies on the unit sphere, and its normal is its position.
    for (x, y) in [(10, 12), (20, 18), (16, 9)] {
        let p = ["p.X", "p.Y", "p.Z"].map(|c| channel(&image, c, x, y));
        let n = ["n.X", "n.Y", "n.Z"].map(|c| channel(&image, c, x, y));
        let radius = p.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((radius - 1.0).abs() < 0.02, "({x}, {y}): |p| = {radius}");
        for k in 0..3 {
            assert!((n[k] - p[k] / radius).abs() < 0.05, "({x}, {y}): n {n:?} vs p {p:?}");
        }
    }
    // The corners see the sky: every AOV is 0.
    for name in &expected[3..] {
        assert_eq!(channel(&image, name, 0, 0), 0.0, "{name}");
    }
    // The colour is the nested path tracer's image, sample for sample.
    let path = render(&sphere_scene(r#"<integrator type="path"/>"#).unwrap());
    for (x, y) in [(0, 0), (15, 15), (10, 12)] {
        for c in ["R", "G", "B"] {
            assert_eq!(channel(&image, c, x, y), channel(&path, c, x, y), "{c} at ({x}, {y})");
        }
    }
}

#[test]
fn without_a_nested_integrator_the_colour_is_black() {
    let scene = sphere_scene(&format!(r#"<integrator type="aov">{AOVS}</integrator>"#)).unwrap();
    let image = render(&scene);
    assert_eq!(channel(&image, "R", 15, 15), 0.0);
    assert!((channel(&image, "dd.T", 15, 15) - 3.0).abs() < 0.01);
}

#[test]
fn bad_aov_lists_are_located_errors() {
    let bad = |list: &str| {
        let xml = format!("<integrator type=\"aov\">\n<string name=\"aovs\" value=\"{list}\"/>\n</integrator>");
        sphere_scene(&xml).err().unwrap_or_else(|| panic!("{list}: the scene loads"))
    };
    let e = bad("dd:distance");
    assert!(e.contains("aov_test.xml:3:1") && e.contains("unknown type \"distance\""), "{e}");
    let e = bad("depth");
    assert!(e.contains("name:type"), "{e}");
    let e = sphere_scene(r#"<integrator type="aov"/>"#).err().expect("aovs is required");
    assert!(e.contains("aovs"), "{e}");
}

/// A user `aov` whose `sample_aovs` returns other values than the stdlib's is an error at
/// render time, not a misread image.
#[test]
fn a_sample_aovs_of_another_shape_is_an_error() {
    let dir = std::env::temp_dir().join(format!("drs-aov-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plugin = r#"
import types::*;
import runtime::*;
import interfaces;

integrator Aov {
    fn sample(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool) {
        (Color(0.0), false)
    }

    fn sample_aovs(scene: Scene, sampler: Sampler, ray: Ray) -> (Color, bool, [f32; 2]) {
        let si = scene.intersect(ray);
        (Color(0.0), si.valid, [si.t, 0.0])
    }
}
"#;
    std::fs::write(dir.join("aov.drs"), plugin).unwrap();
    let options = LibraryOptions { plugin_dirs: vec![dir.clone()], ..LibraryOptions::default() };
    let library = Arc::new(PluginLibrary::load(&options).unwrap_or_else(|e| panic!("{e}")));
    std::fs::remove_dir_all(&dir).unwrap();
    let text = r#"<scene version="3.0.0">
        <integrator type="aov"><string name="aovs" value="dd:depth"/></integrator>
        <sensor type="perspective"><film type="hdrfilm"><integer name="width" value="4"/><integer name="height" value="4"/></film></sensor>
    </scene>"#;
    let scene = Scene::load_str(text, root().join("aov_test.xml"), &Definitions::new(), library).unwrap();
    let e = scene.render(&RenderOptions::default()).expect_err("an error").to_string();
    assert!(e.contains("returns 6 values per sample, the renderer reads 19"), "{e}");
}

/// The geometric AOVs of tests/scenes/aov.xml agree with Mitsuba 3's (tests/references/aov.exr,
/// whose channels are unnamed, `ch00`..`ch14` in the order of the scene's `aovs` list): the
/// conventions of depth, positions, uv and normals on spheres and rectangles are Mitsuba's.
/// Pixels on silhouettes mix hits and misses, so each channel's mean absolute error is bounded
/// by what that mixing leaves at 64 spp (measured with seed 2: 0.014 for depth, at most 0.0048
/// for the others; a flipped uv or normal gives 0.1 or more). Albedo is left out: Mitsuba's
/// `diffuse` reports its reflectance even seen from behind, where drs's eval-based albedo is 0
/// (stdlib/integrators/aov.drs).
#[test]
fn geometric_aovs_agree_with_mitsuba() {
    let library = library();
    let scene = Scene::load_file(root().join("tests/scenes/aov.xml"), &Definitions::new(), library).unwrap();
    let image = scene.render(&RenderOptions { spp: Some(64), seed: Some(2), ..RenderOptions::default() }).unwrap();
    let reference = drs_film::load_exr(root().join("tests/references/aov.exr")).expect("the reference loads");
    let names = ["dd.T", "p.X", "p.Y", "p.Z", "uv.U", "uv.V", "g.X", "g.Y", "g.Z", "n.X", "n.Y", "n.Z"];
    for (k, name) in names.iter().enumerate() {
        let ours = image.channel_index(name).unwrap();
        let theirs = reference.channel_index(&format!("ch{k:02}")).unwrap();
        let pixels = (image.width() * image.height()) as usize;
        let mae = (0..pixels)
            .map(|i| {
                let (x, y) = ((i % 64) as u32, (i / 64) as u32);
                (image.pixel(x, y)[ours] - reference.pixel(x, y)[theirs]).abs() as f64
            })
            .sum::<f64>()
            / pixels as f64;
        eprintln!("{name}: mean absolute error {mae:.5}");
        let bound = if *name == "dd.T" { 0.02 } else { 0.008 };
        assert!(mae < bound, "{name}: mean absolute error {mae} (bound {bound})");
    }
}
