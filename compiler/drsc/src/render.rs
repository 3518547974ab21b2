//! `drsc render` and `drsc params`: the runtime's command line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use crate::codegen::KernelArgs;

use drs_render::{Definitions, LibraryOptions, PluginLibrary, RenderError, RenderOptions, Scene, SceneError, Value};

/// What loading a scene needs besides its file.
#[derive(clap::Args)]
pub struct SceneArgs {
    /// The Mitsuba 3 XML scene.
    pub scene: PathBuf,
    /// Override a scene `<default>`: `-D spp=16` (repeatable).
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// A directory of user .drs plugins, which override stdlib plugins of the same kind and
    /// name (repeatable).
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins: Vec<PathBuf>,
    /// Standard library directory (default: $DRS_STDLIB, else the bundled stdlib/).
    #[arg(long, value_name = "DIR")]
    pub stdlib: Option<PathBuf>,
}

pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Prints scene errors, which carry their own location and `error:`.
fn fail_scene(errors: Vec<SceneError>) -> ExitCode {
    for e in errors {
        eprintln!("{e}");
    }
    ExitCode::FAILURE
}

/// [`fail`] for the runtime's errors; those about the scene file (a film too large for memory,
/// say) print as scene errors.
pub fn fail_render(error: RenderError) -> ExitCode {
    match error {
        RenderError::Scene(errors) => fail_scene(errors),
        other => fail(other),
    }
}

fn load(args: &SceneArgs) -> Result<Scene, ExitCode> {
    load_with_integrator(args, None)
}

/// Loads the scene, with its integrator replaced, if given, by one of that type with those
/// properties.
pub fn load_with_integrator(args: &SceneArgs, integrator: Option<(&str, &[(&str, Value)])>) -> Result<Scene, ExitCode> {
    let mut definitions = Definitions::new();
    for d in &args.defines {
        definitions.parse_assignment(d).map_err(|e| fail(format!("-D {d}: {e}")))?;
    }
    let options = LibraryOptions { stdlib_dir: args.stdlib.clone(), plugin_dirs: args.plugins.clone() };
    let library = PluginLibrary::load(&options).map_err(|e| {
        eprintln!("{e}");
        ExitCode::FAILURE
    })?;
    let library = Arc::new(library);
    let scene = match integrator {
        Some((integrator, overrides)) => {
            Scene::load_file_with_integrator(&args.scene, &definitions, library, integrator, overrides)
        }
        None => Scene::load_file(&args.scene, &definitions, library),
    };
    scene.map_err(fail_scene)
}

#[allow(clippy::too_many_arguments)]
pub fn render(
    args: &SceneArgs,
    output: &Path,
    spp: Option<u32>,
    seed: Option<u32>,
    threads: Option<usize>,
    kernel: &KernelArgs,
    quiet: bool,
) -> ExitCode {
    match output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("exr" | "png") => {}
        _ => return fail(format!("{}: the output must end in .exr or .png", output.display())),
    }
    let start = Instant::now();
    let scene = match load(args) {
        Ok(scene) => scene,
        Err(code) => return code,
    };
    let (lanes, generator) = match kernel.resolve() {
        Ok(choice) => choice,
        Err(e) => return fail(e),
    };
    let loaded = start.elapsed().as_secs_f64();
    let compile_start = Instant::now();
    // The kernels of the scene's tables, too (their first computation is not rendering time).
    let kernel_options = RenderOptions { lanes, generator, ..RenderOptions::default() };
    if let Err(e) = scene.kernel(&kernel_options).and_then(|_| scene.update_tables()) {
        return fail_render(e);
    }
    let compiled = compile_start.elapsed().as_secs_f64();

    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("rendering [{bar:40}] {percent}% {elapsed_precise} (eta {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let options = RenderOptions { spp, seed, threads, lanes, generator, progress: Some(&progress) };
    let render_start = Instant::now();
    let image = match scene.render(&options) {
        Ok(image) => image,
        Err(e) => return fail_render(e),
    };
    let seconds = render_start.elapsed().as_secs_f64();
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Err(e) = drs_film::write_image(output, &image) {
        return fail(format!("{}: {e}", output.display()));
    }
    let film = scene.film();
    let spp = spp.unwrap_or(scene.sampler().sample_count());
    let samples = film.width as f64 * film.height as f64 * spp as f64;
    let threads = threads.unwrap_or_else(rayon::current_num_threads);
    println!(
        "drsc render: {seconds:.4} s, {:.3} Msamples/s ({}x{}, {spp} spp, {} {} lanes, {threads} threads; \
         scene {loaded:.3} s, kernel {compiled:.3} s)",
        samples / seconds / 1e6,
        film.width,
        film.height,
        generator.name,
        lanes.count(),
    );
    ExitCode::SUCCESS
}

pub fn params(args: &SceneArgs) -> ExitCode {
    let scene = match load(args) {
        Ok(scene) => scene,
        Err(code) => return code,
    };
    let store = scene.params();
    let width = store.params().iter().map(|p| p.key.len()).max().unwrap_or(0);
    for p in store.params() {
        // A tensor shows its shape, not its (often thousands of) values.
        let value = match store.tensor_shape(&p.key) {
            Ok([h, w, c]) => format!("shape [{h}, {w}, {c}]"),
            Err(_) => store.get(&p.key).map(|v| v.to_string()).unwrap_or_default(),
        };
        let diff = if p.differentiable { "" } else { "  (not differentiable)" };
        println!("{:width$}  {:8}  {value}{diff}", p.key, p.layout.describe());
    }
    ExitCode::SUCCESS
}
