//! `drsc`: the command line of the drs compiler.

use clap::{Parser, Subcommand, ValueEnum};
use commands::Backend;
use pipeline::Opt;
mod codegen;
mod commands;
mod frontend;
mod inverse;
mod pipeline;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "drsc", version, about = "Compiler for the drs differentiable rendering language")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check .drs files (directories are searched for .drs files).
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
    /// Print the IR of a function (or of the whole program).
    Ir {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The function, e.g. `lerp` or `Frame::to_local`; all functions if omitted.
        #[arg(long = "fn", value_name = "NAME")]
        function: Option<String>,
        /// Optimisation level of the printed IR.
        #[arg(long, value_enum, default_value_t = Opt::None)]
        opt: Opt,
        /// Expand transcendental functions into the math library, as backends see them.
        #[arg(long)]
        expand_math: bool,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
    /// Evaluate a call, e.g. `--call 'f(1.0, vec3(1.0, 2.0, 3.0))'`, and print its value.
    Eval {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_name = "CALL")]
        call: String,
        #[arg(long, value_enum, default_value_t = Backend::Interp)]
        backend: Backend,
        /// SIMD lanes; every lane runs the call with the same arguments and must agree.
        #[arg(long, default_value_t = 1, value_parser = parse_lanes)]
        lanes: usize,
        #[arg(long, value_enum, default_value_t = Opt::Default)]
        opt: Opt,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
    /// Print the derivative of a function as .drs source that checks again with `drsc check`.
    Ad {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The function, e.g. `lerp` or `Frame::to_local`.
        #[arg(long = "fn", value_name = "NAME")]
        function: String,
        /// Forward mode (`fwd_diff`) or reverse mode (`bwd_diff`).
        #[arg(long, value_enum)]
        mode: commands::AdMode,
        /// Optimisation of the printed code (`basic` keeps one function per derivative).
        #[arg(long, value_enum, default_value_t = Opt::Basic)]
        opt: Opt,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
    /// Compile .drs files into an artifact that the runtime loads without the sources.
    Build {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        #[arg(long, value_enum, default_value_t = Opt::Default)]
        opt: Opt,
        /// Leave out native code (by default the artifact has code for this host at 1, 4 and
        /// 8 lanes, which the runtime loads without compiling when it runs on the same target).
        #[arg(long)]
        no_native: bool,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
    /// Render a Mitsuba 3 XML scene with its .drs plugins to an EXR or PNG image.
    Render {
        #[command(flatten)]
        scene: render::SceneArgs,
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// Samples per pixel (default: the scene's sampler).
        #[arg(long)]
        spp: Option<u32>,
        /// Random seed (default: the scene's sampler).
        #[arg(long)]
        seed: Option<u32>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        #[command(flatten)]
        kernel: codegen::KernelArgs,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// List a scene's parameters with Mitsuba-style keys, types and values.
    Params {
        #[command(flatten)]
        scene: render::SceneArgs,
    },
    /// Gradients of an image loss against a reference with respect to scene parameters,
    /// printed as JSON: {"loss": x, "grads": {"KEY": [...]}}.
    Grad {
        #[command(flatten)]
        args: inverse::InverseArgs,
    },
    /// Gradient descent on scene parameters toward a reference image; writes the final
    /// parameters, the loss history and each iteration's time in seconds as JSON.
    Optimize {
        #[command(flatten)]
        args: inverse::InverseArgs,
        #[arg(long)]
        iters: u32,
        /// Learning rate.
        #[arg(long)]
        lr: f32,
        #[arg(long, value_enum, default_value_t = inverse::OptimizerName::Adam)]
        optimizer: inverse::OptimizerName,
        /// Keep every optimised value within LOW,HIGH (e.g. 0,1 for reflectances).
        #[arg(long, value_name = "LOW,HIGH", value_parser = parse_bounds)]
        clamp: Option<(f32, f32)>,
        /// Where to write the JSON result (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "OUT.json")]
        output: Option<PathBuf>,
        /// No progress display.
        #[arg(long, short)]
        quiet: bool,
    },
}

#[derive(clap::Args)]
struct StdlibArgs {
    /// Standard library directory (default: $DRS_STDLIB, else the bundled stdlib/).
    #[arg(long, value_name = "DIR")]
    stdlib: Option<PathBuf>,
    /// Check without the standard library and its implicit prelude.
    #[arg(long, conflicts_with = "stdlib")]
    no_stdlib: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Rendered diagnostics with source excerpts.
    Human,
    /// One JSON object per diagnostic per line.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { files, format, stdlib } => return frontend::check(&files, format, &stdlib),
        Command::Ir { files, function, opt, expand_math, stdlib } => frontend::run(&files, Format::Human, &stdlib)
            .and_then(|fe| pipeline::lower(fe, false))
            .map(|p| commands::ir(&p, function.as_deref(), opt, expand_math)),
        Command::Eval { files, call, backend, lanes, opt, stdlib } => frontend::run(&files, Format::Human, &stdlib)
            .and_then(|fe| pipeline::lower(fe, false))
            .map(|p| commands::eval(&p, &call, backend, lanes, opt)),
        Command::Ad { files, function, mode, opt, stdlib } => frontend::run(&files, Format::Human, &stdlib)
            .and_then(|fe| pipeline::lower(fe, false))
            .map(|mut p| commands::ad(&mut p, &function, mode, opt)),
        Command::Build { files, output, opt, no_native, stdlib } => frontend::run(&files, Format::Human, &stdlib)
            .and_then(|fe| pipeline::lower(fe, true))
            .map(|p| commands::build(&p, &output, opt, !no_native)),
        Command::Render { scene, output, spp, seed, threads, kernel, quiet } => {
            return render::render(&scene, &output, spp, seed, threads, &kernel, quiet)
        }
        Command::Params { scene } => return render::params(&scene),
        Command::Grad { args } => return inverse::grad(&args),
        Command::Optimize { args, iters, lr, optimizer, clamp, output, quiet } => {
            let descent = inverse::Descent {
                iterations: iters,
                learning_rate: lr,
                optimizer,
                clamp,
                output: output.as_deref(),
                quiet,
            };
            return inverse::optimize(&args, &descent);
        }
    };
    result.unwrap_or_else(|code| code)
}

fn parse_bounds(text: &str) -> Result<(f32, f32), String> {
    let parse = |t: &str| t.trim().parse::<f32>().map_err(|e| format!("`{t}`: {e}"));
    let (low, high) = text.split_once(',').ok_or("expected LOW,HIGH")?;
    let (low, high) = (parse(low)?, parse(high)?);
    if low > high {
        return Err(format!("{low} is above {high}"));
    }
    Ok((low, high))
}

fn parse_lanes(text: &str) -> Result<usize, String> {
    match text {
        "1" | "4" | "8" | "16" => Ok(text.parse().unwrap_or(1)),
        _ => Err("lanes must be 1, 4, 8 or 16".to_string()),
    }
}
