//! Random IR functions — every kind of operation on random operands and constants, `if`s
//! and bounded loops nested up to three deep, calls of earlier functions, host functions,
//! buffers and local arrays — are written, checked, lowered again and compared with the
//! originals in the interpreter.

mod common;

use common::{random_args, Rng, RoundTrip, World};
use drs_ir::*;
use std::cell::RefCell;

const FUNCTIONS_PER_MODULE: usize = 40;
const SETS: usize = 40;
const TYPES: [Ty; 4] = [Ty::F32, Ty::I32, Ty::U32, Ty::Bool];
const UNARY: [UnaryOp; 8] = [
    UnaryOp::Neg,
    UnaryOp::Not,
    UnaryOp::Abs,
    UnaryOp::Sqrt,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Trunc,
    UnaryOp::Round,
];
const BINARY: [BinaryOp; 13] = [
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
const CMP: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

/// What a random function may use besides its own values.
struct Context {
    externs: Vec<ExternDecl>,
    buffers: Vec<BufferDecl>,
    /// Functions generated so far (callable), with their parameter types.
    callees: Vec<(FuncId, Vec<Ty>)>,
    /// The local arrays of the function being generated.
    locals: Vec<LocalArray>,
}

struct Gen<'c> {
    rng: RefCell<Rng>,
    cx: &'c Context,
}

