//! Appends instructions to a function, region by region.

use crate::*;

/// Builds a function body. Instructions go to the innermost open region; [`Builder::if_`] and
/// [`Builder::loop_`] open regions for the closures that fill them.
pub struct Builder<'f> {
    pub func: &'f mut Function,
    /// Instruction lists of the open regions, innermost last.
    regions: Vec<Vec<Inst>>,
    /// Module signatures needed to type calls: results of each function and extern.
    signatures: &'f Signatures,
}

/// Result types of the functions and externs a builder may call.
#[derive(Clone, Debug, Default)]
pub struct Signatures {
    pub functions: Vec<Vec<Ty>>,
    pub externs: Vec<Vec<Ty>>,
    pub buffers: Vec<Ty>,
}

impl Signatures {
    pub fn of(module: &Module) -> Signatures {
        Signatures {
            functions: module.functions.iter().map(|f| f.result_types.clone()).collect(),
            externs: module.externs.iter().map(|e| e.results.clone()).collect(),
            buffers: module.buffers.iter().map(|b| b.elem).collect(),
        }
    }
}

impl<'f> Builder<'f> {
    pub fn new(func: &'f mut Function, signatures: &'f Signatures) -> Self {
        Builder { func, regions: vec![Vec::new()], signatures }
    }

    /// Ends the body, yielding the function's results.
    pub fn finish(mut self, results: Vec<Value>) {
        let insts = self.regions.pop().expect("the body region is open");
        self.func.body = Region { params: Vec::new(), insts, yields: results };
    }

    pub fn ty(&self, v: Value) -> Ty {
        self.func.ty(v)
    }

    /// Appends an instruction with results of the given types.
    pub fn push(&mut self, op: Op, result_types: &[Ty]) -> Vec<Value> {
        let results: Vec<Value> = result_types.iter().map(|&t| self.func.new_value(t)).collect();
        self.regions.last_mut().expect("a region is open").push(Inst { results: results.clone(), op });
        results
    }

    fn push1(&mut self, op: Op, ty: Ty) -> Value {
        self.push(op, &[ty])[0]
    }

    pub fn konst(&mut self, c: Const) -> Value {
        self.push1(Op::Const(c), c.ty())
    }

    pub fn f32(&mut self, x: f32) -> Value {
        self.konst(Const::f32(x))
    }

    pub fn i32(&mut self, x: i32) -> Value {
        self.konst(Const::I32(x))
    }

    pub fn u32(&mut self, x: u32) -> Value {
        self.konst(Const::U32(x))
    }

    pub fn bool(&mut self, x: bool) -> Value {
        self.konst(Const::Bool(x))
    }

    pub fn unary(&mut self, op: UnaryOp, a: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Unary(op, a), t)
    }

    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Binary(op, a, b), t)
    }

    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Add, a, b)
    }

    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Sub, a, b)
    }

    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Mul, a, b)
    }

    pub fn div(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Div, a, b)
    }

    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.push1(Op::Fma(a, b, c), Ty::F32)
    }

    pub fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.push1(Op::Cmp(op, a, b), Ty::Bool)
    }

    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Select(c, a, b), t)
    }

    pub fn convert(&mut self, to: Ty, a: Value) -> Value {
        if self.ty(a) == to {
            return a;
        }
        self.push1(Op::Convert(to, a), to)
    }

    pub fn bitcast(&mut self, to: Ty, a: Value) -> Value {
        if self.ty(a) == to {
            return a;
        }
        self.push1(Op::Bitcast(to, a), to)
    }

    pub fn math(&mut self, op: MathOp, args: Vec<Value>) -> Value {
        self.push1(Op::Math(op, args), Ty::F32)
    }

    pub fn detach(&mut self, a: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::Detach(a), t)
    }

    pub fn replace_grad(&mut self, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push1(Op::ReplaceGrad(a, b), t)
    }

    pub fn call(&mut self, func: FuncId, args: Vec<Value>) -> Vec<Value> {
        let results = self.signatures.functions[func.0 as usize].clone();
        self.push(Op::Call(func, args), &results)
    }

    pub fn call_extern(&mut self, ext: u32, args: Vec<Value>) -> Vec<Value> {
        let results = self.signatures.externs[ext as usize].clone();
        self.push(Op::CallExtern(ext, args), &results)
    }

    pub fn load(&mut self, buffer: u32, index: Value) -> Value {
        let elem = self.signatures.buffers[buffer as usize];
        self.push1(Op::Load { buffer, index }, elem)
    }

    pub fn store(&mut self, buffer: u32, index: Value, value: Value) {
        self.push(Op::Store { buffer, index, value }, &[]);
    }

    pub fn atomic_add(&mut self, buffer: u32, index: Value, value: Value) {
        self.push(Op::AtomicAdd { buffer, index, value }, &[]);
    }

    /// Reads element `index` of the function's local array `array` (see [`Function::add_local`]).
    pub fn local_load(&mut self, array: u32, index: Value) -> Value {
        let elem = self.func.locals[array as usize].elem;
        self.push1(Op::LocalLoad { array, index }, elem)
    }

    pub fn local_store(&mut self, array: u32, index: Value, value: Value) {
        self.push(Op::LocalStore { array, index, value }, &[]);
    }

    /// Builds `if cond { then } else { els }`; each closure returns the values its region
    /// yields (the same types on both sides), which become the results.
    pub fn if_(
        &mut self,
        cond: Value,
        then: impl FnOnce(&mut Self) -> Vec<Value>,
        els: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        self.regions.push(Vec::new());
        let then_yields = then(self);
        let then_insts = self.regions.pop().expect("opened above");
        self.regions.push(Vec::new());
        let else_yields = els(self);
        let else_insts = self.regions.pop().expect("opened above");
        let types: Vec<Ty> = then_yields.iter().map(|&v| self.ty(v)).collect();
        self.push(
            Op::If {
                cond,
                then: Region { params: Vec::new(), insts: then_insts, yields: then_yields },
                els: Region { params: Vec::new(), insts: else_insts, yields: else_yields },
            },
            &types,
        )
    }

    /// Builds a do-while loop over carried values starting at `init`. The closure receives
    /// the carried values of an iteration and returns the continue flag and the next values.
    pub fn loop_(
        &mut self,
        init: Vec<Value>,
        body: impl FnOnce(&mut Self, &[Value]) -> (Value, Vec<Value>),
    ) -> Vec<Value> {
        self.bounded_loop(init, None, body)
    }

    /// [`Builder::loop_`] with the source's `@max_iters` bound recorded on the loop.
    pub fn bounded_loop(
        &mut self,
        init: Vec<Value>,
        max_iters: Option<u32>,
        body: impl FnOnce(&mut Self, &[Value]) -> (Value, Vec<Value>),
    ) -> Vec<Value> {
        let types: Vec<Ty> = init.iter().map(|&v| self.ty(v)).collect();
        let params: Vec<Value> = types.iter().map(|&t| self.func.new_value(t)).collect();
        self.regions.push(Vec::new());
        let (cont, next) = body(self, &params);
        let insts = self.regions.pop().expect("opened above");
        let mut yields = vec![cont];
        yields.extend(next);
        self.push(Op::Loop { init, body: Region { params, insts, yields }, max_iters }, &types)
    }
}
