//! Mitsuba's named constants in scenes (`materials.rs`): conductor `material` presets and IOR
//! names give the params Mitsuba 3.9.1 has (values read back from Mitsuba with `mi.traverse`),
//! a preset renders exactly as its eta and k given explicitly, and bad names are located
//! errors. Also the `srgb` texture's scene-file form (`color`), and `roughplastic`'s table
//! (`@derived(tabulate, ..)`), which follows its params.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use drs_film::Image;
use drs_lower::layout::HostValue;
use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderOptions, Scene};

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY.get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib loads"))).clone()
}

fn virtual_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("materials.xml")
}

/// A scene of one sphere (id `ball`) per BSDF in `bsdfs`, in that order: `ball0`, `ball1`, ...
fn scene_text(bsdfs: &[&str]) -> String {
    let shapes: String = bsdfs
        .iter()
        .enumerate()
        .map(|(i, bsdf)| format!("<shape type=\"sphere\" id=\"ball{i}\">\n{bsdf}\n</shape>\n"))
        .collect();
    format!("<scene version=\"3.0.0\">\n<sensor type=\"perspective\"/>\n{shapes}</scene>")
}

fn load(bsdfs: &[&str]) -> Result<Scene, String> {
    Scene::load_str(&scene_text(bsdfs), virtual_path(), &Definitions::new(), library())
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
}

fn float(scene: &Scene, key: &str) -> f32 {
    match scene.params().get(key) {
        Ok(HostValue::F32(x)) => x,
        other => panic!("{key}: {other:?}"),
    }
}

fn color(scene: &Scene, key: &str) -> [f32; 3] {
    scene.params().values(key).unwrap_or_else(|e| panic!("{key}: {e}")).try_into().expect("three channels")
}

/// Within the 6 significant digits Dr.Jit prints.
fn assert_close(ours: [f32; 3], mitsuba: [f32; 3], what: &str) {
    let close = ours.iter().zip(&mitsuba).all(|(a, b)| (a - b).abs() <= 5e-6 * b.abs());
    assert!(close, "{what}: {ours:?}, Mitsuba {mitsuba:?}");
}

#[test]
fn conductor_presets_give_mitsubas_eta_and_k() {
    let scene = load(&[
        r#"<bsdf type="conductor"><string name="material" value="Au"/></bsdf>"#,
        r#"<bsdf type="roughconductor"><string name="material" value="Cu"/></bsdf>"#,
        r#"<bsdf type="conductor"/>"#,
        r#"<bsdf type="roughconductor"><string name="material" value="none"/><rgb name="eta" value="2, 2, 2"/></bsdf>"#,
    ])
    .unwrap();
    // `mi.traverse(mi.load_dict({'type': 'conductor', 'material': 'Au'}))` in scalar_rgb and
    // llvm_ad_rgb, and the same for a roughconductor of copper.
    assert_close(color(&scene, "ball0.bsdf.eta.value"), [0.143036, 0.375307, 1.44205], "Au eta");
    assert_close(color(&scene, "ball0.bsdf.k.value"), [3.983, 2.38556, 1.60336], "Au k");
    assert_close(color(&scene, "ball1.bsdf.eta.value"), [0.201005, 0.92375, 1.10222], "Cu eta");
    assert_close(color(&scene, "ball1.bsdf.k.value"), [3.91326, 2.45305, 2.14209], "Cu k");
    // No material is "none": a perfect mirror; with "none" an explicit eta is allowed.
    assert_eq!((color(&scene, "ball2.bsdf.eta.value"), color(&scene, "ball2.bsdf.k.value")), ([0.0; 3], [1.0; 3]));
    assert_eq!((color(&scene, "ball3.bsdf.eta.value"), color(&scene, "ball3.bsdf.k.value")), ([2.0; 3], [1.0; 3]));
}

