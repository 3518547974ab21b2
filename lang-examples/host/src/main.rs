//! `cargo run --release -p drs-host-example -- [SCENE] [OUT.png]`: renders the Cornell box,
//! repaints its red wall blue through the parameter API and writes the second image.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let scene = args.next().map(PathBuf::from).unwrap_or_else(|| root.join("cornell_box.xml"));
    let out = args.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("repainted.png"));
    match drs_host_example::repaint(&scene, 128, 32, "red.reflectance.value", "Color(0.1, 0.2, 0.7)") {
        Ok(result) => {
            println!("red.reflectance.value was {}", result.old_value);
            println!("left wall before: {:.3?}", drs_host_example::left_wall_means(&result.before));
            println!("left wall after:  {:.3?}", drs_host_example::left_wall_means(&result.after));
            if let Err(e) = drs_film::write_image(&out, &result.after) {
                eprintln!("error: {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            println!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
