//! The math library: expansion of [`Op::Math`] into basic IR arithmetic.
//!
//! Every transcendental is written once, against the [`Emit`] instruction set, in its own
//! module that cites its method. [`expand_math`] emits each function used by a module as a
//! helper function `__drs_<name>` (f32 parameters, one f32 result, branch-free: only
//! arithmetic, FMA, comparisons, selects, conversions and bitcasts) and replaces every
//! `Math` instruction by a call of it. Helpers keep code size small; the inliner inlines
//! them where it pays (they are over the default threshold, so it does not unless asked).
//!
//! [`eval`] runs the very same code on one lane with the interpreter's op semantics, which is
//! how the error bounds of `docs/math.md` are measured over billions of inputs.

// Coefficients are quoted with the digits of their source (SLEEF, Cephes), not shortened to
// the f32 they round to, so that they can be checked against it.
#![allow(clippy::excessive_precision)]

mod asin;
mod atan;
mod emit;
mod exp;
mod hyperbolic;
mod log;
mod pow;
mod reference;
mod trig;

pub use emit::{Df, Emit, Eval, Ops};
pub use reference::{reference, ulp_distance};

use drs_ir::{Builder, FuncId, Function, Inst, MathOp, Module, Op, Region, Signatures, Ty};

/// Emits `op(args)` with `e`; `args.len()` must be the op's arity.
pub fn emit<E: Emit>(e: &mut E, op: MathOp, args: &[E::V]) -> E::V {
    match op {
        MathOp::Sin => trig::sin(e, args[0]),
        MathOp::Cos => trig::cos(e, args[0]),
        MathOp::Tan => trig::tan(e, args[0]),
        MathOp::Asin => asin::asin(e, args[0]),
        MathOp::Acos => asin::acos(e, args[0]),
        MathOp::Atan => atan::atan(e, args[0]),
        MathOp::Atan2 => atan::atan2(e, args[0], args[1]),
        MathOp::Sinh => hyperbolic::sinh(e, args[0]),
        MathOp::Cosh => hyperbolic::cosh(e, args[0]),
        MathOp::Tanh => hyperbolic::tanh(e, args[0]),
        MathOp::Exp => exp::exp(e, args[0]),
        MathOp::Exp2 => exp::exp2(e, args[0]),
        MathOp::Log => log::log(e, args[0]),
        MathOp::Log2 => log::log2(e, args[0]),
        MathOp::Pow => pow::pow(e, args[0], args[1]),
    }
}

/// The value of the expansion of `op` at `args`, computed directly (bit-identical to
/// running the expanded IR in `drs_interp`).
pub fn eval(op: MathOp, args: &[f32]) -> f32 {
    let bits: Vec<u32> = args.iter().map(|a| a.to_bits()).collect();
    f32::from_bits(emit(&mut Eval, op, &bits))
}

/// The name of the helper function that implements `op`.
pub fn helper_name(op: MathOp) -> String {
    format!("__drs_{}", op.name())
}

/// Builds the helper function of `op`: `fn __drs_<op>(x: f32[, y: f32]) -> (f32)`, simplified
/// by the optimiser's local passes (folding, GVN, DCE), which preserve its results exactly.
pub fn helper_function(op: MathOp) -> Function {
    let mut f = Function::new(helper_name(op));
    let names: &[&str] = match op {
        MathOp::Atan2 => &["y", "x"],
        MathOp::Pow => &["x", "y"],
        _ => &["x"],
    };
    let params: Vec<_> = names.iter().map(|n| f.add_param(*n, Ty::F32)).collect();
    f.result_types = vec![Ty::F32];
    let sigs = Signatures::default();
    let mut b = Builder::new(&mut f, &sigs);
    let r = emit(&mut b, op, &params);
    b.finish(vec![r]);
    crate::simplify_function_locally(&mut f);
    f
}

/// Replaces every [`Op::Math`] of the module by a call of its helper function, adding the
/// helpers that are used (once each; existing functions of that name are reused).
pub fn expand_math(module: &mut Module) {
    let mut used = [false; MathOp::ALL.len()];
    for f in &module.functions {
        crate::util::walk_insts(&f.body, &mut |inst| {
            if let Op::Math(op, _) = &inst.op {
                used[index(*op)] = true;
            }
        });
    }
    let mut ids: [Option<FuncId>; MathOp::ALL.len()] = [None; MathOp::ALL.len()];
    for op in MathOp::ALL {
        if used[index(op)] {
            let id = match module.find(&helper_name(op)) {
                Some(id) => id,
                None => module.add_function(helper_function(op)),
            };
            ids[index(op)] = Some(id);
        }
    }
    for f in &mut module.functions {
        replace_in_region(&mut f.body, &ids);
    }
}

fn index(op: MathOp) -> usize {
    MathOp::ALL.iter().position(|&m| m == op).expect("listed")
}

fn replace_in_region(region: &mut Region, ids: &[Option<FuncId>]) {
    for inst in &mut region.insts {
        replace_in_inst(inst, ids);
    }
}

fn replace_in_inst(inst: &mut Inst, ids: &[Option<FuncId>]) {
    match &mut inst.op {
        Op::Math(op, args) => {
            let id = ids[index(*op)].expect("helper added for every used op");
            inst.op = Op::Call(id, std::mem::take(args));
        }
        Op::If { then, els, .. } => {
            replace_in_region(then, ids);
            replace_in_region(els, ids);
        }
        Op::Loop { body, .. } => replace_in_region(body, ids),
        _ => {}
    }
}