#[test]
fn ior_names_give_mitsubas_numbers() {
    let scene = load(&[
        r#"<bsdf type="dielectric"><string name="int_ior" value="water"/><string name="ext_ior" value="Air"/></bsdf>"#,
        r#"<bsdf type="plastic"><string name="int_ior" value="bk7"/></bsdf>"#,
        r#"<bsdf type="roughplastic"><string name="ext_ior" value="water"/></bsdf>"#,
        r#"<bsdf type="thindielectric"><string name="int_ior" value="diamond"/></bsdf>"#,
        r#"<bsdf type="roughdielectric"><string name="int_ior" value="PET"/><float name="ext_ior" value="1.2"/></bsdf>"#,
    ])
    .unwrap();
    let ior =
        |i: usize| (float(&scene, &format!("ball{i}.bsdf.int_ior")), float(&scene, &format!("ball{i}.bsdf.ext_ior")));
    assert_eq!(ior(0), (1.333, 1.000277));
    assert_eq!(ior(1), (1.5046, 1.000277));
    assert_eq!(ior(2), (1.49, 1.333));
    assert_eq!(ior(3), (2.419, 1.000277));
    assert_eq!(ior(4), (1.575, 1.2));
    // Mitsuba's traversed `eta` (int_ior / ext_ior in f32) of the first four.
    let mitsuba_eta = [1.3326307535171509, 1.504183292388916, 1.1177794933319092, 2.418329954147339];
    for (i, eta) in mitsuba_eta.into_iter().enumerate() {
        let (int, ext) = ior(i);
        assert_eq!(int / ext, eta as f32, "ball{i}");
    }
}

