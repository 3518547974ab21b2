//! Walking and rewriting the region tree, and the effect facts the passes share.

use drs_ir::{FuncId, Inst, Module, Op, Region, Value};

/// Calls `f` on every instruction of `region` and its nested regions, in program order
/// (an `If` or `Loop` before the instructions of its regions).
pub fn walk_insts<'a>(region: &'a Region, f: &mut impl FnMut(&'a Inst)) {
    for inst in &region.insts {
        f(inst);
        for r in nested(&inst.op) {
            walk_insts(r, f);
        }
    }
}

/// [`walk_insts`] with mutable access (an `If` or `Loop` is visited before its regions, so
/// `f` may rewrite its operands but should not replace its regions).
pub fn walk_insts_mut(region: &mut Region, f: &mut impl FnMut(&mut Inst)) {
    for inst in &mut region.insts {
        f(inst);
        match &mut inst.op {
            Op::If { then, els, .. } => {
                walk_insts_mut(then, f);
                walk_insts_mut(els, f);
            }
            Op::Loop { body, .. } => walk_insts_mut(body, f),
            _ => {}
        }
    }
}

/// The regions an operation owns.
pub fn nested(op: &Op) -> Vec<&Region> {
    match op {
        Op::If { then, els, .. } => vec![then, els],
        Op::Loop { body, .. } => vec![body],
        _ => Vec::new(),
    }
}

/// The values an operation reads directly (not those read inside its regions).
pub fn operands(op: &Op) -> Vec<Value> {
    match op {
        Op::Const(_) => vec![],
        Op::Unary(_, a) | Op::Convert(_, a) | Op::Bitcast(_, a) | Op::Detach(a) => vec![*a],
        Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::ReplaceGrad(a, b) => vec![*a, *b],
        Op::Fma(a, b, c) | Op::Select(a, b, c) => vec![*a, *b, *c],
        Op::Math(_, args) | Op::Call(_, args) | Op::CallExtern(_, args) => args.clone(),
        Op::Load { index, .. } | Op::LocalLoad { index, .. } => vec![*index],
        Op::Store { index, value, .. } | Op::AtomicAdd { index, value, .. } | Op::LocalStore { index, value, .. } => {
            vec![*index, *value]
        }
        Op::If { cond, .. } => vec![*cond],
        Op::Loop { init, .. } => init.clone(),
    }
}

/// Rewrites the values an operation reads directly.
pub fn map_operands(op: &mut Op, mut f: impl FnMut(Value) -> Value) {
    match op {
        Op::Const(_) => {}
        Op::Unary(_, a) | Op::Convert(_, a) | Op::Bitcast(_, a) | Op::Detach(a) => *a = f(*a),
        Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::ReplaceGrad(a, b) => {
            *a = f(*a);
            *b = f(*b);
        }
        Op::Fma(a, b, c) | Op::Select(a, b, c) => {
            *a = f(*a);
            *b = f(*b);
            *c = f(*c);
        }
        Op::Math(_, args) | Op::Call(_, args) | Op::CallExtern(_, args) | Op::Loop { init: args, .. } => {
            for a in args {
                *a = f(*a);
            }
        }
        Op::Load { index, .. } | Op::LocalLoad { index, .. } => *index = f(*index),
        Op::Store { index, value, .. } | Op::AtomicAdd { index, value, .. } | Op::LocalStore { index, value, .. } => {
            *index = f(*index);
            *value = f(*value);
        }
        Op::If { cond, .. } => *cond = f(*cond),
    }
}

/// Rewrites every use (operands and yields, in nested regions too) of `region`.
pub fn rename_uses(region: &mut Region, f: &mut impl FnMut(Value) -> Value) {
    for inst in &mut region.insts {
        map_operands(&mut inst.op, &mut *f);
        match &mut inst.op {
            Op::If { then, els, .. } => {
                rename_uses(then, f);
                rename_uses(els, f);
            }
            Op::Loop { body, .. } => rename_uses(body, f),
            _ => {}
        }
    }
    for y in &mut region.yields {
        *y = f(*y);
    }
}

/// A substitution of values, resolved transitively.
#[derive(Clone, Debug, Default)]
pub struct Subst {
    map: Vec<Option<Value>>,
}

impl Subst {
    pub fn new(values: usize) -> Self {
        Subst { map: vec![None; values] }
    }

    pub fn set(&mut self, from: Value, to: Value) {
        let i = from.0 as usize;
        if i >= self.map.len() {
            self.map.resize(i + 1, None);
        }
        if from != to {
            self.map[i] = Some(to);
        }
    }

    pub fn get(&self, mut v: Value) -> Value {
        while let Some(Some(to)) = self.map.get(v.0 as usize) {
            v = *to;
        }
        v
    }

    pub fn is_empty(&self) -> bool {
        self.map.iter().all(Option::is_none)
    }
}

/// Number of instructions of a region, nested regions included.
pub fn size(region: &Region) -> usize {
    let mut n = 0;
    walk_insts(region, &mut |_| n += 1);
    n
}

