//! Embedding the drs runtime in a host program: load a Mitsuba scene, read and change a scene
//! parameter, render into memory, look at the pixels. `main.rs` is the command-line wrapper.

use std::path::Path;
use std::sync::Arc;

use drs_render::{Definitions, Image, LibraryOptions, PluginLibrary, RenderOptions, Scene};

/// The Cornell box with its red wall repainted: both renders and the parameter's old value.
pub struct Repainted {
    pub before: Image,
    pub after: Image,
    pub old_value: String,
}

/// Loads `scene` at `resolution`², renders it, sets `key` to `value` (`.drs` value syntax,
/// e.g. `Color(0.1, 0.2, 0.8)`) and renders again with the same kernel.
pub fn repaint(scene: &Path, resolution: u32, spp: u32, key: &str, value: &str) -> Result<Repainted, String> {
    // The plugin library compiles the stdlib's .drs plugins once; scenes share it.
    let library = Arc::new(PluginLibrary::load(&LibraryOptions::default()).map_err(|e| e.to_string())?);
    let mut definitions = Definitions::new();
    definitions.set("resx", resolution.to_string()).set("resy", resolution.to_string());
    let mut scene = Scene::load_file(scene, &definitions, library)
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))?;

    let options = RenderOptions { spp: Some(spp), ..RenderOptions::default() };
    let before = scene.render(&options).map_err(|e| e.to_string())?;
    let old_value = scene.params().get(key).map_err(|e| e.to_string())?.to_string();
    scene.params_mut().set_text(key, value).map_err(|e| e.to_string())?;
    let after = scene.render(&options).map_err(|e| e.to_string())?;
    Ok(Repainted { before, after, old_value })
}

/// Mean of each RGB channel over the pixels with `x < width / 6` (the Cornell box's left
/// wall, which is the red one).
pub fn left_wall_means(image: &Image) -> [f64; 3] {
    let mut sums = [0.0; 3];
    let mut n = 0.0;
    for y in 0..image.height() {
        for x in 0..image.width() / 6 {
            for (c, sum) in sums.iter_mut().enumerate() {
                *sum += image.pixel(x, y)[c] as f64;
            }
            n += 1.0;
        }
    }
    sums.map(|s| s / n)
}
