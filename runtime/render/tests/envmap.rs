//! The `envmap` emitter in scenes: a furnace under a constant map (its sampling table rebuilt
//! when the host replaces the map), and its gradients. Its sampling density is checked by
//! chi-square in tests/tests/emitter_sampling.rs, its renders against Mitsuba in render.rs.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use drs_film::Image;
use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderOptions, Scene, TensorValue};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY.get_or_init(|| Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib loads"))).clone()
}

/// A diffuse sphere of albedo 0.5 filling the middle of a 16x16 image, lit by the sky map of
/// tests/scenes/envmap.xml (id `sky`) through `integrator`.
fn sphere_under_sky(integrator: &str, max_depth: i32) -> Scene {
    let text = format!(
        r#"<scene version="3.0.0">
            <integrator type="{integrator}"><integer name="max_depth" value="{max_depth}"/></integrator>
            <sensor type="perspective">
                <float name="fov" value="40"/>
                <transform name="to_world"><lookat origin="0, 0, 4" target="0, 0, 0" up="0, 1, 0"/></transform>
                <sampler type="independent"><integer name="sample_count" value="16"/></sampler>
                <film type="hdrfilm">
                    <integer name="width" value="16"/><integer name="height" value="16"/>
                    <rfilter type="box"/>
                </film>
            </sensor>
            <emitter type="envmap" id="sky">
                <string name="filename" value="textures/sky_32x16.exr"/>
                <transform name="to_world"><rotate x="1" angle="20"/></transform>
            </emitter>
            <shape type="sphere">
                <float name="radius" value="1"/>
                <bsdf type="diffuse"><float name="reflectance" value="0.5"/></bsdf>
            </shape>
        </scene>"#
    );
    let path = root().join("tests/scenes/sphere_under_sky.xml");
    Scene::load_str(&text, path, &Definitions::new(), library()).unwrap_or_else(|e| panic!("{}", e[0]))
}

fn options(spp: u32, seed: u32) -> RenderOptions<'static> {
    RenderOptions { spp: Some(spp), seed: Some(seed), ..RenderOptions::default() }
}

/// The pixels of channel `c` in the 4x4 centre (on the sphere) and in the corners (the map).
fn centre_and_corners(image: &Image, c: usize) -> (Vec<f32>, Vec<f32>) {
    let at = |x: usize, y: usize| image.data()[(y * 16 + x) * 3 + c];
    let centre = (6..10).flat_map(|y| (6..10).map(move |x| (x, y))).map(|(x, y)| at(x, y)).collect();
    let corners = [(0, 0), (15, 0), (0, 15), (15, 15)].map(|(x, y)| at(x, y)).to_vec();
    (centre, corners)
}

/// Replacing the map by a constant one of another shape gives a furnace: the convex sphere
/// reflects albedo times the radiance, the background is the radiance. The sampling table
/// follows the new map; with the old one (built for 32x16) the densities would be wrong.
#[test]
fn a_constant_map_set_by_the_host_is_a_furnace() {
    let mut scene = sphere_under_sky("path", -1);
    let radiance = 2.0;
    let constant = TensorValue::new([5, 7, 3], vec![radiance; 105]).unwrap();
    scene.params_mut().set_tensor("sky.data", &constant).unwrap();
    let image = scene.render(&options(256, 3)).unwrap();
    for c in 0..3 {
        let (centre, corners) = centre_and_corners(&image, c);
        let mean = centre.iter().map(|&v| f64::from(v)).sum::<f64>() / centre.len() as f64;
        assert!((mean - 0.5 * radiance as f64).abs() < 0.01 * radiance as f64, "channel {c}: sphere {mean}");
        for v in corners {
            assert!((v - radiance).abs() < 1e-5, "channel {c}: background {v}");
        }
    }
    let shape = |key: &str| scene.params().tensor_shape(key);
    assert_eq!(shape("sky.data").unwrap(), [5, 7, 3]);
    assert!(shape("sky.distribution").is_err(), "the derived table is not a scene parameter");
}

/// The image is linear in the map's radiance and the sampling table does not change when the
/// whole map is scaled, so with the same random numbers the gradients are exact: d/d(scale)
/// of Σ a·image is Σ a·image / scale, and Σ_i data_i ∂/∂data_i is the same (Euler's theorem
/// for a function homogeneous of degree 1).
#[test]
fn prb_gradients_of_the_map_are_exact() {
    let mut scene = sphere_under_sky("prb", 3);
    scene.params_mut().set_values("sky.scale", &[1.5]).unwrap();
    for key in ["sky.scale", "sky.data"] {
        scene.params_mut().enable_grad(key).unwrap();
    }
    let n = 16 * 16 * 3;
    let a = Image::from_rgb(16, 16, (0..n).map(|i| 1.0 + (i % 7) as f32 * 0.1).collect()).unwrap();
    let seed = 5;
    let dot =
        |image: &Image| a.data().iter().zip(image.data()).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum::<f64>();
    let value = dot(&scene.render(&options(16, seed)).unwrap());
    let grads = scene.backward(&a, &options(16, seed)).unwrap();
    let d_scale = f64::from(grads.get("sky.scale").unwrap()[0]);
    assert!((d_scale - value / 1.5).abs() < 1e-3 * value, "d/d(scale) {d_scale} vs {}", value / 1.5);
    let data = scene.params().values("sky.data").unwrap();
    let d_data = grads.get("sky.data").unwrap();
    assert_eq!(d_data.len(), data.len());
    let euler: f64 = data.iter().zip(d_data).map(|(&x, &g)| f64::from(x) * f64::from(g)).sum();
    assert!((euler - value).abs() < 1e-3 * value, "Σ data·grad {euler} vs {value}");
    // The sky's texels that light the sphere get gradients, the ground's under it some too.
    assert!(d_data.iter().filter(|&&g| g > 0.0).count() > 100, "most texels matter");
}

/// A map with one row has no poles to span: a scene error at its file name, and a host
/// `set_tensor` error that leaves the map as it was.
#[test]
fn a_map_of_one_row_is_an_error() {
    let dir = std::env::temp_dir().join(format!("drs-envmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    image::save_buffer(dir.join("strip.png"), &[10, 200, 30, 40], 4, 1, image::ColorType::L8).unwrap();
    let text = "<scene version=\"3.0.0\">\n<emitter type=\"envmap\">\n\
                <string name=\"filename\" value=\"strip.png\"/>\n</emitter>\n</scene>\n";
    let errors = Scene::load_str(text, dir.join("scene.xml"), &Definitions::new(), library()).err().expect("an error");
    let e = errors[0].to_string();
    assert!(e.contains("scene.xml:3:1") && e.contains("at least 2 rows"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    let mut scene = sphere_under_sky("path", 2);
    let strip = TensorValue::new([1, 4, 1], vec![1.0; 4]).unwrap();
    let e = scene.params_mut().set_tensor("sky.data", &strip).unwrap_err().to_string();
    assert!(e.contains("at least 2 rows"), "{e}");
    assert_eq!(scene.params().tensor_shape("sky.data").unwrap(), [16, 32, 3]);
}
