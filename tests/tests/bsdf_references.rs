//! The stdlib BSDFs against Mitsuba 3: each scene of [`SCENES`] rendered by drs at 64x64
//! agrees with its reference in tests/references (Mitsuba 3.9.1, 16384 spp; see the README
//! there): every channel mean within 2% and the mean absolute pixel error within the scene's
//! bound, set at about 1.6 times what drs's own noise at [`SPP`] gives (the box-filtered
//! pixels are noisy; the means carry the test: a bias of a few percent in a BSDF fails).

use std::path::PathBuf;

use drs_film::{compare, load_exr};
use drs_render::{Definitions, RenderOptions, Scene};
use drs_tests::stdlib_library;

/// Samples per pixel of the drs renders.
const SPP: u32 = 256;

/// (scene in tests/scenes and reference in tests/references, bound of the mean absolute
/// error). The bounds' comments give the error measured when they were set.
const SCENES: [(&str, f64); 10] = [
    ("conductor", 0.012),              // measured 0.0072
    ("roughconductor", 0.018),         // measured 0.0113
    ("twosided", 0.015),               // measured 0.0092
    ("blendbsdf", 0.016),              // measured 0.0100
    ("mask", 0.016),                   // measured 0.0096
    ("dielectric_sphere", 0.004),      // measured 0.0025
    ("thindielectric_sphere", 0.005),  // measured 0.0032
    ("roughdielectric_sphere", 0.011), // measured 0.0068
    ("plastic_sphere", 0.005),         // measured 0.0031
    ("roughplastic_sphere", 0.0045),   // measured 0.0028
];

fn root() -> PathBuf {
    drs_tests::workspace_root()
}

#[test]
fn bsdf_scenes_agree_with_mitsuba_references() {
    let mut failures = Vec::new();
    for (name, mae_bound) in SCENES {
        let path = root().join(format!("tests/scenes/{name}.xml"));
        let scene = Scene::load_file(&path, &Definitions::new(), stdlib_library()).unwrap_or_else(|errors| {
            panic!("{name}: {}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        });
        let image = scene.render(&RenderOptions { spp: Some(SPP), ..RenderOptions::default() }).expect("renders");
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
