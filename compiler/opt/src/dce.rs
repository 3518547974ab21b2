//! Dead code elimination.
//!
//! A backward liveness walk over the region tree removes pure instructions none of whose
//! results is used, the unused results of `If`s (with their yields in both regions), and the
//! loop-carried values of a `Loop` whose result is unused and whose value does not reach the
//! continue flag, another needed carried value or a side effect (a fixpoint over the body,
//! which follows values through the `If`s in it).
//! A pure `If` or `Loop` with no used result disappears; a pure loop is assumed to terminate
//! (as the interpreter's iteration limit and the language's loops imply). Stores, atomics,
//! extern calls and calls of functions with side effects are always kept, except stores to a
//! local array that is never read, which are removed with the array.

use crate::util::{is_pure, operands, pure_functions, walk_insts};
use drs_ir::{Function, Module, Op, Region, Value};
use rustc_hash::FxHashSet as HashSet;

/// Removes dead code from every function of the module.
pub fn dce(module: &mut Module) {
    let pure = pure_functions(module);
    for f in &mut module.functions {
        dce_function(f, &pure);
    }
}

/// Removes dead code from one function; `pure_fns` from [`crate::util::pure_functions`].
pub fn dce_function(f: &mut Function, pure_fns: &[bool]) {
    drop_write_only_arrays(f);
    let mut d = Dce { live: vec![false; f.value_types.len()], pure: pure_fns };
    for &y in &f.body.yields {
        d.mark(y);
    }
    d.region(&mut f.body);
}

/// Removes the local arrays that are never read, with their stores (a reverse-mode tape of
/// values the reverse sweep turned out not to need): their writes cannot be observed.
fn drop_write_only_arrays(f: &mut Function) {
    let mut read = vec![false; f.locals.len()];
    walk_insts(&f.body, &mut |inst| {
        if let Op::LocalLoad { array, .. } = inst.op {
            read[array as usize] = true;
        }
    });
    if read.iter().all(|&r| r) {
        return;
    }
    let mut next = 0u32;
    let new_index: Vec<u32> = read
        .iter()
        .map(|&r| {
            next += u32::from(r);
            next.wrapping_sub(1)
        })
        .collect();
    fn rewrite(region: &mut Region, read: &[bool], new_index: &[u32]) {
        region.insts.retain(|inst| !matches!(inst.op, Op::LocalStore { array, .. } if !read[array as usize]));
        for inst in &mut region.insts {
            match &mut inst.op {
                Op::LocalLoad { array, .. } | Op::LocalStore { array, .. } => *array = new_index[*array as usize],
                Op::If { then, els, .. } => {
                    rewrite(then, read, new_index);
                    rewrite(els, read, new_index);
                }
                Op::Loop { body, .. } => rewrite(body, read, new_index),
                _ => {}
            }
        }
    }
    rewrite(&mut f.body, &read, &new_index);
    retain_by(&mut f.locals, &read);
}

struct Dce<'a> {
    live: Vec<bool>,
    pure: &'a [bool],
}

/// Values used by `region` (nested regions included).
fn uses_in(region: &Region, set: &mut HashSet<Value>) {
    walk_insts(region, &mut |inst| set.extend(operands(&inst.op)));
    fn yields(r: &Region, set: &mut HashSet<Value>) {
        set.extend(r.yields.iter().copied());
        for inst in &r.insts {
            for n in crate::util::nested(&inst.op) {
                yields(n, set);
            }
        }
    }
    yields(region, set);
}

/// Liveness inside `region` from `set` (the roots): adds every value that a live instruction
/// (one with a side effect or a live result) reads. A live `If` makes its condition live and,
/// in both regions, the yields of its live results and what their live instructions read, so
/// that a value which only passes through an `If` (a carried value that a masked branch
/// updates) is not kept alive by the branch's side effects. Nested `Loop`s stay conservative:
/// every value read inside them counts.
fn live_in(region: &Region, set: &mut HashSet<Value>, pure: &[bool]) {
    for inst in region.insts.iter().rev() {
        if is_pure(&inst.op, pure) && !inst.results.iter().any(|r| set.contains(r)) {
            continue;
        }
        match &inst.op {
            Op::If { cond, then, els } => {
                set.insert(*cond);
                for branch in [then, els] {
                    for (result, &y) in inst.results.iter().zip(&branch.yields) {
                        if set.contains(result) {
                            set.insert(y);
                        }
                    }
                    live_in(branch, set, pure);
                }
            }
            op => {
                set.extend(operands(op));
                for n in crate::util::nested(op) {
                    uses_in(n, set);
                }
            }
        }
    }
}

fn retain_by<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    v.retain(|_| {
        let k = keep[i];
        i += 1;
        k
    });
}

impl Dce<'_> {
    fn mark(&mut self, v: Value) {
        self.live[v.0 as usize] = true;
    }

    fn is_live(&self, v: Value) -> bool {
        self.live[v.0 as usize]
    }

    /// Processes a region whose live yields the caller has marked.
    fn region(&mut self, region: &mut Region) {
        let insts = std::mem::take(&mut region.insts);
        let mut kept = Vec::with_capacity(insts.len());
        for mut inst in insts.into_iter().rev() {
            let any_live = inst.results.iter().any(|&r| self.is_live(r));
            if !any_live && is_pure(&inst.op, self.pure) {
                continue;
            }
            let keep: Vec<bool> = inst.results.iter().map(|&r| self.is_live(r)).collect();
            match &mut inst.op {
                Op::If { cond, then, els } => {
                    retain_by(&mut inst.results, &keep);
                    retain_by(&mut then.yields, &keep);
                    retain_by(&mut els.yields, &keep);
                    let cond = *cond;
                    for r in [&mut *then, &mut *els] {
                        for &y in &r.yields {
                            self.live[y.0 as usize] = true;
                        }
                        self.region(r);
                    }
                    self.mark(cond);
                }
                Op::Loop { init, body, .. } => {
                    let mut needed = keep;
                    loop {
                        let mut set = HashSet::default();
                        set.insert(body.yields[0]);
                        for (j, &n) in needed.iter().enumerate() {
                            if n {
                                set.insert(body.yields[1 + j]);
                            }
                        }
                        live_in(body, &mut set, self.pure);
                        let mut changed = false;
                        for (j, p) in body.params.iter().enumerate() {
                            if !needed[j] && set.contains(p) {
                                needed[j] = true;
                                changed = true;
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                    retain_by(&mut inst.results, &needed);
                    retain_by(init, &needed);
                    retain_by(&mut body.params, &needed);
                    let mut yneeded = vec![true];
                    yneeded.extend(needed.iter().copied());
                    retain_by(&mut body.yields, &yneeded);
                    for &y in &body.yields {
                        self.live[y.0 as usize] = true;
                    }
                    self.region(body);
                    for &i in init.iter() {
                        self.live[i.0 as usize] = true;
                    }
                }
                op => {
                    for v in operands(op) {
                        self.mark(v);
                    }
                }
            }
            kept.push(inst);
        }
        kept.reverse();
        region.insts = kept;
    }
}