impl Gen<'_> {
    fn below(&self, n: usize) -> usize {
        self.rng.borrow_mut().below(n as u64) as usize
    }

    fn pick<T: Copy>(&self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A value of type `ty`: one in scope, or a new constant.
    fn value(&self, b: &mut Builder, pool: &[Value], ty: Ty) -> Value {
        let candidates: Vec<Value> = pool.iter().copied().filter(|&v| b.ty(v) == ty).collect();
        if candidates.is_empty() || self.below(4) == 0 {
            let bits = self.rng.borrow_mut().bits(ty);
            return b.konst(Const::from_bits(ty, bits));
        }
        self.pick(&candidates)
    }

    /// A small u32 (an index or a bound): a constant or a value masked to 0..15.
    fn index(&self, b: &mut Builder, pool: &[Value]) -> Value {
        let v = self.value(b, pool, Ty::U32);
        let mask = b.u32(15);
        b.binary(BinaryOp::And, v, mask)
    }

    /// Appends `count` random operations; their results join `pool`.
    fn ops(&self, b: &mut Builder, pool: &mut Vec<Value>, count: usize, depth: usize) {
        for _ in 0..count {
            let results = self.op(b, pool, depth);
            pool.extend(results);
        }
    }

    fn op(&self, b: &mut Builder, pool: &[Value], depth: usize) -> Vec<Value> {
        let cx = self.cx;
        let ty = self.pick(&TYPES);
        match self.below(if depth < 3 { 19 } else { 17 }) {
            0 | 1 => {
                let ops: Vec<UnaryOp> = UNARY.into_iter().filter(|&op| unary_accepts(op, ty)).collect();
                if ops.is_empty() {
                    return vec![];
                }
                let a = self.value(b, pool, ty);
                vec![b.unary(self.pick(&ops), a)]
            }
            2..=4 => {
                let ops: Vec<BinaryOp> = BINARY.into_iter().filter(|&op| binary_accepts(op, ty)).collect();
                if ops.is_empty() {
                    return vec![];
                }
                let (x, y) = (self.value(b, pool, ty), self.value(b, pool, ty));
                vec![b.binary(self.pick(&ops), x, y)]
            }
            5 => {
                let ops: Vec<CmpOp> = CMP.into_iter().filter(|&op| cmp_accepts(op, ty)).collect();
                let (x, y) = (self.value(b, pool, ty), self.value(b, pool, ty));
                vec![b.cmp(self.pick(&ops), x, y)]
            }
            6 => {
                let c = self.value(b, pool, Ty::Bool);
                let (x, y) = (self.value(b, pool, ty), self.value(b, pool, ty));
                vec![b.select(c, x, y)]
            }
            7 => {
                let args = [0; 3].map(|_| self.value(b, pool, Ty::F32));
                vec![b.fma(args[0], args[1], args[2])]
            }
            8 => {
                let numeric = [Ty::F32, Ty::I32, Ty::U32];
                let (from, to) = (self.pick(&numeric), self.pick(&numeric));
                let a = self.value(b, pool, from);
                let op = if self.below(2) == 0 { Op::Convert(to, a) } else { Op::Bitcast(to, a) };
                b.push(op, &[to])
            }
            9 => {
                let op = self.pick(&MathOp::ALL);
                let args = (0..op.arity()).map(|_| self.value(b, pool, Ty::F32)).collect();
                vec![b.math(op, args)]
            }
            10 => {
                let (x, y) = (self.value(b, pool, ty), self.value(b, pool, ty));
                if self.below(2) == 0 {
                    vec![b.detach(x)]
                } else {
                    vec![b.replace_grad(x, y)]
                }
            }
            11 => match cx.callees.len() {
                0 => vec![],
                n => {
                    let (g, params) = &cx.callees[self.below(n)];
                    let args = params.iter().map(|&t| self.value(b, pool, t)).collect();
                    b.call(*g, args)
                }
            },
            12 => {
                let e = self.below(cx.externs.len());
                let args = cx.externs[e].params.iter().map(|&t| self.value(b, pool, t)).collect();
                b.call_extern(e as u32, args)
            }
            13 | 14 => {
                let buffer = self.below(cx.buffers.len());
                let elem = cx.buffers[buffer].elem;
                let index = self.index(b, pool);
                let buffer = buffer as u32;
                match self.below(3) {
                    0 => vec![b.load(buffer, index)],
                    1 => {
                        let v = self.value(b, pool, elem);
                        b.store(buffer, index, v);
                        vec![]
                    }
                    _ if elem == Ty::Bool => vec![],
                    _ => {
                        let v = self.value(b, pool, elem);
                        b.atomic_add(buffer, index, v);
                        vec![]
                    }
                }
            }
            15 | 16 => match cx.locals.len() {
                0 => vec![],
                n => {
                    let array = self.below(n);
                    let index = self.index(b, pool);
                    if self.below(2) == 0 {
                        vec![b.local_load(array as u32, index)]
                    } else {
                        let v = self.value(b, pool, cx.locals[array].elem);
                        b.local_store(array as u32, index, v);
                        vec![]
                    }
                }
            },
            17 => self.if_(b, pool, depth),
            _ => self.loop_(b, pool, depth),
        }
    }

    fn if_(&self, b: &mut Builder, pool: &[Value], depth: usize) -> Vec<Value> {
        let cond = self.value(b, pool, Ty::Bool);
        let types: Vec<Ty> = (0..self.below(3)).map(|_| self.pick(&TYPES)).collect();
        let (then_ops, else_ops) = (self.below(5), self.below(5));
        let branch = |b: &mut Builder, count: usize| {
            let mut scope = pool.to_vec();
            self.ops(b, &mut scope, count, depth + 1);
            types.iter().map(|&t| self.value(b, &scope, t)).collect()
        };
        b.if_(cond, |b| branch(b, then_ops), |b| branch(b, else_ops))
    }

    /// A loop that runs at most `bound` (1 to 5) times, carrying a counter and random values;
    /// it may stop earlier on a random condition. Sometimes the bound is recorded.
    fn loop_(&self, b: &mut Builder, pool: &[Value], depth: usize) -> Vec<Value> {
        let bound = 1 + self.below(5) as u32;
        let zero = b.u32(0);
        let mut init = vec![zero];
        for _ in 0..self.below(3) {
            let t = self.pick(&TYPES);
            init.push(self.value(b, pool, t));
        }
        let types: Vec<Ty> = init.iter().map(|&v| b.ty(v)).collect();
        let max_iters = (self.below(2) == 0).then_some(bound);
        let count = self.below(6);
        let results = b.bounded_loop(init, max_iters, |b, carried| {
            let mut scope = pool.to_vec();
            scope.extend_from_slice(carried);
            self.ops(b, &mut scope, count, depth + 1);
            let one = b.u32(1);
            let next = b.add(carried[0], one);
            let limit = b.u32(bound);
            let mut go_on = b.cmp(CmpOp::Lt, next, limit);
            if self.below(3) == 0 {
                let extra = self.value(b, &scope, Ty::Bool);
                go_on = b.binary(BinaryOp::And, go_on, extra);
            }
            let mut yields = vec![next];
            yields.extend(types[1..].iter().map(|&t| self.value(b, &scope, t)));
            (go_on, yields)
        });
        results[1..].to_vec()
    }
}

