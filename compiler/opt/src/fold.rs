//! Constant folding and algebraic simplification.
//!
//! Folding evaluates operations whose operands are constants with the interpreter's own op
//! functions (`drs_interp::{unary, binary, compare, math}`, `drs_ir::convert`, `f32::mul_add`
//! for FMA), so a folded value is bit for bit what the interpreter computes. `Math` ops are
//! folded with the interpreter's reference (`drs_interp::math`), not with the expansion of
//! [`crate::math`]: folding never changes what the interpreter would compute.
//!
//! Control flow: an `If` with a constant condition is replaced by the instructions of the
//! region that runs; a `Loop` whose continue flag is constantly false runs once and is
//! replaced by its body; a loop-carried value that the body yields back unchanged is the
//! initial value throughout; a carried value (or an `If` result) that is the same outer value
//! on every path is replaced by it.
//!
//! Algebraic rewrites are exact under IEEE 754 for every operand, except that NaN payloads
//! and the sign of a NaN are not preserved (the IR does not specify them; Rust and the
//! hardware do not either). Examples of what is and is not done for f32:
//!
//! | rewrite | exact? |
//! | --- | --- |
//! | `x * 1 → x`, `x / 1 → x`, `x * 2 → x + x`, `x * -1 → -x` | yes |
//! | `x + (-0.0) → x`, `x - (+0.0) → x` | yes |
//! | `x + 0.0 → x` | no: `-0 + +0 = +0` (not done) |
//! | `x * 0 → 0`, `x - x → 0` | no: NaN, inf, sign of zero (not done) |
//! | `fma(a, b, -0.0) → a * b`, `fma(1, b, c) → b + c` | yes |
//! | `fma(a, b, +0.0) → a * b` | no: `a*b = -0` gives `+0` (not done) |
//! | `-(-x) → x`, `abs(-x) → abs(x)`, `x - (-y) → x + y`, `x + (-y) → x - y` | yes |
//! | `min(x, x) → x`, `select(c, a, a) → a` | yes |
//!
//! Integer and bool identities (wrapping arithmetic) are applied freely: `x + 0`, `x * 1`,
//! `x * 0`, `x - x`, `x ^ x`, `x & x`, shifts by multiples of 32, `!(a < b) → a >= b`, ...

use crate::util::{map_operands, rename_uses, walk_insts, Subst};
use drs_interp as interp;
use drs_ir::{BinaryOp, CmpOp, Const, Function, Inst, Module, Op, Region, Ty, UnaryOp, Value};
use rustc_hash::FxHashSet as HashSet;

/// Folds and simplifies every function of the module.
pub fn fold_constants(module: &mut Module) {
    for f in &mut module.functions {
        fold_function(f);
    }
}

/// Folds and simplifies one function.
pub fn fold_function(f: &mut Function) {
    let mut body = std::mem::take(&mut f.body);
    let n = f.value_types.len();
    let mut folder = Folder { types: &f.value_types, consts: vec![None; n], defs: vec![None; n], subst: Subst::new(n) };
    folder.region(&mut body);
    f.body = body;
}

struct Folder<'f> {
    types: &'f [Ty],
    consts: Vec<Option<Const>>,
    /// Defining operation of each value defined by a simple (region-free) instruction.
    defs: Vec<Option<Op>>,
    subst: Subst,
}

enum Action {
    Keep,
    /// The result is this (earlier, visible) value.
    Replace(Value),
    /// The instruction becomes this operation (same result).
    Rewrite(Op),
}

fn cmp_inverse(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
    }
}

fn cmp_swapped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
    }
}

fn is_int(ty: Ty) -> bool {
    matches!(ty, Ty::I32 | Ty::U32)
}

