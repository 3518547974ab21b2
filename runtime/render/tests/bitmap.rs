//! `Tensor` params in the runtime, through the stdlib `bitmap` texture: image files loaded as
//! tensors (PNG and JPEG sRGB-decoded unless `raw`, EXR as stored, grey images as one
//! channel), located errors for bad files and settings, tensors read and replaced through
//! the `ParamStore`, and a render compared with Mitsuba 3's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use drs_film::{compare, load_exr, srgb_to_linear, write_image, Image};
use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderOptions, Scene, TensorValue};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib plugins compile")))
        .clone()
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("drs-bitmap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A scene with one rectangle per (id, bitmap texture body), each 10 behind the previous one,
/// and a camera; the bitmaps' keys are `{id}.bsdf.reflectance.*`. The first texture element
/// is on line 9, its body from line 10.
fn scene_text(bitmaps: &[(&str, &str)]) -> String {
    let mut text = String::from(
        "<scene version=\"3.0.0\">\n<sensor type=\"perspective\">\n<film type=\"hdrfilm\">\n\
         <integer name=\"width\" value=\"8\"/><integer name=\"height\" value=\"8\"/>\n</film>\n</sensor>\n",
    );
    for (i, (id, body)) in bitmaps.iter().enumerate() {
        text.push_str(&format!(
            "<shape type=\"rectangle\" id=\"{id}\">\n<bsdf type=\"diffuse\">\n\
             <texture type=\"bitmap\" name=\"reflectance\">\n{body}\n</texture>\n</bsdf>\n\
             <transform name=\"to_world\"><translate z=\"{}\"/></transform>\n</shape>\n",
            -10 * i as i32
        ));
    }
    text.push_str("</scene>\n");
    text
}

fn load_in(dir: &Path, text: &str) -> Result<Scene, String> {
    Scene::load_str(text, dir.join("scene.xml"), &Definitions::new(), library())
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

fn write_png(path: &Path, width: u32, height: u32, color: image::ColorType, bytes: &[u8]) {
    image::save_buffer(path, bytes, width, height, color).unwrap();
}

/// 2x3 8-bit RGB codes (two rows of three texels), and the same texels with alpha.
const RGB_CODES: [u8; 18] = [0, 10, 20, 40, 60, 80, 100, 128, 160, 200, 220, 255, 1, 2, 3, 250, 251, 252];

fn rgba_codes() -> Vec<u8> {
    RGB_CODES.chunks(3).flat_map(|p| [p[0], p[1], p[2], 77]).collect()
}

#[test]
fn image_files_load_as_tensors() {
    let dir = scratch("load");
    write_png(&dir.join("rgb.png"), 3, 2, image::ColorType::Rgb8, &RGB_CODES);
    write_png(&dir.join("rgba.png"), 3, 2, image::ColorType::Rgba8, &rgba_codes());
    write_png(&dir.join("grey.png"), 2, 2, image::ColorType::L8, &[0, 64, 128, 255]);
    let exr_rgb: Vec<f32> = (0..18).map(|k| k as f32 * 0.25 - 1.0).collect();
    write_image(dir.join("rgb.exr"), &Image::from_rgb(3, 2, exr_rgb.clone()).unwrap()).unwrap();
    let exr_y = vec![0.5, 2.0, -1.0, 7.25];
    write_image(dir.join("y.exr"), &Image::new(4, 1, vec!["Y".into()], exr_y.clone()).unwrap()).unwrap();
    let scene = load_in(
        &dir,
        &scene_text(&[
            ("rgb", r#"<string name="filename" value="rgb.png"/>"#),
            ("raw", r#"<string name="filename" value="rgb.png"/><boolean name="raw" value="true"/>"#),
            ("rgba", r#"<string name="filename" value="rgba.png"/>"#),
            ("grey", r#"<string name="filename" value="grey.png"/>"#),
            ("exr", r#"<string name="filename" value="rgb.exr"/>"#),
            ("exr_y", r#"<string name="filename" value="y.exr"/>"#),
        ]),
    )
    .unwrap();
    let tensor = |id: &str| scene.params().tensor(&format!("{id}.bsdf.reflectance.data")).unwrap();
    let decoded: Vec<f32> = RGB_CODES.iter().map(|&c| srgb_to_linear(c as f32 / 255.0)).collect();
    let stored: Vec<f32> = RGB_CODES.iter().map(|&c| c as f32 / 255.0).collect();
    assert_eq!(tensor("rgb"), TensorValue::new([2, 3, 3], decoded.clone()).unwrap());
    assert_eq!(tensor("raw"), TensorValue::new([2, 3, 3], stored).unwrap());
    assert_eq!(tensor("rgba"), TensorValue::new([2, 3, 3], decoded).unwrap(), "alpha is dropped");
    let grey: Vec<f32> = [0u8, 64, 128, 255].iter().map(|&c| srgb_to_linear(c as f32 / 255.0)).collect();
    assert_eq!(tensor("grey"), TensorValue::new([2, 2, 1], grey).unwrap());
    assert_eq!(tensor("exr"), TensorValue::new([2, 3, 3], exr_rgb).unwrap(), "EXR values as stored");
    assert_eq!(tensor("exr_y"), TensorValue::new([1, 4, 1], exr_y).unwrap());
    // The key lists the tensor with its layout; its other params are ordinary ones.
    let info = scene.params().params().iter().find(|p| p.key == "rgb.bsdf.reflectance.data").unwrap();
    assert!(info.differentiable && info.to_string() == "rgb.bsdf.reflectance.data : Tensor", "{info}");
    assert_eq!(scene.params().tensor_shape("grey.bsdf.reflectance.data").unwrap(), [2, 2, 1]);
    assert_eq!(scene.params().get("rgb.bsdf.reflectance.wrap_mode").unwrap().to_string(), "0");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_files_and_settings_are_located_errors() {
    let dir = scratch("errors");
    std::fs::write(dir.join("corrupt.png"), b"\x89PNG\r\n\x1a\nnot really a png").unwrap();
    std::fs::write(dir.join("image.tga"), b"TGA").unwrap();
    write_image(dir.join("depth.exr"), &Image::new(1, 1, vec!["Z".into()], vec![1.0]).unwrap()).unwrap();
    write_png(&dir.join("ok.png"), 1, 1, image::ColorType::L8, &[9]);
    let at = |body: &str| {
        let text = scene_text(&[("s", body)]);
        load_in(&dir, &text).err().unwrap_or_else(|| panic!("{body}: the scene loads"))
    };
    let e = at(r#"<string name="filename" value="missing.png"/>"#);
    assert!(e.contains("scene.xml:10:1") && e.contains("missing.png"), "{e}");
    let e = at(r#"<string name="filename" value="corrupt.png"/>"#);
    assert!(e.contains("scene.xml:10:1") && e.contains("corrupt.png") && e.contains("decode"), "{e}");
    let e = at(r#"<string name="filename" value="image.tga"/>"#);
    assert!(e.contains("scene.xml:10:1") && e.contains("unsupported image format"), "{e}");
    let e = at(r#"<string name="filename" value="depth.exr"/>"#);
    assert!(e.contains("scene.xml:10:1") && e.contains("found Z"), "{e}");
    let e = at(r#"<boolean name="raw" value="true"/>"#);
    assert!(e.contains("scene.xml:9:1") && e.contains("filename"), "{e}");
    let e = at(r#"<string name="filename" value="ok.png"/>
<string name="wrap_mode" value="wrap"/>"#);
    assert!(e.contains("scene.xml:11:1") && e.contains("repeat, mirror, clamp"), "{e}");
    let e = at(r#"<string name="filename" value="ok.png"/>
<string name="filter_type" value="trilinear"/>"#);
    assert!(e.contains("scene.xml:11:1") && e.contains("bilinear, nearest"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `set_tensor` replaces one instance's data (also with another shape, moving the other
/// instances' data), renders see it without recompiling, and misuse is an error.
#[test]
fn tensors_are_replaced_through_the_param_store() {
    let dir = scratch("api");
    write_png(&dir.join("a.png"), 3, 2, image::ColorType::Rgb8, &RGB_CODES);
    write_png(&dir.join("b.png"), 2, 2, image::ColorType::L8, &[0, 64, 128, 255]);
    // Light along the planes' normal with irradiance pi: each pixel is its texture value.
    let mut text = scene_text(&[
        ("a", r#"<string name="filename" value="a.png"/>"#),
        ("b", r#"<string name="filename" value="b.png"/><string name="filter_type" value="nearest"/>"#),
    ]);
    text = text.replace(
        "</scene>",
        r#"<emitter type="directional"><vector name="direction" value="0, 0, -1"/><float name="irradiance" value="3.14159265"/></emitter>
<integrator type="path"><integer name="max_depth" value="2"/></integrator></scene>"#,
    );
    text = text.replace(
        "<film",
        r#"<float name="fov" value="30"/><transform name="to_world"><lookat origin="0, 0, 4" target="0, 0, 0" up="0, 1, 0"/></transform><film"#,
    );
    let mut scene = load_in(&dir, &text).unwrap();
    let (a, b) = ("a.bsdf.reflectance.data", "b.bsdf.reflectance.data");
    let before_b = scene.params().tensor(b).unwrap();
    let kernel = scene.kernel(&RenderOptions::default()).unwrap();
    let render = |scene: &Scene| scene.render(&RenderOptions { spp: Some(4), ..RenderOptions::default() }).unwrap();

    // A larger grey tensor for `a`, then a constant colour: `b` keeps its data.
    let big = TensorValue::new([4, 5, 1], (0..20).map(|k| k as f32).collect()).unwrap();
    scene.params_mut().set_tensor(a, &big).unwrap();
    assert_eq!(scene.params().tensor(a).unwrap(), big);
    assert_eq!(scene.params().tensor(b).unwrap(), before_b);
    let constant = TensorValue::new([1, 1, 3], vec![0.25, 0.5, 0.75]).unwrap();
    scene.params_mut().set_tensor(a, &constant).unwrap();
    assert_eq!(scene.params().tensor(b).unwrap(), before_b);
    let image = render(&scene);
    assert!(Arc::ptr_eq(&kernel, &scene.kernel(&RenderOptions::default()).unwrap()), "no recompilation");
    // Plane a fills the frame's centre.
    let centre = image.pixel(4, 4);
    assert!((centre[0] - 0.25).abs() < 1e-4 && (centre[2] - 0.75).abs() < 1e-4, "{centre:?}");

    // The flat values of the optimiser's API are the tensor's data.
    assert_eq!(scene.params().values(a).unwrap(), [0.25, 0.5, 0.75]);
    scene.params_mut().set_values(a, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(scene.params().tensor(a).unwrap().data(), [1.0, 2.0, 3.0]);
    assert!(scene.params_mut().set_values(a, &[1.0]).is_err());

    assert!(TensorValue::new([2, 2, 1], vec![1.0; 3]).is_err(), "data and shape disagree");
    assert!(TensorValue::new([0, 2, 1], Vec::new()).is_err(), "empty");
    assert!(TensorValue::new([u32::MAX, u32::MAX, 2], Vec::new()).is_err(), "too large");
    let wrap = "a.bsdf.reflectance.wrap_mode";
    assert!(scene.params_mut().set_tensor(wrap, &constant).unwrap_err().to_string().contains("not a tensor"));
    assert!(scene.params().get(a).unwrap_err().to_string().contains("tensor"));
    assert!(scene.params_mut().set_text(a, "0.5").is_err());
    assert!(scene.params().tensor("no.such.key").is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// tests/scenes/bitmap_plane.xml against Mitsuba 3 (16384 spp): channel means within 1% and
/// the mean absolute error within about twice what our noise at 256 spp gives (measured
/// 0.0013), so a shifted, flipped or wrongly wrapped texture fails.
#[test]
fn bitmap_render_agrees_with_mitsuba() {
    let scene = Scene::load_file(root().join("tests/scenes/bitmap_plane.xml"), &Definitions::new(), library())
        .unwrap_or_else(|e| panic!("{}", e.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")));
    let image = scene.render(&RenderOptions { spp: Some(256), ..RenderOptions::default() }).unwrap();
    let reference = load_exr(root().join("tests/references/bitmap_plane.exr")).unwrap();
    let ours = compare::channel_means(&image);
    let theirs = compare::channel_means(&reference);
    let mae = compare::mean_absolute_error(&image, &reference).unwrap();
    eprintln!("bitmap_plane: means {ours:.5?} vs Mitsuba {theirs:.5?}, mean abs error {mae:.5}");
    assert!(ours.iter().zip(&theirs).all(|(a, b)| (a - b).abs() <= 0.01 * b.abs()), "{ours:?} vs {theirs:?}");
    assert!(mae < 0.0025, "mean absolute error {mae}");
}
