// The cases of the `random_ir` tests, included by the test crates of both backends (their `common`
// module is the harness with their code generator).

use common::Host;
use drs_cranelift::Options;
use drs_ir::*;
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct Choices<'a> {
    stream: &'a [u32],
    pos: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u32 {
        let v = self.stream.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const TYS: [Ty; 4] = [Ty::F32, Ty::I32, Ty::U32, Ty::Bool];

fn edge_bits(ty: Ty, c: &mut Choices) -> u32 {
    match ty {
        Ty::F32 => {
            let table = [
                0.0f32.to_bits(),
                (-0.0f32).to_bits(),
                1.0f32.to_bits(),
                (-1.5f32).to_bits(),
                0.5f32.to_bits(),
                2.5f32.to_bits(),
                1e-45f32.to_bits(),
                1e30f32.to_bits(),
                f32::INFINITY.to_bits(),
                f32::NEG_INFINITY.to_bits(),
                0x7fc0_0000,
                3.75f32.to_bits(),
                (-1e-3f32).to_bits(),
                2147483648.0f32.to_bits(),
            ];
            match c.below(3) {
                0 => c.pick(&table),
                1 => ((c.next() % 2000) as f32 * 0.125 - 125.0).to_bits(),
                _ => c.next(),
            }
        }
        Ty::I32 | Ty::U32 => {
            let table = [0u32, 1, 2, 3, 7, 31, 32, 33, u32::MAX, 0x8000_0000, 0x7fff_ffff, 100, 0xffff_fff9];
            match c.below(3) {
                0 => c.pick(&table),
                1 => c.next() % 20,
                _ => c.next(),
            }
        }
        Ty::Bool => c.next() & 1,
    }
}

/// Callable functions: (params, results).
type Sig = (Vec<Ty>, Vec<Ty>);

struct Gen<'c, 'a> {
    c: &'c mut Choices<'a>,
    f: Function,
    callees: Vec<(FuncId, Sig)>,
    /// Values in scope, innermost last.
    pool: Vec<Value>,
    budget: usize,
    /// The function's first parameter: the lane's index, passed down through calls.
    lane: Value,
    /// Counters (i32) of the loops being generated, innermost last.
    counters: Vec<Value>,
}

const INPUT: u32 = 0;
const OUT: u32 = 1;
const ACC: u32 = 2;
const MIX: u32 = 0;
const TICK: u32 = 1;

impl Gen<'_, '_> {
    fn value(&mut self, ty: Ty) -> Value {
        self.f.new_value(ty)
    }

    fn push(&mut self, insts: &mut Vec<Inst>, op: Op, tys: &[Ty]) -> Vec<Value> {
        let results: Vec<Value> = tys.iter().map(|&t| self.value(t)).collect();
        insts.push(Inst { results: results.clone(), op });
        self.pool.extend(&results);
        results
    }

    /// A value of type `ty` in scope (a new constant if there is none, or sometimes anyway).
    fn operand(&mut self, insts: &mut Vec<Inst>, ty: Ty) -> Value {
        let candidates: Vec<Value> = self.pool.iter().copied().filter(|&v| self.f.ty(v) == ty).collect();
        if candidates.is_empty() || self.c.below(8) == 0 {
            let bits = edge_bits(ty, self.c);
            return self.push(insts, Op::Const(Const::from_bits(ty, bits)), &[ty])[0];
        }
        // Prefer recent values so that chains form.
        let n = candidates.len();
        let i = match self.c.below(4) {
            0 | 1 => n - 1,
            2 => n - 1 - self.c.below(n.min(4)),
            _ => self.c.below(n),
        };
        candidates[i]
    }

    /// `x`, with any NaN replaced by the canonical quiet NaN: where a program observes the
    /// bits of a float (bitcast, the sign source of copysign), since the sign and payload of
    /// NaN results are unspecified.
    fn canonical(&mut self, insts: &mut Vec<Inst>, x: Value) -> Value {
        if self.f.ty(x) != Ty::F32 {
            return x;
        }
        let nan = self.push(insts, Op::Cmp(CmpOp::Ne, x, x), &[Ty::Bool])[0];
        let q = self.push(insts, Op::Const(Const::F32(0x7fc0_0000)), &[Ty::F32])[0];
        self.push(insts, Op::Select(nan, q, x), &[Ty::F32])[0]
    }

    /// `lane * 16 + (x & 15)`: an element of `out` that only this lane writes.
    fn lane_slot(&mut self, insts: &mut Vec<Inst>, x: Value) -> Value {
        let sixteen = self.push(insts, Op::Const(Const::U32(16)), &[Ty::U32])[0];
        let fifteen = self.push(insts, Op::Const(Const::U32(15)), &[Ty::U32])[0];
        let base = self.push(insts, Op::Binary(BinaryOp::Mul, self.lane, sixteen), &[Ty::U32])[0];
        let low = self.push(insts, Op::Binary(BinaryOp::And, x, fifteen), &[Ty::U32])[0];
        self.push(insts, Op::Binary(BinaryOp::Add, base, low), &[Ty::U32])[0]
    }

    fn stmt(&mut self, insts: &mut Vec<Inst>, depth: usize) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        let kind = self.c.below(if depth < 3 { 19 } else { 16 });
        match kind {
            10 => {
                // Load from the read-only input (indices partly out of range).
                let i = self.operand(insts, Ty::U32);
                let mask = self.push(insts, Op::Const(Const::U32(127)), &[Ty::U32])[0];
                let i = self.push(insts, Op::Binary(BinaryOp::And, i, mask), &[Ty::U32])[0];
                self.push(insts, Op::Load { buffer: INPUT, index: i }, &[Ty::F32]);
            }
            11 => {
                // Store to this lane's own slots of `out`: lane * 16 + (x & 15).
                let x = self.operand(insts, Ty::U32);
                let v = self.operand(insts, Ty::U32);
                let index = self.lane_slot(insts, x);
                insts.push(Inst { results: vec![], op: Op::Store { buffer: OUT, index, value: v } });
            }
            12 => {
                // Integer atomic adds commute, so lanes may share elements (some out of range).
                let x = self.operand(insts, Ty::U32);
                let v = self.operand(insts, Ty::I32);
                let nine = self.push(insts, Op::Const(Const::U32(9)), &[Ty::U32])[0];
                let i = self.push(insts, Op::Binary(BinaryOp::Rem, x, nine), &[Ty::U32])[0];
                insts.push(Inst { results: vec![], op: Op::AtomicAdd { buffer: ACC, index: i, value: v } });
            }
            13 => {
                if self.c.below(2) == 0 {
                    let a = self.operand(insts, Ty::U32);
                    let b = self.operand(insts, Ty::F32);
                    let b = self.canonical(insts, b);
                    self.push(insts, Op::CallExtern(MIX, vec![a, b]), &[Ty::U32, Ty::F32]);
                } else {
                    let a = self.operand(insts, Ty::U32);
                    insts.push(Inst { results: vec![], op: Op::CallExtern(TICK, vec![a]) });
                }
            }
            0 => {
                let ty = self.c.pick(&TYS);
                let bits = edge_bits(ty, self.c);
                self.push(insts, Op::Const(Const::from_bits(ty, bits)), &[ty]);
            }
            1 => {
                let ops = [
                    UnaryOp::Neg,
                    UnaryOp::Not,
                    UnaryOp::Abs,
                    UnaryOp::Sqrt,
                    UnaryOp::Floor,
                    UnaryOp::Ceil,
                    UnaryOp::Trunc,
                    UnaryOp::Round,
                ];
                let op = self.c.pick(&ops);
                let tys: Vec<Ty> = TYS.into_iter().filter(|&t| unary_accepts(op, t)).collect();
                let ty = self.c.pick(&tys);
                let a = self.operand(insts, ty);
                self.push(insts, Op::Unary(op, a), &[ty]);
            }
            2 | 3 => {
                let ops = [
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Div,
                    BinaryOp::Rem,
                    BinaryOp::Min,
                    BinaryOp::Max,
                    BinaryOp::CopySign,
                    BinaryOp::And,
                    BinaryOp::Or,
                    BinaryOp::Xor,
                    BinaryOp::Shl,
                    BinaryOp::Shr,
                ];
                let op = self.c.pick(&ops);
                let tys: Vec<Ty> = TYS.into_iter().filter(|&t| binary_accepts(op, t)).collect();
                let ty = self.c.pick(&tys);
                let a = self.operand(insts, ty);
                let mut b = self.operand(insts, ty);
                if op == BinaryOp::CopySign {
                    b = self.canonical(insts, b);
                }
                self.push(insts, Op::Binary(op, a, b), &[ty]);
            }
            4 => {
                let (a, b, c) =
                    (self.operand(insts, Ty::F32), self.operand(insts, Ty::F32), self.operand(insts, Ty::F32));
                self.push(insts, Op::Fma(a, b, c), &[Ty::F32]);
            }
            5 => {
                let op = self.c.pick(&[CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
                let tys: Vec<Ty> = TYS.into_iter().filter(|&t| cmp_accepts(op, t)).collect();
                let ty = self.c.pick(&tys);
                let a = self.operand(insts, ty);
                let b = self.operand(insts, ty);
                self.push(insts, Op::Cmp(op, a, b), &[Ty::Bool]);
            }
            6 => {
                let ty = self.c.pick(&TYS);
                let c = self.operand(insts, Ty::Bool);
                let a = self.operand(insts, ty);
                let b = self.operand(insts, ty);
                self.push(insts, Op::Select(c, a, b), &[ty]);
            }
            7 => {
                let num = [Ty::F32, Ty::I32, Ty::U32];
                let (from, to) = (self.c.pick(&num), self.c.pick(&num));
                let a = self.operand(insts, from);
                let op = if self.c.below(2) == 0 {
                    Op::Convert(to, a)
                } else {
                    let a = self.canonical(insts, a);
                    Op::Bitcast(to, a)
                };
                self.push(insts, op, &[to]);
            }
            8 => {
                let ty = self.c.pick(&TYS);
                let a = self.operand(insts, ty);
                let op = if self.c.below(2) == 0 {
                    Op::Detach(a)
                } else {
                    let b = self.operand(insts, ty);
                    Op::ReplaceGrad(a, b)
                };
                self.push(insts, op, &[ty]);
            }
            9 => {
                if self.callees.is_empty() {
                    return self.stmt(insts, depth);
                }
                let (id, (params, results)) = self.callees[self.c.below(self.callees.len())].clone();
                let mut args = vec![self.lane];
                args.extend(params[1..].iter().map(|&t| self.operand(insts, t)));
                self.push(insts, Op::Call(id, args), &results);
            }
            14 | 15 => self.local_access(insts),
            16 | 17 => self.if_(insts, depth),
            _ => self.loop_(insts, depth),
        }
    }

    /// Declares 0 to 2 local arrays and fills each: `for i in 0..len { a[i] = value(i) }`.
    fn fill_locals(&mut self, insts: &mut Vec<Inst>) {
        for _ in 0..self.c.below(3) {
            let elem = self.c.pick(&TYS);
            let len = 1 + self.c.below(9) as u32;
            let array = self.f.add_local(elem, len);
            let zero = self.push(insts, Op::Const(Const::U32(0)), &[Ty::U32])[0];
            let i = self.value(Ty::U32);
            let mark = self.pool.len();
            let mut body = Vec::new();
            let seed = self.operand(&mut body, elem);
            // A value that differs from element to element (and, through `seed`, may vary).
            let value = match elem {
                Ty::F32 => {
                    let x = self.push(&mut body, Op::Convert(Ty::F32, i), &[Ty::F32])[0];
                    self.push(&mut body, Op::Binary(BinaryOp::Sub, seed, x), &[Ty::F32])[0]
                }
                Ty::I32 => {
                    let x = self.push(&mut body, Op::Convert(Ty::I32, i), &[Ty::I32])[0];
                    self.push(&mut body, Op::Binary(BinaryOp::Add, x, seed), &[Ty::I32])[0]
                }
                Ty::U32 => self.push(&mut body, Op::Binary(BinaryOp::Xor, i, seed), &[Ty::U32])[0],
                Ty::Bool => {
                    let three = self.push(&mut body, Op::Const(Const::U32(3)), &[Ty::U32])[0];
                    let r = self.push(&mut body, Op::Binary(BinaryOp::Rem, i, three), &[Ty::U32])[0];
                    let z = self.push(&mut body, Op::Const(Const::U32(0)), &[Ty::U32])[0];
                    let c = self.push(&mut body, Op::Cmp(CmpOp::Eq, r, z), &[Ty::Bool])[0];
                    self.push(&mut body, Op::Binary(BinaryOp::Xor, c, seed), &[Ty::Bool])[0]
                }
            };
            body.push(Inst { results: vec![], op: Op::LocalStore { array, index: i, value } });
            let one = self.push(&mut body, Op::Const(Const::U32(1)), &[Ty::U32])[0];
            let next = self.push(&mut body, Op::Binary(BinaryOp::Add, i, one), &[Ty::U32])[0];
            let end = self.push(&mut body, Op::Const(Const::U32(len)), &[Ty::U32])[0];
            let more = self.push(&mut body, Op::Cmp(CmpOp::Lt, next, end), &[Ty::Bool])[0];
            self.pool.truncate(mark);
            let body = Region { params: vec![i], insts: body, yields: vec![more, next] };
            self.push(insts, Op::Loop { init: vec![zero], body, max_iters: Some(len) }, &[Ty::U32]);
        }
    }

    /// A load or a store of a local array (sometimes a store, then a load of the element).
    fn local_access(&mut self, insts: &mut Vec<Inst>) {
        if self.f.locals.is_empty() {
            return self.stmt(insts, 3);
        }
        let array = self.c.below(self.f.locals.len()) as u32;
        let LocalArray { elem, len } = self.f.locals[array as usize];
        let index = match self.c.below(5) {
            0 if !self.counters.is_empty() => {
                let counter = self.c.pick(&self.counters);
                self.push(insts, Op::Convert(Ty::U32, counter), &[Ty::U32])[0]
            }
            // Uniform, sometimes out of range.
            1 => {
                let i = self.c.below(len as usize + 2) as u32;
                self.push(insts, Op::Const(Const::U32(i)), &[Ty::U32])[0]
            }
            // A different element in each lane of a group.
            2 => {
                let m = self.push(insts, Op::Const(Const::U32(len + 1)), &[Ty::U32])[0];
                self.push(insts, Op::Binary(BinaryOp::Rem, self.lane, m), &[Ty::U32])[0]
            }
            _ => {
                let x = self.operand(insts, Ty::U32);
                let m = self.push(insts, Op::Const(Const::U32(15)), &[Ty::U32])[0];
                self.push(insts, Op::Binary(BinaryOp::And, x, m), &[Ty::U32])[0]
            }
        };
        if self.c.below(2) == 0 {
            let value = self.operand(insts, elem);
            insts.push(Inst { results: vec![], op: Op::LocalStore { array, index, value } });
            if self.c.below(3) != 0 {
                return;
            }
        }
        self.push(insts, Op::LocalLoad { array, index }, &[elem]);
    }

    fn region_body(&mut self, depth: usize, params: Vec<Value>, yield_types: &[Ty]) -> Region {
        let mark = self.pool.len();
        self.pool.extend(&params);
        let mut insts = Vec::new();
        let n = 1 + self.c.below(5);
        for _ in 0..n {
            self.stmt(&mut insts, depth + 1);
        }
        let yields = yield_types.iter().map(|&t| self.operand(&mut insts, t)).collect();
        self.pool.truncate(mark);
        Region { params, insts, yields }
    }

    fn if_(&mut self, insts: &mut Vec<Inst>, depth: usize) {
        let cond = self.operand(insts, Ty::Bool);
        let n = 1 + self.c.below(3);
        let tys: Vec<Ty> = (0..n).map(|_| self.c.pick(&TYS)).collect();
        let then = self.region_body(depth, Vec::new(), &tys);
        let els = self.region_body(depth, Vec::new(), &tys);
        self.push(insts, Op::If { cond, then, els }, &tys);
    }

    /// A loop bounded by a counter: `i < bound` with a bound of at most 8 that may differ per
    /// lane, and'ed with a random flag so lanes leave at different iterations.
    fn loop_(&mut self, insts: &mut Vec<Inst>, depth: usize) {
        let zero = self.push(insts, Op::Const(Const::I32(0)), &[Ty::I32])[0];
        let bound = if self.c.below(2) == 0 {
            let b = 1 + self.c.below(6) as i32;
            self.push(insts, Op::Const(Const::I32(b)), &[Ty::I32])[0]
        } else {
            let x = self.operand(insts, Ty::I32);
            let seven = self.push(insts, Op::Const(Const::I32(7)), &[Ty::I32])[0];
            self.push(insts, Op::Binary(BinaryOp::And, x, seven), &[Ty::I32])[0]
        };
        let n = self.c.below(3);
        let mut init = vec![zero];
        let mut tys = vec![Ty::I32];
        for _ in 0..n {
            let t = self.c.pick(&TYS);
            init.push(self.operand(insts, t));
            tys.push(t);
        }
        let params: Vec<Value> = tys.iter().map(|&t| self.value(t)).collect();
        let counter = params[0];
        self.counters.push(counter);
        let mut body = self.region_body(depth, params, &tys[1..]);
        self.counters.pop();
        // Re-enter the body's scope to add the counter update and the continue flag.
        let mark = self.pool.len();
        self.pool.extend(&body.params);
        let mut extra = Vec::new();
        let one = self.push(&mut extra, Op::Const(Const::I32(1)), &[Ty::I32])[0];
        let next = self.push(&mut extra, Op::Binary(BinaryOp::Add, counter, one), &[Ty::I32])[0];
        let below = self.push(&mut extra, Op::Cmp(CmpOp::Lt, next, bound), &[Ty::Bool])[0];
        let cont = if self.c.below(2) == 0 {
            let flag = self.operand(&mut extra, Ty::Bool);
            self.push(&mut extra, Op::Binary(BinaryOp::And, below, flag), &[Ty::Bool])[0]
        } else {
            below
        };
        self.pool.truncate(mark);
        body.insts.extend(extra);
        let mut yields = vec![cont, next];
        yields.append(&mut body.yields);
        body.yields = yields;
        self.push(insts, Op::Loop { init, body, max_iters: None }, &tys);
    }
}

fn gen_module(stream: &[u32]) -> Module {
    let mut c = Choices { stream, pos: 0 };
    let mut module = Module {
        buffers: vec![
            BufferDecl { name: "input".into(), elem: Ty::F32 },
            BufferDecl { name: "out".into(), elem: Ty::U32 },
            BufferDecl { name: "acc".into(), elem: Ty::I32 },
        ],
        externs: vec![
            ExternDecl { name: "mix".into(), params: vec![Ty::U32, Ty::F32], results: vec![Ty::U32, Ty::F32] },
            ExternDecl { name: "tick".into(), params: vec![Ty::U32], results: vec![] },
        ],
        ..Module::default()
    };
    let nfuncs = 1 + c.below(3);
    for k in 0..nfuncs {
        let callees: Vec<(FuncId, Sig)> = module
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| (FuncId(i as u32), (f.param_types(), f.result_types.clone())))
            .collect();
        let mut f = Function::new(format!("f{k}"));
        let np = 1 + c.below(4);
        let lane = f.add_param("lane", Ty::U32);
        let mut pool = vec![lane];
        for i in 0..np {
            let ty = c.pick(&TYS);
            pool.push(f.add_param(format!("p{i}"), ty));
        }
        let nr = 1 + c.below(3);
        let rtys: Vec<Ty> = (0..nr).map(|_| c.pick(&TYS)).collect();
        let mut g = Gen { c: &mut c, f, callees, pool, budget: 40, lane, counters: Vec::new() };
        let mut insts = Vec::new();
        g.fill_locals(&mut insts);
        let n = 2 + g.c.below(10);
        for _ in 0..n {
            g.stmt(&mut insts, 0);
        }
        let mut yields: Vec<Value> = rtys.iter().map(|&t| g.operand(&mut insts, t)).collect();
        // Every element of every local array, so that every lane's final cells are seen.
        for (array, a) in g.f.locals.clone().into_iter().enumerate() {
            for i in 0..a.len {
                let index = g.push(&mut insts, Op::Const(Const::U32(i)), &[Ty::U32])[0];
                g.push(&mut insts, Op::LocalLoad { array: array as u32, index }, &[a.elem]);
            }
        }
        // A checksum of every value at the top level, so that none of them is dead.
        let live = g.pool.clone();
        let mut acc = g.push(&mut insts, Op::Const(Const::U32(0x1234_5678)), &[Ty::U32])[0];
        let k = g.push(&mut insts, Op::Const(Const::U32(0x9e37_79b1)), &[Ty::U32])[0];
        let (one, zero) = (
            g.push(&mut insts, Op::Const(Const::U32(1)), &[Ty::U32])[0],
            g.push(&mut insts, Op::Const(Const::U32(0)), &[Ty::U32])[0],
        );
        for v in live {
            let x = match g.f.ty(v) {
                Ty::U32 => v,
                Ty::Bool => g.push(&mut insts, Op::Select(v, one, zero), &[Ty::U32])[0],
                _ => {
                    let v = g.canonical(&mut insts, v);
                    g.push(&mut insts, Op::Bitcast(Ty::U32, v), &[Ty::U32])[0]
                }
            };
            let m = g.push(&mut insts, Op::Binary(BinaryOp::Mul, acc, k), &[Ty::U32])[0];
            acc = g.push(&mut insts, Op::Binary(BinaryOp::Add, m, x), &[Ty::U32])[0];
        }
        yields.push(acc);
        let mut rtys = rtys;
        rtys.push(Ty::U32);
        let mut f = g.f;
        f.body = Region { params: Vec::new(), insts, yields };
        f.result_types = rtys;
        module.add_function(f);
    }
    module
}

/// Arguments per lane (the first is the lane index) and which parameters are uniform: those
/// get one value for all lanes, and the JIT is told so (`Options::uniform_params`).
fn lane_args(module: &Module, stream: &[u32], lanes: usize) -> (Vec<Vec<u32>>, Vec<bool>) {
    let mut c = Choices { stream, pos: 0 };
    let main = module.functions.last().expect("a function");
    let types = main.param_types();
    let uniform: Vec<bool> = (0..types.len()).map(|i| i > 0 && c.below(3) == 0).collect();
    let shared: Vec<u32> = types.iter().map(|&t| edge_bits(t, &mut c)).collect();
    let args = (0..lanes)
        .map(|l| {
            let mut args = vec![l as u32];
            for (i, &t) in types.iter().enumerate().skip(1) {
                args.push(if uniform[i] { shared[i] } else { edge_bits(t, &mut c) });
            }
            args
        })
        .collect();
    (args, uniform)
}

fn hosts(ticks: Arc<AtomicU64>) -> Vec<(&'static str, Host)> {
    let mix: Host = Arc::new(|a: &[u32]| {
        let x = a[0].wrapping_mul(0x9e37_79b1) ^ (a[0] >> 7);
        let y = f32::from_bits(a[1]) * 0.75 + (a[0] % 5) as f32;
        vec![x, y.to_bits()]
    });
    let tick: Host = Arc::new(move |a: &[u32]| {
        ticks.fetch_add(a[0] as u64 + 1, Ordering::Relaxed);
        vec![]
    });
    vec![("mix", mix), ("tick", tick)]
}

fn check_module(module: &Module, args: &[Vec<u32>], uniform: &[bool]) -> Result<(), TestCaseError> {
    verify_module(module).map_err(|e| TestCaseError::fail(format!("generator made invalid IR: {e}")))?;
    let name = module.functions.last().expect("a function").name.clone();
    let input: Vec<u32> = (0..100).map(|i| ((i as f32 - 40.0) * 0.375).to_bits()).collect();
    let buffers = vec![input, vec![0; args.len() * 16], vec![0; 8]];
    let ticks = Arc::new(AtomicU64::new(0));
    let hosts = hosts(ticks.clone());
    let want = common::interp(module, &name, args, &buffers, &hosts);
    let want_ticks = ticks.swap(0, Ordering::Relaxed);
    for &mode in common::MODES {
        let options = Options::new(mode).uniform(name.clone(), uniform.to_vec());
        let (jit, loaded) =
            common::compile_and_reload(module, &options).map_err(|e| TestCaseError::fail(format!("{mode:?}: {e}")))?;
        let got = common::run_jit(&jit, &name, args, &buffers, &hosts);
        let got_ticks = ticks.swap(0, Ordering::Relaxed);
        // Code loaded from its serialised form computes exactly the same bits.
        let reloaded = common::run_jit(&loaded, &name, args, &buffers, &hosts);
        if reloaded != got || ticks.swap(0, Ordering::Relaxed) != got_ticks {
            return Err(TestCaseError::fail(format!("{mode:?}: reloaded code differs\n{}", print_module(module))));
        }
        if got_ticks != want_ticks {
            return Err(TestCaseError::fail(format!(
                "{mode:?}: extern `tick` total {got_ticks}, interpreter {want_ticks}\n{}",
                print_module(module)
            )));
        }
        // Reuse the detailed report (which lets NaNs differ in sign and payload).
        let r = std::panic::catch_unwind(|| common::compare(module, &name, mode, args, &want, &got));
        if let Err(p) = r {
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            return Err(TestCaseError::fail(format!("uniform params {uniform:?}: {msg}")));
        }
    }
    Ok(())
}

proptest! {
    // `RANDOM_IR_CASES=N` runs more (or fewer) cases.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("RANDOM_IR_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_modules_agree_with_the_interpreter(
        program in prop::collection::vec(any::<u32>(), 50..1500),
        inputs in prop::collection::vec(any::<u32>(), 0..200),
    ) {
        let module = gen_module(&program);
        if std::env::var_os("RANDOM_IR_SHOW").is_some() {
            eprintln!("{}", print_module(&module));
        }
        let (args, uniform) = lane_args(&module, &inputs, 19);
        check_module(&module, &args, &uniform)?;
    }
}
