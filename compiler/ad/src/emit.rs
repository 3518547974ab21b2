//! Appends instructions to the derivative function being built, region by region.

use drs_ir::*;

/// The function under construction and its open regions (innermost last).
pub(crate) struct Emitter {
    pub(crate) func: Function,
    regions: Vec<Vec<Inst>>,
}

impl Emitter {
    pub(crate) fn new(func: Function) -> Self {
        Emitter { func, regions: vec![Vec::new()] }
    }

    /// Ends the body with the function's results.
    pub(crate) fn finish(mut self, results: Vec<Value>) -> Function {
        let insts = self.regions.pop().expect("the body region is open");
        debug_assert!(self.regions.is_empty(), "every nested region is closed");
        self.func.body = Region { params: Vec::new(), insts, yields: results };
        self.func
    }

    pub(crate) fn ty(&self, v: Value) -> Ty {
        self.func.ty(v)
    }

    pub(crate) fn new_value(&mut self, ty: Ty) -> Value {
        self.func.new_value(ty)
    }

    /// Opens a nested region; [`Emitter::close`] returns it.
    pub(crate) fn open(&mut self) {
        self.regions.push(Vec::new());
    }

    pub(crate) fn close(&mut self, params: Vec<Value>, yields: Vec<Value>) -> Region {
        let insts = self.regions.pop().expect("a nested region is open");
        Region { params, insts, yields }
    }

    pub(crate) fn push(&mut self, op: Op, result_types: &[Ty]) -> Vec<Value> {
        let results: Vec<Value> = result_types.iter().map(|&t| self.func.new_value(t)).collect();
        self.push_with(op, results.clone());
        results
    }

    /// Appends an instruction whose result values are already allocated.
    pub(crate) fn push_with(&mut self, op: Op, results: Vec<Value>) {
        self.regions.last_mut().expect("a region is open").push(Inst { results, op });
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

    pub(crate) fn u32(&mut self, x: u32) -> Value {
        self.konst(Const::U32(x))
    }

    /// The zero of a type (`false` for bool).
    pub(crate) fn zero(&mut self, ty: Ty) -> Value {
        self.konst(Const::from_bits(ty, 0))
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

    pub(crate) fn neg(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Neg, a)
    }

    pub(crate) fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.push1(Op::Cmp(op, a, b), Ty::Bool)
    }

    pub(crate) fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Select(c, a, b), t)
    }

    pub(crate) fn math(&mut self, op: MathOp, args: Vec<Value>) -> Value {
        self.push1(Op::Math(op, args), Ty::F32)
    }

    /// `cond ? x : 0`.
    pub(crate) fn where_(&mut self, cond: Value, x: Value, when: bool) -> Value {
        let zero = self.zero(self.ty(x));
        if when {
            self.select(cond, x, zero)
        } else {
            self.select(cond, zero, x)
        }
    }
}