/// Whether each function of the module is free of side effects (no store, atomic or extern
/// call, directly or through calls). Loads are pure, and so are stores to the function's
/// local arrays: they belong to one call and are invisible to the caller. Recursive cycles are resolved
/// optimistically (a cycle of otherwise pure functions is pure).
pub fn pure_functions(module: &Module) -> Vec<bool> {
    let n = module.functions.len();
    let mut pure = vec![true; n];
    loop {
        let mut changed = false;
        for (i, f) in module.functions.iter().enumerate() {
            if !pure[i] {
                continue;
            }
            let mut p = true;
            walk_insts(&f.body, &mut |inst| match &inst.op {
                Op::Store { .. } | Op::AtomicAdd { .. } | Op::CallExtern(..) => p = false,
                Op::Call(g, _) if !pure.get(g.0 as usize).copied().unwrap_or(false) => p = false,
                _ => {}
            });
            if !p {
                pure[i] = false;
                changed = true;
            }
        }
        if !changed {
            return pure;
        }
    }
}

/// Whether each function of the module is pure (see [`pure_functions`]) and reads no buffer
/// that the module writes: its result depends on its arguments only, so two calls with the
/// same arguments can be merged and a call can move across stores.
pub fn readonly_functions(module: &Module, written_buffers: &[bool]) -> Vec<bool> {
    let mut ro = pure_functions(module);
    loop {
        let mut changed = false;
        for (i, f) in module.functions.iter().enumerate() {
            if !ro[i] {
                continue;
            }
            let mut ok = true;
            walk_insts(&f.body, &mut |inst| match &inst.op {
                Op::Load { buffer, .. } if written_buffers.get(*buffer as usize).copied().unwrap_or(true) => ok = false,
                Op::Call(g, _) if !ro.get(g.0 as usize).copied().unwrap_or(false) => ok = false,
                _ => {}
            });
            if !ok {
                ro[i] = false;
                changed = true;
            }
        }
        if !changed {
            return ro;
        }
    }
}

/// Whether an operation (with its regions) has no side effect. A store to a local array
/// counts as one here: later loads of the same call may read it.
pub fn is_pure(op: &Op, pure_fns: &[bool]) -> bool {
    match op {
        Op::Store { .. } | Op::AtomicAdd { .. } | Op::LocalStore { .. } | Op::CallExtern(..) => false,
        Op::Call(f, _) => pure_fns.get(f.0 as usize).copied().unwrap_or(false),
        Op::If { then, els, .. } => region_is_pure(then, pure_fns) && region_is_pure(els, pure_fns),
        Op::Loop { body, .. } => region_is_pure(body, pure_fns),
        _ => true,
    }
}

pub fn region_is_pure(region: &Region, pure_fns: &[bool]) -> bool {
    region.insts.iter().all(|i| is_pure(&i.op, pure_fns))
}

/// The functions called (directly) by a region.
pub fn callees(region: &Region) -> Vec<FuncId> {
    let mut out = Vec::new();
    walk_insts(region, &mut |inst| {
        if let Op::Call(f, _) = inst.op {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    });
    out
}

/// The local arrays of a function that some instruction of `region` stores to (indexed by
/// array; `arrays` is the function's number of local arrays).
pub fn stored_locals(region: &Region, arrays: usize) -> Vec<bool> {
    let mut stored = vec![false; arrays];
    walk_insts(region, &mut |inst| {
        if let Op::LocalStore { array, .. } = inst.op {
            if let Some(slot) = stored.get_mut(array as usize) {
                *slot = true;
            }
        }
    });
    stored
}

/// Buffers that some instruction of the module writes (store or atomic add).
pub fn written_buffers(module: &Module) -> Vec<bool> {
    let mut w = vec![false; module.buffers.len()];
    for f in &module.functions {
        walk_insts(&f.body, &mut |inst| {
            if let Op::Store { buffer, .. } | Op::AtomicAdd { buffer, .. } = inst.op {
                if let Some(slot) = w.get_mut(buffer as usize) {
                    *slot = true;
                }
            }
        });
    }
    w
}

/// For each extern of `module`, whether each of its results is read by some instruction or
/// region (a yield) after some call of it, over every function: what compiled code can need
/// from the host. Conservative: a result passed on to a call or a loop counts as read.
pub fn extern_results_read(module: &Module) -> Vec<Vec<bool>> {
    let mut reads: Vec<Vec<bool>> = module.externs.iter().map(|e| vec![false; e.results.len()]).collect();
    for f in &module.functions {
        let mut read = vec![false; f.value_types.len()];
        mark_reads(&f.body.insts, &f.body.yields, &mut read);
        walk_insts(&f.body, &mut |inst| {
            if let Op::CallExtern(ext, _) = inst.op {
                if let Some(reads) = reads.get_mut(ext as usize) {
                    for (slot, result) in reads.iter_mut().zip(&inst.results) {
                        *slot |= read.get(result.0 as usize).copied().unwrap_or(true);
                    }
                }
            }
        });
    }
    reads
}

/// Marks the values that `insts` (with their regions) and `yields` read.
pub fn mark_reads(insts: &[Inst], yields: &[Value], read: &mut [bool]) {
    for &v in yields {
        read[v.0 as usize] = true;
    }
    for inst in insts {
        for v in operands(&inst.op) {
            read[v.0 as usize] = true;
        }
        for r in nested(&inst.op) {
            mark_reads(&r.insts, &r.yields, read);
        }
    }
}
