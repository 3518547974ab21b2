//! `drsc grad` and `drsc optimize`: gradients of an image loss with respect to scene
//! parameters, and gradient descent on them (design.md §5).
//!
//! Each primal render and its gradient pass use different seeds (`seed` and `seed + 1`; in
//! iteration `i` of an optimisation, `seed + 2i` and `seed + 2i + 1`): with the same random
//! numbers, the gradient of a non-linear loss would be biased (Vicini et al. 2021 §4.1).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use drs_render::{Gradients, Image, Loss, Method, Optimizer, RenderOptions, Scene, Value};
use serde_json::json;

use crate::codegen::KernelArgs;
use crate::render::{fail, fail_render, load_with_integrator, SceneArgs};

/// What `grad` and `optimize` share.
#[derive(clap::Args)]
pub struct InverseArgs {
    #[command(flatten)]
    pub scene: SceneArgs,
    /// The target image (EXR or PNG), the film's size.
    #[arg(long = "ref", value_name = "REF")]
    pub reference: PathBuf,
    /// A parameter key, as `drsc params` lists them (repeatable).
    #[arg(long = "param", value_name = "KEY", required = true)]
    pub params: Vec<String>,
    #[arg(long, value_enum, default_value_t = LossName::L2)]
    pub loss: LossName,
    /// Samples per pixel of each pass (default: the scene's sampler).
    #[arg(long)]
    pub spp: Option<u32>,
    /// Seed of the first primal render.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// The integrator that replaces the scene's: `prb` (path replay), `rb` (radiative
    /// backpropagation), `rb-biased` (`rb` with incident radiance 1), `path-ad` (the plain
    /// reverse-mode path tracer, a slow reference), or any integrator type with an adjoint.
    #[arg(long, default_value = "prb")]
    pub integrator: String,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub kernel: KernelArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LossName {
    L1,
    L2,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OptimizerName {
    Adam,
    Sgd,
}

/// The scene with the chosen integrator and the parameters' gradients enabled, and the target.
fn setup(args: &InverseArgs) -> Result<(Scene, Image), ExitCode> {
    let (integrator, overrides) = match args.integrator.as_str() {
        "path-ad" => ("pathad", vec![]),
        "rb-biased" => ("rb", vec![("biased", Value::Boolean(true))]),
        other => (other, vec![]),
    };
    let mut scene = load_with_integrator(&args.scene, Some((integrator, &overrides)))?;
    for key in &args.params {
        scene.params_mut().enable_grad(key).map_err(fail)?;
    }
    let reference =
        drs_film::load_image(&args.reference).map_err(|e| fail(format!("{}: {e}", args.reference.display())))?;
    Ok((scene, reference))
}

fn loss_of(name: LossName) -> Loss {
    match name {
        LossName::L1 => Loss::L1,
        LossName::L2 => Loss::L2,
    }
}

fn options(args: &InverseArgs, seed: u32) -> Result<RenderOptions<'static>, ExitCode> {
    let (lanes, generator) = args.kernel.resolve().map_err(fail)?;
    Ok(RenderOptions { spp: args.spp, seed: Some(seed), threads: args.threads, lanes, generator, progress: None })
}

/// One iteration: render with `seed`, the loss against the reference, gradients with `seed + 1`.
fn loss_and_gradients(
    scene: &Scene,
    reference: &Image,
    args: &InverseArgs,
    seed: u32,
) -> Result<(f64, Gradients), ExitCode> {
    let image = scene.render(&options(args, seed)?).map_err(fail_render)?;
    let (loss, adjoint) = loss_of(args.loss).eval(&image, reference).map_err(fail)?;
    let gradients = scene.backward(&adjoint, &options(args, seed.wrapping_add(1))?).map_err(fail_render)?;
    Ok((loss, gradients))
}

pub fn grad(args: &InverseArgs) -> ExitCode {
    let run = || -> Result<(), ExitCode> {
        let (scene, reference) = setup(args)?;
        let (loss, gradients) = loss_and_gradients(&scene, &reference, args, args.seed)?;
        let grads: serde_json::Map<String, serde_json::Value> =
            gradients.iter().map(|(key, g)| (key.to_owned(), json!(g))).collect();
        println!("{}", json!({ "loss": loss, "grads": grads }));
        Ok(())
    };
    run().err().unwrap_or(ExitCode::SUCCESS)
}

/// How to optimise.
pub struct Descent<'a> {
    pub iterations: u32,
    pub learning_rate: f32,
    pub optimizer: OptimizerName,
    /// Bounds every optimised scalar is clamped to after each step.
    pub clamp: Option<(f32, f32)>,
    pub output: Option<&'a Path>,
    pub quiet: bool,
}

pub fn optimize(args: &InverseArgs, descent: &Descent) -> ExitCode {
    let run = || -> Result<(), ExitCode> {
        let (mut scene, reference) = setup(args)?;
        let method = match descent.optimizer {
            OptimizerName::Adam => Method::adam(),
            OptimizerName::Sgd => Method::Sgd { momentum: 0.0 },
        };
        let mut optimizer = Optimizer::new(method, descent.learning_rate);
        if let Some((low, high)) = descent.clamp {
            for key in &args.params {
                optimizer.set_bounds(key, low, high);
            }
        }
        let bar = (!descent.quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(u64::from(descent.iterations));
            bar.set_style(
                indicatif::ProgressStyle::with_template("optimizing [{bar:40}] {pos}/{len} {msg} ({elapsed_precise})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        let (mut history, mut seconds) = (Vec::new(), Vec::new());
        for i in 0..descent.iterations {
            let start = std::time::Instant::now();
            let seed = args.seed.wrapping_add(2 * i);
            let (loss, gradients) = loss_and_gradients(&scene, &reference, args, seed)?;
            optimizer.step(scene.params_mut(), &gradients).map_err(fail)?;
            seconds.push(start.elapsed().as_secs_f64());
            history.push(loss);
            match &bar {
                Some(bar) => {
                    bar.set_message(format!("loss {loss:.6}"));
                    bar.inc(1);
                }
                None if !descent.quiet => eprintln!("iteration {i}: loss {loss:.6}"),
                None => {}
            }
        }
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let mut params = serde_json::Map::new();
        for key in &args.params {
            params.insert(key.clone(), json!(scene.params().values(key).map_err(fail)?));
        }
        let result = json!({ "params": params, "loss": history, "seconds": seconds });
        match descent.output {
            Some(path) => drs_film::write_atomically(path, |w| writeln!(w, "{result:#}"))
                .map_err(|e| fail(format!("{}: {e}", path.display())))?,
            None => println!("{result:#}"),
        }
        Ok(())
    };
    run().err().unwrap_or(ExitCode::SUCCESS)
}
