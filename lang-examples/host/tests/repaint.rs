//! The embedding example works end to end: the parameter is read and written, and the
//! repainted wall turns from red to blue.

use std::path::Path;

#[test]
fn repainting_the_red_wall_makes_it_blue() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cornell_box.xml");
    let result = drs_host_example::repaint(&scene, 48, 8, "red.reflectance.value", "Color(0.1, 0.2, 0.7)").unwrap();
    assert_eq!(result.old_value, "[0.63, 0.065, 0.05]");
    let [r0, _, b0] = drs_host_example::left_wall_means(&result.before);
    let [r1, _, b1] = drs_host_example::left_wall_means(&result.after);
    assert!(r0 > 3.0 * b0, "red before: {r0} {b0}");
    assert!(b1 > r1, "blue after: {r1} {b1}");
}

#[test]
fn a_missing_scene_is_an_error() {
    let e = drs_host_example::repaint(Path::new("no/such/scene.xml"), 8, 1, "k", "1.0").err().unwrap();
    assert!(e.contains("no/such/scene.xml"), "{e}");
}