#[test]
fn unknown_names_and_presets_with_eta_or_k_are_located_errors() {
    let error = |bsdf: &str| load(&[bsdf]).err().expect("an error");
    let file = virtual_path().display().to_string();
    let names = error(r#"<bsdf type="conductor"><string name="material" value="Gold"/></bsdf>"#);
    assert!(
        names.starts_with(&format!(
            "{file}:4:24: error: invalid value \"Gold\" for parameter \"material\" of bsdf \"conductor\" \
             (scene/shape/bsdf); expected one of: none, Ag, Al, "
        )),
        "{names}"
    );
    assert!(names.ends_with(", W, a-C, d-C, d-C_palik"), "{names}");
    assert_eq!(
        error(r#"<bsdf type="dielectric"><string name="int_ior" value="1.5"/></bsdf>"#),
        format!(
            "{file}:4:25: error: unknown name \"1.5\" for parameter \"int_ior\" of bsdf \"dielectric\" \
             (scene/shape/bsdf); give a number, or one of: vacuum, helium, hydrogen, air, carbon dioxide, water, \
             acetone, ethanol, carbon tetrachloride, glycerol, benzene, silicone oil, bromine, water ice, fused \
             quartz, pyrex, acrylic glass, polypropylene, bk7, sodium chloride, amber, pet, diamond"
        )
    );
    assert_eq!(
        error(
            r#"<bsdf type="roughconductor"><rgb name="k" value="1, 2, 3"/><string name="material" value="Al"/></bsdf>"#
        ),
        format!(
            "{file}:4:29: error: \"k\" cannot be given together with material \"Al\" (scene/shape/bsdf); \
             give either eta and k, or a material"
        )
    );
}

/// A small scene of a sphere with `bsdf` on a grey floor under a sky.
fn ball_scene(bsdf: &str) -> Scene {
    let text = format!(
        r#"<scene version="3.0.0">
            <integrator type="path"><integer name="max_depth" value="4"/></integrator>
            <sensor type="perspective">
                <float name="fov" value="40"/>
                <transform name="to_world"><lookat origin="0, 1, 4" target="0, 0.5, 0" up="0, 1, 0"/></transform>
                <sampler type="independent"><integer name="sample_count" value="4"/></sampler>
                <film type="hdrfilm">
                    <integer name="width" value="12"/><integer name="height" value="12"/>
                    <rfilter type="box"/>
                </film>
            </sensor>
            <emitter type="constant"><rgb name="radiance" value="0.6, 0.7, 0.9"/></emitter>
            <shape type="sphere"><point name="center" value="0, 0.8, 0"/><float name="radius" value="0.8"/>{bsdf}</shape>
            <shape type="rectangle">
                <transform name="to_world"><scale value="5"/><rotate x="1" angle="-90"/></transform>
                <bsdf type="diffuse"/>
            </shape>
        </scene>"#
    );
    Scene::load_str(&text, virtual_path(), &Definitions::new(), library()).unwrap_or_else(|e| panic!("{}", e[0]))
}

fn render_ball(bsdf: &str) -> Image {
    ball_scene(bsdf).render(&RenderOptions::default()).expect("renders")
}

#[test]
fn a_preset_renders_exactly_as_its_eta_and_k() {
    let preset = render_ball(r#"<bsdf type="conductor"><string name="material" value="Cu"/></bsdf>"#);
    // Copper's colours as tests/references/conductor_materials.py prints them.
    let explicit = render_ball(
        r#"<bsdf type="conductor">
            <rgb name="eta" value="0.20100547, 0.9237495, 1.1022154"/>
            <rgb name="k" value="3.9132621, 2.4530451, 2.1420898"/>
        </bsdf>"#,
    );
    let gold = render_ball(r#"<bsdf type="conductor"><string name="material" value="Au"/></bsdf>"#);
    assert!(preset.data() == explicit.data(), "the copper preset and its explicit eta, k render alike, bit for bit");
    assert!(preset.data() != gold.data(), "the preset matters: gold renders differently");
}

/// An `srgb` texture written as Mitsuba writes it, `<rgb name="color" ..>`, holds that colour
/// under Mitsuba's key `value`; without `color` it is an error.
#[test]
fn srgb_textures_take_their_color() {
    let texture = r#"<bsdf type="diffuse"><texture type="srgb" name="reflectance">
        <rgb name="color" value="0.2, 0.4, 0.6"/><boolean name="unbounded" value="true"/></texture></bsdf>"#;
    let scene = load(&[texture]).unwrap();
    assert_eq!(color(&scene, "ball0.bsdf.reflectance.value"), [0.2, 0.4, 0.6]);
    let e =
        load(&[r#"<bsdf type="diffuse"><texture type="srgb" name="reflectance"/></bsdf>"#]).err().expect("an error");
    assert!(e.contains("color"), "{e}");
}

/// `roughplastic` interpolates a table of its coating's transmittance that the runtime makes
/// from `alpha`, `int_ior` and `distribution` before every pass: a scene whose params are
/// changed renders exactly as one loaded with the new values.
#[test]
fn roughplastic_tables_follow_their_params() {
    let bsdf = |alpha: f32, ior: f32| {
        format!(
            r#"<bsdf type="roughplastic"><float name="alpha" value="{alpha}"/><float name="int_ior" value="{ior}"/>
                <rgb name="diffuse_reflectance" value="0.8, 0.3, 0.1"/></bsdf>"#
        )
    };
    let mut scene = ball_scene(&bsdf(0.05, 1.3));
    let before = scene.render(&RenderOptions::default()).expect("renders");
    let key = |name: &str| {
        let info = scene.params().params().iter().find(|p| p.key.ends_with(&format!(".bsdf.{name}")));
        info.unwrap_or_else(|| panic!("no {name}")).key.clone()
    };
    let (alpha, ior) = (key("alpha"), key("int_ior"));
    scene.params_mut().set_values(&alpha, &[0.6]).unwrap();
    scene.params_mut().set_values(&ior, &[2.0]).unwrap();
    let changed = scene.render(&RenderOptions::default()).expect("renders");
    let loaded = render_ball(&bsdf(0.6, 2.0));
    assert!(changed.data() == loaded.data(), "changed params render as loaded ones, bit for bit");
    assert!(changed.data() != before.data(), "the params matter");
    assert!(
        scene.params().params().iter().all(|p| !p.key.ends_with("transmittance_table")),
        "a table is not a scene parameter"
    );
}
