//! From checked source to IR ready for a backend: lowering, optimisation, math expansion.

use crate::frontend::Frontend;
use clap::ValueEnum;
use drs_ir::Module;
use drs_lower::{lower_program, LoweredProgram};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Opt {
    /// No optimisation.
    None,
    /// Folding, simplification, GVN and DCE.
    Basic,
    /// Basic plus inlining of small functions.
    Default,
    /// Basic plus inlining of every call (one function per entry point).
    Full,
}

impl Opt {
    /// The name an artifact records (`drs_artifact::Artifact::opt`).
    pub fn name(self) -> &'static str {
        match self {
            Opt::None => "none",
            Opt::Basic => "basic",
            Opt::Default => "default",
            Opt::Full => "full",
        }
    }

    fn level(self) -> drs_opt::OptLevel {
        match self {
            Opt::None => drs_opt::OptLevel::None,
            Opt::Basic => drs_opt::OptLevel::Basic,
            Opt::Default => drs_opt::OptLevel::Default,
            Opt::Full => drs_opt::OptLevel::Full,
        }
    }
}

/// Lowers a checked program. Functions that cannot be lowered yet are reported as warnings;
/// `strict` makes them errors (for `drsc build`, whose artifact must be complete).
pub fn lower(frontend: Frontend, strict: bool) -> Result<LoweredProgram, ExitCode> {
    let Frontend { checked, .. } = frontend;
    let lowered = lower_program(&checked.program);
    let program = LoweredProgram { sources: checked.sources, program: checked.program, lowered };
    if !program.lowered.errors.is_empty() {
        let level = if strict { "error" } else { "warning" };
        for line in program.render_errors().lines() {
            eprintln!("{level}: {line}");
        }
        if strict {
            return Err(ExitCode::FAILURE);
        }
    }
    Ok(program)
}

/// The module a backend compiles: optimised at `opt`, with `Math` ops expanded into the
/// math library (then optimised again, so the helpers are inlined and folded as well).
pub fn for_backend(module: &Module, opt: Opt) -> Module {
    drs_opt::prepare_for_backend(module, opt.level())
}

pub fn optimized(module: &Module, opt: Opt) -> Module {
    let mut module = module.clone();
    drs_opt::optimize(&mut module, opt.level());
    module
}