fn random_module(seed: u64) -> Module {
    let mut cx = Context {
        externs: vec![
            ExternDecl { name: "host::sample".into(), params: vec![Ty::U32], results: vec![Ty::F32, Ty::F32] },
            ExternDecl { name: "host::record".into(), params: vec![Ty::F32, Ty::I32], results: vec![] },
            ExternDecl { name: "host::flag".into(), params: vec![], results: vec![Ty::Bool] },
        ],
        buffers: TYPES.iter().map(|&t| BufferDecl { name: format!("Plugin.param_{}[0]", t.name()), elem: t }).collect(),
        callees: Vec::new(),
        locals: Vec::new(),
    };
    let mut module = Module { functions: Vec::new(), externs: cx.externs.clone(), buffers: cx.buffers.clone() };
    let mut rng = Rng::new(seed);
    for k in 0..FUNCTIONS_PER_MODULE {
        let mut f = Function::new(format!("random::f{k}"));
        let params: Vec<Value> =
            (0..rng.below(5)).map(|i| f.add_param(format!("p.{i}"), TYPES[rng.below(4) as usize])).collect();
        cx.locals = (0..rng.below(3))
            .map(|_| LocalArray { elem: TYPES[rng.below(4) as usize], len: rng.below(6) as u32 })
            .collect();
        for array in &cx.locals {
            f.add_local(array.elem, array.len);
        }
        let signatures = Signatures::of(&module);
        let generator = Gen { rng: RefCell::new(Rng::new(rng.next())), cx: &cx };
        let mut b = Builder::new(&mut f, &signatures);
        let mut pool = params.clone();
        generator.ops(&mut b, &mut pool, 8 + rng.below(20) as usize, 0);
        let results: Vec<Value> =
            (0..rng.below(4)).map(|_| generator.value(&mut b, &pool, TYPES[rng.below(4) as usize])).collect();
        let types = results.iter().map(|&v| b.ty(v)).collect();
        b.finish(results);
        f.result_types = types;
        verify_function(&module, &f).unwrap_or_else(|e| panic!("the generator made invalid IR: {e}"));
        let param_types = f.param_types();
        let id = module.add_function(f);
        cx.callees.push((id, param_types));
    }
    module
}

fn round_trip(module: &Module, seed: u64) {
    let all: Vec<FuncId> = (0..module.functions.len() as u32).map(FuncId).collect();
    let round_trip = RoundTrip::new(module, &all);
    let world = World { buffer_len: 12, seed };
    let mut rng = Rng::new(seed);
    for &f in &all {
        for _ in 0..SETS {
            round_trip.compare(module, f, &random_args(module, f, &mut rng), &world);
        }
    }
}

#[test]
fn random_functions_round_trip() {
    for seed in 0..4 {
        round_trip(&random_module(seed), seed);
    }
}

#[test]
fn optimised_random_functions_round_trip() {
    for seed in 10..13 {
        let module = drs_opt::prepare_for_backend(&random_module(seed), drs_opt::OptLevel::Default);
        round_trip(&module, seed);
    }
}
