//! Appends IR instructions to the function being lowered, region by region.
//!
//! Unlike [`drs_ir::Builder`], regions are opened and closed explicitly, so that the lowering
//! can keep its own state (the environment of locals) across the two regions of an `if` and
//! the body of a loop.

use drs_ir::*;
use std::collections::HashMap;

pub(crate) struct Emitter {
    pub(crate) func: Function,
    /// Instruction lists of the open regions, innermost last.
    regions: Vec<Vec<Inst>>,
    /// The constant each value defined by `Op::Const` holds.
    consts: HashMap<Value, Const>,
}

impl Emitter {
    pub(crate) fn new(func: Function) -> Self {
        Emitter { func, regions: vec![Vec::new()], consts: HashMap::new() }
    }

    /// Ends the body with the function's results.
    pub(crate) fn finish(mut self, results: Vec<Value>) -> Function {
        let insts = self.regions.pop().expect("the body region is open");
        debug_assert!(self.regions.is_empty(), "every region opened is closed");
        self.func.body = Region { params: Vec::new(), insts, yields: results };
        self.func
    }

    pub(crate) fn open_region(&mut self) {
        self.regions.push(Vec::new());
    }

    pub(crate) fn close_region(&mut self) -> Vec<Inst> {
        assert!(self.regions.len() > 1, "the body region is closed by finish");
        self.regions.pop().expect("a region is open")
    }

    pub(crate) fn new_value(&mut self, ty: Ty) -> Value {
        self.func.new_value(ty)
    }

    pub(crate) fn ty(&self, v: Value) -> Ty {
        self.func.ty(v)
    }

    /// The constant `v` holds, if it is defined by `Op::Const`.
    pub(crate) fn const_of(&self, v: Value) -> Option<Const> {
        self.consts.get(&v).copied()
    }

    /// Appends an instruction with results of the given types.
    pub(crate) fn push(&mut self, op: Op, result_types: &[Ty]) -> Vec<Value> {
        let results: Vec<Value> = result_types.iter().map(|&t| self.func.new_value(t)).collect();
        if let Op::Const(c) = op {
            self.consts.insert(results[0], c);
        }
        self.regions.last_mut().expect("a region is open").push(Inst { results: results.clone(), op });
        results
    }

    /// Appends an instruction whose results are given (loops and ifs whose result values
    /// were allocated before their regions).
    pub(crate) fn push_inst(&mut self, inst: Inst) {
        self.regions.last_mut().expect("a region is open").push(inst);
    }

    fn push1(&mut self, op: Op, ty: Ty) -> Value {
        self.push(op, &[ty])[0]
    }

    pub(crate) fn konst(&mut self, c: Const) -> Value {
        self.push1(Op::Const(c), c.ty())
    }

    pub(crate) fn f32(&mut self, x: f32) -> Value {
        self.konst(Const::f32(x))
    }

    pub(crate) fn bool(&mut self, b: bool) -> Value {
        self.konst(Const::Bool(b))
    }

    pub(crate) fn u32(&mut self, x: u32) -> Value {
        self.konst(Const::U32(x))
    }

    /// The zero of a type: `0.0`, `0`, `0u`, `false`.
    pub(crate) fn zero(&mut self, ty: Ty) -> Value {
        self.konst(Const::from_bits(ty, 0))
    }

    pub(crate) fn zeros(&mut self, tys: &[Ty]) -> Vec<Value> {
        tys.iter().map(|&t| self.zero(t)).collect()
    }

    /// An integer or float constant of type `ty` with the value `x` (for `1`, `2.0`, ...).
    pub(crate) fn number(&mut self, ty: Ty, x: i32) -> Value {
        match ty {
            Ty::F32 => self.f32(x as f32),
            Ty::I32 => self.konst(Const::I32(x)),
            Ty::U32 => self.konst(Const::U32(x as u32)),
            Ty::Bool => self.bool(x != 0),
        }
    }

    pub(crate) fn unary(&mut self, op: UnaryOp, a: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Unary(op, a), t)
    }

    pub(crate) fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Binary(op, a, b), t)
    }

    pub(crate) fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Add, a, b)
    }

    pub(crate) fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Sub, a, b)
    }

    pub(crate) fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Mul, a, b)
    }

    pub(crate) fn div(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Div, a, b)
    }

    pub(crate) fn and(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::And, a, b)
    }

    pub(crate) fn or(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Or, a, b)
    }

    pub(crate) fn not(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Not, a)
    }

    pub(crate) fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.push1(Op::Fma(a, b, c), Ty::F32)
    }

    pub(crate) fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.push1(Op::Cmp(op, a, b), Ty::Bool)
    }

    pub(crate) fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Select(c, a, b), t)
    }

    pub(crate) fn convert(&mut self, to: Ty, a: Value) -> Value {
        if self.ty(a) == to {
            return a;
        }
        self.push1(Op::Convert(to, a), to)
    }

    pub(crate) fn bitcast(&mut self, to: Ty, a: Value) -> Value {
        if self.ty(a) == to {
            return a;
        }
        self.push1(Op::Bitcast(to, a), to)
    }

    pub(crate) fn math(&mut self, op: MathOp, args: Vec<Value>) -> Value {
        self.push1(Op::Math(op, args), Ty::F32)
    }

    pub(crate) fn detach(&mut self, a: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Detach(a), t)
    }

    pub(crate) fn replace_grad(&mut self, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::ReplaceGrad(a, b), t)
    }

    pub(crate) fn call(&mut self, func: FuncId, args: Vec<Value>, results: &[Ty]) -> Vec<Value> {
        self.push(Op::Call(func, args), results)
    }

    pub(crate) fn call_extern(&mut self, ext: u32, args: Vec<Value>, results: &[Ty]) -> Vec<Value> {
        self.push(Op::CallExtern(ext, args), results)
    }

    pub(crate) fn load(&mut self, buffer: u32, index: Value, elem: Ty) -> Value {
        self.push1(Op::Load { buffer, index }, elem)
    }

    /// `a0 || a1 || ...` (false for none).
    pub(crate) fn any(&mut self, flags: &[Value]) -> Value {
        match flags.split_first() {
            None => self.bool(false),
            Some((&first, rest)) => rest.iter().fold(first, |acc, &f| self.or(acc, f)),
        }
    }

    /// `a0 && a1 && ...` (true for none).
    pub(crate) fn all(&mut self, flags: &[Value]) -> Value {
        match flags.split_first() {
            None => self.bool(true),
            Some((&first, rest)) => rest.iter().fold(first, |acc, &f| self.and(acc, f)),
        }
    }
}
