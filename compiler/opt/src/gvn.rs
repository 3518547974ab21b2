//! Global value numbering (common subexpression elimination) over the region tree.
//!
//! A scoped hash table maps each pure operation (with its operands already renamed to
//! their representatives) to the values it defined first. The walk is in program order;
//! entries made inside a region are dropped when the region ends, so a value is only ever
//! replaced by one defined earlier in the same or an enclosing region (which dominates it).
//!
//! Never merged: stores, atomics and extern calls (side effects), `If` and `Loop` (regions),
//! calls of functions that have side effects or read a buffer the module writes. Loads are merged only for buffers that no
//! instruction of the module writes (no `Store` or `AtomicAdd` names the buffer; extern
//! functions cannot reach buffers in the IR's model, as in the interpreter). Commutative
//! operations are keyed with sorted operands and `a > b` as `b < a`. f32 `add`/`mul` count as
//! commutative: only a NaN payload could tell the two orders apart.
//!
//! Local loads are merged per array by *generation*: each array's generation goes up at every
//! store to it met in the walk and, before a loop body is walked, if the body stores to it
//! (the next iteration may read that store). A load is keyed by (array, generation, index),
//! so it is only merged with an earlier load that no store to the array can come between.

use crate::util::{map_operands, readonly_functions, stored_locals, written_buffers, Subst};
use drs_ir::{BinaryOp, CmpOp, Const, FuncId, Function, Inst, MathOp, Module, Op, Region, Ty, UnaryOp, Value};
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Const(Const),
    Unary(UnaryOp, Value),
    Binary(BinaryOp, Value, Value),
    Fma(Value, Value, Value),
    Cmp(CmpOp, Value, Value),
    Select(Value, Value, Value),
    Convert(Ty, Value),
    Bitcast(Ty, Value),
    Math(MathOp, Vec<Value>),
    Call(FuncId, Vec<Value>),
    Load(u32, Value),
    /// (array, generation, index)
    LocalLoad(u32, u32, Value),
    Detach(Value),
    ReplaceGrad(Value, Value),
}

/// Merges equal pure computations in every function of the module.
pub fn gvn(module: &mut Module) {
    let written = written_buffers(module);
    let readonly = readonly_functions(module, &written);
    for f in &mut module.functions {
        gvn_function(f, &readonly, &written);
    }
}

/// GVN of one function; `readonly_fns` and `written_buffers` as computed by
/// [`crate::util::readonly_functions`] and [`crate::util::written_buffers`].
pub fn gvn_function(f: &mut Function, readonly_fns: &[bool], written_buffers: &[bool]) {
    let mut g = Gvn {
        table: HashMap::default(),
        scopes: Vec::new(),
        subst: Subst::new(f.value_types.len()),
        readonly_fns,
        written: written_buffers,
        local_generation: vec![0; f.locals.len()],
    };
    let mut body = std::mem::take(&mut f.body);
    g.region(&mut body);
    f.body = body;
}

struct Gvn<'a> {
    table: HashMap<Key, Vec<Value>>,
    /// Keys inserted in each open region, innermost last.
    scopes: Vec<Vec<Key>>,
    subst: Subst,
    readonly_fns: &'a [bool],
    written: &'a [bool],
    /// The current generation of each local array (see the module documentation).
    local_generation: Vec<u32>,
}

impl Gvn<'_> {
    fn key(&self, op: &Op) -> Option<Key> {
        let sorted = |a: Value, b: Value| if a <= b { (a, b) } else { (b, a) };
        Some(match op {
            Op::Const(c) => Key::Const(*c),
            Op::Unary(u, a) => Key::Unary(*u, *a),
            Op::Binary(b, x, y) => {
                // integer min/max commute; f32 min/max do not (NaN, signed zeros)
                if b.is_commutative() {
                    let (x, y) = sorted(*x, *y);
                    Key::Binary(*b, x, y)
                } else {
                    Key::Binary(*b, *x, *y)
                }
            }
            Op::Fma(a, b, c) => {
                let (a, b) = sorted(*a, *b);
                Key::Fma(a, b, *c)
            }
            Op::Cmp(c, a, b) => match c {
                CmpOp::Gt => Key::Cmp(CmpOp::Lt, *b, *a),
                CmpOp::Ge => Key::Cmp(CmpOp::Le, *b, *a),
                CmpOp::Eq | CmpOp::Ne => {
                    let (a, b) = sorted(*a, *b);
                    Key::Cmp(*c, a, b)
                }
                _ => Key::Cmp(*c, *a, *b),
            },
            Op::Select(c, a, b) => Key::Select(*c, *a, *b),
            Op::Convert(t, a) => Key::Convert(*t, *a),
            Op::Bitcast(t, a) => Key::Bitcast(*t, *a),
            Op::Math(m, args) => Key::Math(*m, args.clone()),
            Op::Call(f, args) if self.readonly_fns.get(f.0 as usize).copied().unwrap_or(false) => {
                Key::Call(*f, args.clone())
            }
            Op::Load { buffer, index } if !self.written.get(*buffer as usize).copied().unwrap_or(true) => {
                Key::Load(*buffer, *index)
            }
            Op::LocalLoad { array, index } => {
                Key::LocalLoad(*array, self.local_generation.get(*array as usize).copied()?, *index)
            }
            Op::Detach(a) => Key::Detach(*a),
            Op::ReplaceGrad(a, b) => Key::ReplaceGrad(*a, *b),
            _ => return None,
        })
    }

    fn new_generations(&mut self, arrays: &[bool]) {
        for (g, &stored) in self.local_generation.iter_mut().zip(arrays) {
            if stored {
                *g += 1;
            }
        }
    }

    fn region(&mut self, region: &mut Region) {
        self.scopes.push(Vec::new());
        let insts = std::mem::take(&mut region.insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            if let Some(inst) = self.inst(inst) {
                out.push(inst);
            }
        }
        region.insts = out;
        for y in &mut region.yields {
            *y = self.subst.get(*y);
        }
        for k in self.scopes.pop().expect("pushed above") {
            self.table.remove(&k);
        }
    }

    /// Returns the instruction to keep, or `None` when it was merged into an earlier one.
    fn inst(&mut self, mut inst: Inst) -> Option<Inst> {
        map_operands(&mut inst.op, |v| self.subst.get(v));
        match &mut inst.op {
            Op::If { then, els, .. } => {
                self.region(then);
                self.region(els);
                return Some(inst);
            }
            Op::Loop { body, .. } => {
                let stored = stored_locals(body, self.local_generation.len());
                self.new_generations(&stored);
                self.region(body);
                return Some(inst);
            }
            Op::LocalStore { array, .. } => {
                if let Some(g) = self.local_generation.get_mut(*array as usize) {
                    *g += 1;
                }
                return Some(inst);
            }
            _ => {}
        }
        let Some(key) = self.key(&inst.op) else { return Some(inst) };
        if let Some(prev) = self.table.get(&key) {
            for (&r, &p) in inst.results.iter().zip(prev) {
                self.subst.set(r, p);
            }
            return None;
        }
        self.table.insert(key.clone(), inst.results.clone());
        self.scopes.last_mut().expect("a region is open").push(key);
        Some(inst)
    }
}
