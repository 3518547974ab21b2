//! Loop-invariant code motion.
//!
//! A pure, region-free instruction at the top level of a loop body whose operands are all
//! defined outside the loop moves to just before the loop. Loops are do-while (the body runs
//! at least once) and IR operations never trap, so this never computes anything that was
//! not computed before, and it changes no result. Inner loops are processed first, so an
//! invariant travels out through every loop it is invariant to. Moved: arithmetic,
//! comparisons, selects, conversions, `Math`, calls of functions without side effects that
//! read no written buffer, loads from buffers that the module never writes, and loads from
//! local arrays that the loop (nested regions included) never stores to.

use crate::util::{operands, readonly_functions, stored_locals, walk_insts, written_buffers};
use drs_ir::{Function, Module, Op, Region, Value};
use rustc_hash::FxHashSet as HashSet;

/// Hoists loop invariants in every function of the module.
pub fn licm(module: &mut Module) {
    let written = written_buffers(module);
    let readonly = readonly_functions(module, &written);
    for f in &mut module.functions {
        licm_function(f, &readonly, &written);
    }
}

/// Hoists loop invariants in one function; `readonly_fns` and `written_buffers` as computed
/// by [`crate::util::readonly_functions`] and [`crate::util::written_buffers`].
pub fn licm_function(f: &mut Function, readonly_fns: &[bool], written_buffers: &[bool]) {
    let mut body = std::mem::take(&mut f.body);
    region(&mut body, &Facts { readonly_fns, written: written_buffers, arrays: f.locals.len() });
    f.body = body;
}

/// What decides whether an instruction may leave a loop.
struct Facts<'a> {
    readonly_fns: &'a [bool],
    written: &'a [bool],
    /// The number of local arrays of the function.
    arrays: usize,
}

/// Whether `op` may move out of a loop that stores to the local arrays of `stored_locals`.
fn movable(op: &Op, facts: &Facts, stored_locals: &[bool]) -> bool {
    match op {
        Op::If { .. }
        | Op::Loop { .. }
        | Op::Store { .. }
        | Op::AtomicAdd { .. }
        | Op::LocalStore { .. }
        | Op::CallExtern(..) => false,
        Op::Call(f, _) => facts.readonly_fns.get(f.0 as usize).copied().unwrap_or(false),
        Op::Load { buffer, .. } => !facts.written.get(*buffer as usize).copied().unwrap_or(true),
        Op::LocalLoad { array, .. } => !stored_locals.get(*array as usize).copied().unwrap_or(true),
        _ => true,
    }
}

fn region(r: &mut Region, facts: &Facts) {
    let insts = std::mem::take(&mut r.insts);
    let mut out = Vec::with_capacity(insts.len());
    for mut inst in insts {
        match &mut inst.op {
            Op::If { then, els, .. } => {
                region(then, facts);
                region(els, facts);
            }
            Op::Loop { body, .. } => {
                region(body, facts);
                let stored = stored_locals(body, facts.arrays);
                let mut inside: HashSet<Value> = body.params.iter().copied().collect();
                walk_insts(body, &mut |i| inside.extend(i.results.iter().copied()));
                let mut kept = Vec::with_capacity(body.insts.len());
                for bi in std::mem::take(&mut body.insts) {
                    if movable(&bi.op, facts, &stored) && operands(&bi.op).iter().all(|v| !inside.contains(v)) {
                        for r in &bi.results {
                            inside.remove(r);
                        }
                        out.push(bi);
                    } else {
                        kept.push(bi);
                    }
                }
                body.insts = kept;
            }
            _ => {}
        }
        out.push(inst);
    }
    r.insts = out;
}
