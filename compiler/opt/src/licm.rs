//! Loop-invariant code motion.
//!
//! A pure, region-free instruction at the top level of a loop body whose operands are all
//! defined outside the loop moves to just before the loop. Loops are do-while (the body runs
//! at least once) and IR operations never trap, so this never computes anything that was
//! not computed before, and it changes no result. Inner loops are processed first, so an
//! invariant travels out through every loop it is invariant to. Moved: arithmetic,
//! comparisons, selects, conversions, `Math`, calls of functions without side effects that
//! read no written buffer, and loads from buffers that the module never writes.

use crate::util::{operands, readonly_functions, walk_insts, written_buffers};
use drs_ir::{Function, Module, Op, Region, Value};
use std::collections::HashSet;

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
    region(&mut f.body, readonly_fns, written_buffers);
}

fn movable(op: &Op, readonly_fns: &[bool], written: &[bool]) -> bool {
    match op {
        Op::If { .. } | Op::Loop { .. } | Op::Store { .. } | Op::AtomicAdd { .. } | Op::CallExtern(..) => false,
        Op::Call(f, _) => readonly_fns.get(f.0 as usize).copied().unwrap_or(false),
        Op::Load { buffer, .. } => !written.get(*buffer as usize).copied().unwrap_or(true),
        _ => true,
    }
}

fn region(r: &mut Region, readonly_fns: &[bool], written: &[bool]) {
    let insts = std::mem::take(&mut r.insts);
    let mut out = Vec::with_capacity(insts.len());
    for mut inst in insts {
        match &mut inst.op {
            Op::If { then, els, .. } => {
                region(then, readonly_fns, written);
                region(els, readonly_fns, written);
            }
            Op::Loop { body, .. } => {
                region(body, readonly_fns, written);
                let mut inside: HashSet<Value> = body.params.iter().copied().collect();
                walk_insts(body, &mut |i| inside.extend(i.results.iter().copied()));
                let mut kept = Vec::with_capacity(body.insts.len());
                for bi in std::mem::take(&mut body.insts) {
                    if movable(&bi.op, readonly_fns, written) && operands(&bi.op).iter().all(|v| !inside.contains(v)) {
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
