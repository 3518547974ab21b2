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

use rustc_hash::FxHashMap as HashMap;

use drs_ir::{FuncId, Function, Module, Op};

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
    if level != OptLevel::None {
        optimize_with(module, inlining(level), false);
    }
}

/// The inlining of `level`.
fn inlining(level: OptLevel) -> Option<InlineOptions> {
    match level {
        OptLevel::None | OptLevel::Basic => None,
        OptLevel::Default => Some(InlineOptions::DEFAULT),
        OptLevel::Full => Some(InlineOptions::FULL),
    }
}

/// The pass pipeline to a fixpoint, with `inline` as the inlining. In a `kernel` (entry
/// function 0), functions that inlining leaves unreachable from the entry are dropped each
/// round instead of being optimised with the rest.
fn optimize_with(module: &mut Module, inline: Option<InlineOptions>, kernel: bool) {
    for _ in 0..MAX_ROUNDS {
        let before = module.clone();
        if let Some(opts) = &inline {
            inline_calls(module, opts);
            if kernel {
                let reachable = reachable_from(module, FuncId(0));
                if reachable.len() < module.functions.len() {
                    *module = extract(module, &reachable);
                }
            }
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

/// Callees called from two places in a kernel and of at most this many instructions are
/// inlined at both while the callers stay within the inlining budget
/// ([`InlineOptions::two_call_sites_below`]). A call costs a kernel more than
/// its instructions: every vector value live across it is saved and restored (the System V
/// ABI keeps no vector register across calls), and the callee cannot be specialised to its
/// arguments.
/// Path replay runs its vertex loop (735 instructions) once to trace, with a zero adjoint that
/// folds the backpropagation away, and once to replay: as one shared function, a `drsc
/// optimize` iteration of the Cornell box took 6% longer. Rough plastic's BSDF methods, called
/// for emitter and for BSDF sampling, made its render 30% longer as shared functions. The
/// price is compile time (docs/benchmarks.md, "Scene kernels").
pub const KERNEL_TWO_CALL_SITES_BELOW: usize = 1000;

/// [`prepare_for_backend`] for a kernel: a module whose only entry point is `entry` (the
/// host calls nothing else). The result holds the functions reachable from `entry`, with
/// `entry` as function 0, and from [`OptLevel::Default`] on also inlines every callee called
/// from a single place, whatever its size ([`InlineOptions::single_call_site`]), and callees
/// called from two ([`KERNEL_TWO_CALL_SITES_BELOW`]).
pub fn prepare_kernel(module: &Module, level: OptLevel, entry: FuncId) -> Module {
    let mut module = extract(module, &reachable_from(module, entry));
    let inline = inlining(level).map(|opts| InlineOptions {
        single_call_site: true,
        two_call_sites_below: KERNEL_TWO_CALL_SITES_BELOW,
        ..opts
    });
    if level != OptLevel::None {
        optimize_with(&mut module, inline, true);
    }
    expand_math(&mut module);
    if level != OptLevel::None {
        optimize_with(&mut module, inline, true);
    }
    extract(&module, &reachable_from(&module, FuncId(0)))
}

/// The functions `entry` calls, directly or not, and `entry` itself (first), in the order
/// a depth-first walk meets them.
pub fn reachable_from(module: &Module, entry: FuncId) -> Vec<FuncId> {
    let mut order = vec![entry];
    let mut seen = vec![false; module.functions.len()];
    seen[entry.0 as usize] = true;
    let mut next = 0;
    while let Some(&f) = order.get(next) {
        next += 1;
        for g in util::callees(&module.function(f).body) {
            if !std::mem::replace(&mut seen[g.0 as usize], true) {
                order.push(g);
            }
        }
    }
    order
}

/// A module of the functions `order` names, in that order (renumbered: `order[i]` becomes
/// function `i`), with only the externs and buffers they use. Every function called from one
/// of them must be in `order`.
pub fn extract(module: &Module, order: &[FuncId]) -> Module {
    let function_ids: HashMap<FuncId, FuncId> = order.iter().enumerate().map(|(i, &f)| (f, FuncId(i as u32))).collect();
    let mut extern_ids: HashMap<u32, u32> = HashMap::default();
    let mut buffer_ids: HashMap<u32, u32> = HashMap::default();
    let mut out = Module { functions: Vec::new(), externs: Vec::new(), buffers: Vec::new() };
    for &f in order {
        let mut function = module.function(f).clone();
        util::walk_insts_mut(&mut function.body, &mut |inst| match &mut inst.op {
            Op::Call(g, _) => *g = function_ids[g],
            Op::CallExtern(e, _) => {
                *e = *extern_ids.entry(*e).or_insert_with(|| {
                    out.externs.push(module.externs[*e as usize].clone());
                    out.externs.len() as u32 - 1
                })
            }
            Op::Load { buffer, .. } | Op::Store { buffer, .. } | Op::AtomicAdd { buffer, .. } => {
                *buffer = *buffer_ids.entry(*buffer).or_insert_with(|| {
                    out.buffers.push(module.buffers[*buffer as usize].clone());
                    out.buffers.len() as u32 - 1
                })
            }
            _ => {}
        });
        out.functions.push(function);
    }
    out
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