impl Folder<'_> {
    fn ty(&self, v: Value) -> Ty {
        self.types[v.0 as usize]
    }

    fn konst(&self, v: Value) -> Option<Const> {
        self.consts[v.0 as usize]
    }

    fn def(&self, v: Value) -> Option<&Op> {
        self.defs[v.0 as usize].as_ref()
    }

    /// Whether `v` is the constant with exactly these bits.
    fn is_bits(&self, v: Value, bits: u32) -> bool {
        self.konst(v).is_some_and(|c| c.bits() == bits)
    }

    fn is_f(&self, v: Value, x: f32) -> bool {
        self.ty(v) == Ty::F32 && self.is_bits(v, x.to_bits())
    }

    fn region(&mut self, region: &mut Region) {
        let insts = std::mem::take(&mut region.insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            self.inst(inst, &mut out);
        }
        region.insts = out;
        for y in &mut region.yields {
            *y = self.subst.get(*y);
        }
    }

    fn inst(&mut self, mut inst: Inst, out: &mut Vec<Inst>) {
        map_operands(&mut inst.op, |v| self.subst.get(v));
        match inst.op {
            Op::If { .. } => self.fold_if(inst, out),
            Op::Loop { .. } => self.fold_loop(inst, out),
            _ => {
                for _ in 0..8 {
                    match self.simplify(&inst) {
                        Action::Keep => break,
                        Action::Replace(v) => {
                            self.subst.set(inst.results[0], v);
                            return;
                        }
                        Action::Rewrite(op) => inst.op = op,
                    }
                }
                if let (Op::Const(c), [r]) = (&inst.op, &inst.results[..]) {
                    self.consts[r.0 as usize] = Some(*c);
                }
                if inst.results.len() == 1 {
                    self.defs[inst.results[0].0 as usize] = Some(inst.op.clone());
                }
                out.push(inst);
            }
        }
    }

    fn fold_if(&mut self, mut inst: Inst, out: &mut Vec<Inst>) {
        let Op::If { cond, then, els } = &mut inst.op else { unreachable!() };
        if let Some(c) = self.konst(*cond) {
            let region = std::mem::take(if c.bits() != 0 { then } else { els });
            for i in region.insts {
                self.inst(i, out);
            }
            for (&r, &y) in inst.results.iter().zip(&region.yields) {
                let y = self.subst.get(y);
                self.subst.set(r, y);
            }
            return;
        }
        let cond = *cond;
        self.region(then);
        self.region(els);
        for (i, &r) in inst.results.iter().enumerate() {
            let (a, b) = (then.yields[i], els.yields[i]);
            if a == b {
                // SSA: a value yielded by both regions is defined outside the `If`.
                self.subst.set(r, a);
            } else if self.konst(a) == Some(Const::Bool(true)) && self.konst(b) == Some(Const::Bool(false)) {
                self.subst.set(r, cond);
            }
        }
        out.push(inst);
    }

    fn fold_loop(&mut self, mut inst: Inst, out: &mut Vec<Inst>) {
        let Op::Loop { init, body, .. } = &mut inst.op else { unreachable!() };
        self.region(body);
        // A carried value yielded back unchanged is its initial value on every iteration.
        let mut invariant = Subst::new(0);
        for (i, &p) in body.params.iter().enumerate() {
            if body.yields[1 + i] == p {
                invariant.set(p, init[i]);
                self.subst.set(inst.results[i], init[i]);
            }
        }
        if !invariant.is_empty() {
            // (the param then has no use left but its own yield; DCE drops it)
            rename_uses(body, &mut |v| invariant.get(v));
        }
        if self.konst(body.yields[0]) == Some(Const::Bool(false)) {
            // The body runs exactly once, with the initial values.
            let mut once = Subst::new(0);
            for (&p, &i) in body.params.iter().zip(init.iter()) {
                once.set(p, i);
            }
            let mut region = std::mem::take(body);
            rename_uses(&mut region, &mut |v| once.get(v));
            for i in region.insts {
                // Already folded; re-run the simple rewrites with the initial values known.
                self.inst(i, out);
            }
            for (&r, &y) in inst.results.iter().zip(&region.yields[1..]) {
                let y = self.subst.get(y);
                self.subst.set(r, y);
            }
            return;
        }
        // A carried value whose next value is defined outside the loop ends as that value
        // (the body runs at least once).
        let mut inside = HashSet::default();
        inside.extend(body.params.iter().copied());
        walk_insts(body, &mut |i| inside.extend(i.results.iter().copied()));
        for (i, &r) in inst.results.iter().enumerate() {
            let y = body.yields[1 + i];
            if !inside.contains(&y) {
                self.subst.set(r, y);
            }
        }
        out.push(inst);
    }

    fn fold_const(&self, op: &Op) -> Option<Const> {
        let k = |v: &Value| self.konst(*v);
        Some(match op {
            Op::Unary(u, a) => {
                let ty = self.ty(*a);
                Const::from_bits(ty, interp::unary(*u, ty, k(a)?.bits()))
            }
            Op::Binary(b, x, y) => {
                let ty = self.ty(*x);
                Const::from_bits(ty, interp::binary(*b, ty, k(x)?.bits(), k(y)?.bits()))
            }
            Op::Fma(a, b, c) => {
                let f = |v: &Value| k(v).map(|c| f32::from_bits(c.bits()));
                Const::f32(f(a)?.mul_add(f(b)?, f(c)?))
            }
            Op::Cmp(c, a, b) => Const::Bool(interp::compare(*c, self.ty(*a), k(a)?.bits(), k(b)?.bits())),
            Op::Convert(to, a) => Const::from_bits(*to, drs_ir::convert(self.ty(*a), *to, k(a)?.bits())),
            Op::Bitcast(to, a) => Const::from_bits(*to, k(a)?.bits()),
            Op::Math(m, args) => {
                let xs = args.iter().map(|a| k(a).map(|c| f32::from_bits(c.bits()))).collect::<Option<Vec<f32>>>()?;
                Const::f32(interp::math(*m, &xs))
            }
            Op::Detach(a) => k(a)?,
            _ => return None,
        })
    }

    fn simplify(&self, inst: &Inst) -> Action {
        if !matches!(inst.op, Op::Const(_)) {
            if let Some(c) = self.fold_const(&inst.op) {
                return Action::Rewrite(Op::Const(c));
            }
        }
        match &inst.op {
            Op::Unary(op, a) => self.unary(*op, *a),
            Op::Binary(op, a, b) => self.binary(*op, *a, *b),
            Op::Fma(a, b, c) => {
                let (a, b, c) = (*a, *b, *c);
                if self.is_f(c, -0.0) {
                    Action::Rewrite(Op::Binary(BinaryOp::Mul, a, b))
                } else if self.is_f(a, 1.0) {
                    Action::Rewrite(Op::Binary(BinaryOp::Add, b, c))
                } else if self.is_f(b, 1.0) {
                    Action::Rewrite(Op::Binary(BinaryOp::Add, a, c))
                } else {
                    Action::Keep
                }
            }
            Op::Cmp(op, a, b) => self.cmp(*op, *a, *b),
            Op::Select(c, a, b) => {
                let (c, a, b) = (*c, *a, *b);
                if let Some(k) = self.konst(c) {
                    return Action::Replace(if k.bits() != 0 { a } else { b });
                }
                if a == b {
                    return Action::Replace(a);
                }
                if self.ty(a) == Ty::Bool {
                    match (self.konst(a), self.konst(b)) {
                        (Some(Const::Bool(true)), Some(Const::Bool(false))) => return Action::Replace(c),
                        (Some(Const::Bool(false)), Some(Const::Bool(true))) => {
                            return Action::Rewrite(Op::Unary(UnaryOp::Not, c))
                        }
                        _ => {}
                    }
                }
                if let Some(Op::Unary(UnaryOp::Not, c2)) = self.def(c) {
                    return Action::Rewrite(Op::Select(*c2, b, a));
                }
                Action::Keep
            }
            Op::Convert(to, a) => {
                let from = self.ty(*a);
                if from == *to {
                    return Action::Replace(*a);
                }
                if is_int(from) && is_int(*to) {
                    // i32 <-> u32 keeps the bits
                    if let Some(Op::Convert(_, x) | Op::Bitcast(_, x)) = self.def(*a) {
                        if is_int(self.ty(*x)) {
                            return if self.ty(*x) == *to {
                                Action::Replace(*x)
                            } else {
                                Action::Rewrite(Op::Convert(*to, *x))
                            };
                        }
                    }
                }
                Action::Keep
            }
            Op::Bitcast(to, a) => {
                if self.ty(*a) == *to {
                    return Action::Replace(*a);
                }
                if let Some(Op::Bitcast(_, x)) = self.def(*a) {
                    return if self.ty(*x) == *to {
                        Action::Replace(*x)
                    } else {
                        Action::Rewrite(Op::Bitcast(*to, *x))
                    };
                }
                Action::Keep
            }
            _ => Action::Keep,
        }
    }

    fn unary(&self, op: UnaryOp, a: Value) -> Action {
        let inner = self.def(a);
        match (op, inner) {
            (UnaryOp::Neg, Some(Op::Unary(UnaryOp::Neg, x))) | (UnaryOp::Not, Some(Op::Unary(UnaryOp::Not, x))) => {
                Action::Replace(*x)
            }
            (UnaryOp::Abs, Some(Op::Unary(UnaryOp::Abs, _))) => Action::Replace(a),
            (UnaryOp::Abs, Some(Op::Unary(UnaryOp::Neg, x))) => Action::Rewrite(Op::Unary(UnaryOp::Abs, *x)),
            (
                UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round,
                Some(Op::Unary(UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round, _)),
            ) => {
                // rounding an integral value (or inf/NaN) returns it unchanged
                Action::Replace(a)
            }
            (UnaryOp::Not, Some(Op::Cmp(c, x, y))) if self.ty(*x) != Ty::F32 => {
                Action::Rewrite(Op::Cmp(cmp_inverse(*c), *x, *y))
            }
            _ => Action::Keep,
        }
    }

    fn binary(&self, op: BinaryOp, a: Value, b: Value) -> Action {
        use BinaryOp::*;
        let ty = self.ty(a);
        // constants to the right of commutative operations
        let commutes = op.is_commutative() || (is_int(ty) && matches!(op, Min | Max));
        if commutes && self.konst(a).is_some() && self.konst(b).is_none() {
            return Action::Rewrite(Op::Binary(op, b, a));
        }
        let kb = self.konst(b);
        match ty {
            Ty::F32 => {
                let neg_def = |v: Value| match self.def(v) {
                    Some(Op::Unary(UnaryOp::Neg, x)) => Some(*x),
                    _ => None,
                };
                match op {
                    Mul | Div if self.is_f(b, 1.0) => Action::Replace(a),
                    Mul if self.is_f(b, 2.0) => Action::Rewrite(Op::Binary(Add, a, a)),
                    Mul if self.is_f(b, -1.0) => Action::Rewrite(Op::Unary(UnaryOp::Neg, a)),
                    Add if self.is_f(b, -0.0) => Action::Replace(a),
                    Sub if self.is_f(b, 0.0) => Action::Replace(a),
                    Sub if neg_def(b).is_some() => Action::Rewrite(Op::Binary(Add, a, neg_def(b).unwrap())),
                    Add if neg_def(b).is_some() => Action::Rewrite(Op::Binary(Sub, a, neg_def(b).unwrap())),
                    Min | Max if a == b => Action::Replace(a),
                    _ => Action::Keep,
                }
            }
            Ty::I32 | Ty::U32 => {
                let zero = Const::from_bits(ty, 0);
                let kz = kb.map(|c| c.bits());
                match op {
                    Add | Sub | Or | Xor if kz == Some(0) => Action::Replace(a),
                    Shl | Shr if kz.is_some_and(|s| s % 32 == 0) => Action::Replace(a),
                    Mul | Div if kz == Some(1) => Action::Replace(a),
                    Mul | And if kz == Some(0) => Action::Rewrite(Op::Const(zero)),
                    Rem if kz == Some(1) => Action::Rewrite(Op::Const(zero)),
                    And if kz == Some(u32::MAX) => Action::Replace(a),
                    Or if kz == Some(u32::MAX) => Action::Rewrite(Op::Const(Const::from_bits(ty, u32::MAX))),
                    Sub | Xor if a == b => Action::Rewrite(Op::Const(zero)),
                    And | Or | Min | Max if a == b => Action::Replace(a),
                    _ => Action::Keep,
                }
            }
            Ty::Bool => match (op, kb) {
                (And, Some(Const::Bool(true))) | (Or | Xor, Some(Const::Bool(false))) => Action::Replace(a),
                (And, Some(Const::Bool(false))) | (Or, Some(Const::Bool(true))) => Action::Replace(b),
                (Xor, Some(Const::Bool(true))) => Action::Rewrite(Op::Unary(UnaryOp::Not, a)),
                (And | Or, _) if a == b => Action::Replace(a),
                (Xor, _) if a == b => Action::Rewrite(Op::Const(Const::Bool(false))),
                _ => Action::Keep,
            },
        }
    }

    fn cmp(&self, op: CmpOp, a: Value, b: Value) -> Action {
        if self.konst(a).is_some() && self.konst(b).is_none() {
            return Action::Rewrite(Op::Cmp(cmp_swapped(op), b, a));
        }
        let ty = self.ty(a);
        if ty != Ty::F32 && a == b {
            let r = matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge);
            return Action::Rewrite(Op::Const(Const::Bool(r)));
        }
        if ty == Ty::Bool {
            match (op, self.konst(b)) {
                (CmpOp::Eq, Some(Const::Bool(true))) | (CmpOp::Ne, Some(Const::Bool(false))) => {
                    return Action::Replace(a)
                }
                (CmpOp::Eq, Some(Const::Bool(false))) | (CmpOp::Ne, Some(Const::Bool(true))) => {
                    return Action::Rewrite(Op::Unary(UnaryOp::Not, a))
                }
                _ => {}
            }
        }
        Action::Keep
    }
}
