//! Optimisation of the drs IR, and the math library.
//!
//! Passes (each `fn(&mut Module)`, each preserving [`drs_ir::verify_module`] and the results
//! of the reference interpreter bit for bit, NaN payloads aside, see below):
//!
//! - [`inline_calls`]: inlining by callee size, or of everything ([`InlineOptions::FULL`]);
//! - [`fold_constants`]: constant folding with the interpreter's own op functions, constant
//!   `If`/`Select`/`Loop` folding, and algebraic simplification that is exact under IEEE 754;
//! - [`licm`]: loop-invariant code motion (loops are do-while and ops never trap, so
//!   hoisting is always safe);
//! - [`gvn`]: global value numbering over the region tree;
//! - [`dce`]: dead code, unused `If` results and loop-carried values;
//! - [`uniform_values`]: uniformity analysis for SIMD/GPU backends (not a transformation).
//!
//! Local arrays (`LocalLoad`/`LocalStore`) are memory like buffers, one array at a time: a
//! local store is a side effect inside its function (DCE keeps it) but not for callers (a
//! function that only writes its own arrays is pure), a local load is merged or hoisted only
//! where no store to its array can come between, and inlining gives every inlined call its own
//! copy of the callee's arrays. Passes keep a loop's `max_iters`.
//!
//! [`optimize`] runs them to a fixpoint (bounded rounds). [`expand_math`] is separate: the
//! interpreter executes `Math` ops directly (with the platform libm), backends need them
//! expanded into arithmetic, and every backend runs it — it *is* the math library of the CPU
//! and GPU backends. Its accuracy against the correctly rounded result (f64 libm rounded to
//! f32), in ulps; the bounds are enforced by this crate's tests, the measurements are from
//! `examples/math_ulp.rs` (`docs/math.md` has the method and the details):
//!
//! | function | bound | measured max | over |
//! | --- | --- | --- | --- |
//! | sin, cos, tan | 1 | 1 | every 5th f32, all magnitudes (Payne–Hanek above 2^24) |
//! | asin, acos, atan | 1 | 1 | every 5th f32 |
//! | sinh, cosh, tanh | 1 | 1 | every 5th f32 |
//! | exp, exp2 | 1 | 1 | all 2^32 f32 |
//! | log, log2 | 1 | 1 | every 5th f32 |
//! | atan2, pow | 2 | 1 | 2^26 argument pairs |
//!
//! The platform libm that the interpreter uses is within 1 ulp too, except glibc's
//! sinhf/coshf/tanhf (2 ulps at a few inputs), so expansion and interpreter differ by at most
//! 2 ulps on a `Math` op.
//!
//! NaN payloads: IR semantics do not specify which NaN an operation returns (neither do Rust
//! nor the hardware), and the passes may change them (`x * 1 → x` returns a signalling NaN
//! unquieted, `a + b` and `b + a` are merged). Every non-NaN bit pattern is preserved.
//! `Detach` and `ReplaceGrad` are kept (they matter to autodiff): `Detach` of a constant folds
//! to the constant, `ReplaceGrad` is never folded (GVN merges identical ones).

mod dce;
mod fold;
mod gvn;
mod inline;
mod licm;
pub mod math;
mod uniform;
pub mod util;

pub use dce::{dce, dce_function};
pub use fold::{fold_constants, fold_function};
pub use gvn::{gvn, gvn_function};
pub use inline::{inline_calls, inline_into, Candidate, InlineOptions};
pub use licm::{licm, licm_function};
pub use math::{eval as eval_math, expand_math, helper_function};
pub use uniform::uniform_values;

use drs_ir::{Function, Module};

/// How hard [`optimize`] works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptLevel {
    /// Nothing.
    None,
    /// Folding, simplification, GVN and DCE; no inlining.
    Basic,
    /// [`OptLevel::Basic`] plus inlining of small callees ([`InlineOptions::DEFAULT`]).
    #[default]
    Default,
    /// [`OptLevel::Basic`] plus inlining of every call outside recursive cycles
    /// ([`InlineOptions::FULL`]): one function per entry point, as GPU kernels want.
    Full,
}

/// The most rounds of the pass pipeline [`optimize`] runs before it stops looking for a
/// fixpoint.
pub const MAX_ROUNDS: usize = 8;

/// Optimises every function of the module at `level`, repeating the passes until nothing
/// changes (at most [`MAX_ROUNDS`] rounds).
pub fn optimize(module: &mut Module, level: OptLevel) {
    let inline = match level {
        OptLevel::None => return,
        OptLevel::Basic => None,
        OptLevel::Default => Some(InlineOptions::DEFAULT),
        OptLevel::Full => Some(InlineOptions::FULL),
    };
    for _ in 0..MAX_ROUNDS {
        let before = module.clone();
        if let Some(opts) = &inline {
            inline_calls(module, opts);
        }
        fold_constants(module);
        licm(module);
        gvn(module);
        dce(module);
        if *module == before {
            break;
        }
    }
}

/// The module a backend compiles: optimised at `level`, with every `Math` op expanded into the
/// math library, then optimised again so that the helpers are inlined and folded too. Every
/// backend (and every loader of IR) goes through this one function.
pub fn prepare_for_backend(module: &Module, level: OptLevel) -> Module {
    let mut module = module.clone();
    optimize(&mut module, level);
    expand_math(&mut module);
    optimize(&mut module, level);
    module
}

/// Folding, GVN and DCE of one function on its own (calls are treated as having side
/// effects), to a fixpoint; used to tidy the math helpers.
pub fn simplify_function_locally(f: &mut Function) {
    for _ in 0..MAX_ROUNDS {
        let before = f.clone();
        fold_function(f);
        licm_function(f, &[], &[]);
        gvn_function(f, &[], &[]);
        dce_function(f, &[]);
        if *f == before {
            break;
        }
    }
}
