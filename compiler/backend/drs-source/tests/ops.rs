//! Hand-made IR: every operation on edge values, constants of every kind, nested `if`s and
//! loops, local arrays, host functions and buffers, awkward names. Each function is written,
//! checked, lowered again and compared with the original in the interpreter.

mod common;

use common::{check_and_lower, random_args, Rng, RoundTrip, World};
use drs_ir::*;
use drs_source::{write_program, WriteError};

/// Adds a function built by `body` (which returns the results) to `module`.
fn add(
    module: &mut Module,
    name: &str,
    params: &[(&str, Ty)],
    body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>,
) -> FuncId {
    let mut f = Function::new(name);
    let values: Vec<Value> = params.iter().map(|&(n, t)| f.add_param(n, t)).collect();
    let signatures = Signatures::of(module);
    let mut b = Builder::new(&mut f, &signatures);
    let results = body(&mut b, &values);
    let types = results.iter().map(|&v| b.ty(v)).collect();
    b.finish(results);
    f.result_types = types;
    module.add_function(f)
}

const F32_EDGES: [f32; 19] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    -7.25,
    3.0e9,
    1e10,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MAX,
    f32::MIN_POSITIVE,
    1e-45,
    2147483648.0,
];

const I32_EDGES: [i32; 14] = [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, -32, i32::MIN, i32::MAX, i32::MIN + 1];
const U32_EDGES: [u32; 11] = [0, 1, 2, 7, 31, 32, 33, u32::MAX, u32::MAX - 1, 1 << 31, 12345];

fn f32_edges() -> Vec<u32> {
    F32_EDGES.iter().map(|x| x.to_bits()).chain([0xFFC0_0000, 0x7F80_0001]).collect()
}

/// All argument lists drawn from `edges` per parameter (the cartesian product).
fn product(edges: &[Vec<u32>]) -> Vec<Vec<u32>> {
    edges.iter().fold(vec![Vec::new()], |acc, column| {
        acc.iter()
            .flat_map(|prefix| {
                column.iter().map(move |&x| {
                    let mut next = prefix.clone();
                    next.push(x);
                    next
                })
            })
            .collect()
    })
}

/// Round-trips `f` and compares on `arg_sets` and on random arguments.
fn check_function(module: &Module, f: FuncId, arg_sets: &[Vec<u32>]) -> RoundTrip {
    let round_trip = RoundTrip::new(module, &[f]);
    let world = World { buffer_len: 6, seed: 11 };
    for args in arg_sets {
        round_trip.compare(module, f, args, &world);
    }
    let mut rng = Rng::new(u64::from(f.0) + 100);
    for _ in 0..300 {
        round_trip.compare(module, f, &random_args(module, f, &mut rng), &world);
    }
    round_trip
}

/// Whether the re-lowered function calls anything (a built-in hidden by an item would
/// show as a call).
fn calls_anything(round_trip: &RoundTrip, f: FuncId) -> bool {
    let lowered = &round_trip.lowered.lowered.module;
    let mut found = false;
    visit(&lowered.function(round_trip.function(f)).body, &mut |op| found |= matches!(op, Op::Call(..)));
    found
}

fn visit(region: &Region, f: &mut impl FnMut(&Op)) {
    for inst in &region.insts {
        f(&inst.op);
        match &inst.op {
            Op::If { then, els, .. } => {
                visit(then, f);
                visit(els, f);
            }
            Op::Loop { body, .. } => visit(body, f),
            _ => {}
        }
    }
}

#[test]
fn float_operations_on_edge_values() {
    let mut m = Module::default();
    let f = add(&mut m, "floats", &[("a", Ty::F32), ("b", Ty::F32), ("c", Ty::F32)], |b, p| {
        let (x, y, z) = (p[0], p[1], p[2]);
        let mut out = Vec::new();
        for op in
            [UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sqrt, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Trunc, UnaryOp::Round]
        {
            out.push(b.unary(op, x));
        }
        for op in [
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Rem,
            BinaryOp::Min,
            BinaryOp::Max,
            BinaryOp::CopySign,
        ] {
            out.push(b.binary(op, x, y));
        }
        out.push(b.fma(x, y, z));
        for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
            let c = b.cmp(op, x, y);
            out.push(c);
            out.push(b.select(c, y, z));
        }
        for op in MathOp::ALL {
            let args = if op.arity() == 2 { vec![x, y] } else { vec![x] };
            out.push(b.math(op, args));
        }
        out.push(b.detach(x));
        out.push(b.replace_grad(x, y));
        out
    });
    let edges = f32_edges();
    let sets = product(&[edges.clone(), edges, vec![0.0f32.to_bits(), (-1.0f32).to_bits(), f32::NAN.to_bits()]]);
    let round_trip = check_function(&m, f, &sets);
    assert!(!calls_anything(&round_trip, f), "a built-in is hidden:\n{}", round_trip.written.source);
    let source = &round_trip.written.source;
    assert!(source.contains(" = a + b;") && source.contains(" = fma(a, b, c);"), "{source}");
}

#[test]
fn integer_and_bool_operations_on_edge_values() {
    let mut m = Module::default();
    let int_ops = |b: &mut Builder, x: Value, y: Value, signed: bool| {
        let mut out = Vec::new();
        if signed {
            out.push(b.unary(UnaryOp::Neg, x));
        }
        out.push(b.unary(UnaryOp::Not, x));
        for op in [
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Rem,
            BinaryOp::Min,
            BinaryOp::Max,
            BinaryOp::And,
            BinaryOp::Or,
            BinaryOp::Xor,
            BinaryOp::Shl,
            BinaryOp::Shr,
        ] {
            out.push(b.binary(op, x, y));
        }
        for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
            let c = b.cmp(op, x, y);
            out.push(c);
            out.push(b.select(c, x, y));
        }
        out.push(b.detach(x));
        out.push(b.replace_grad(x, y));
        out
    };
    let i = add(&mut m, "ints", &[("a", Ty::I32), ("b", Ty::I32)], |b, p| int_ops(b, p[0], p[1], true));
    let u = add(&mut m, "uints", &[("a", Ty::U32), ("b", Ty::U32)], |b, p| int_ops(b, p[0], p[1], false));
    let bools = add(&mut m, "bools", &[("a", Ty::Bool), ("b", Ty::Bool)], |b, p| {
        let mut out = vec![b.unary(UnaryOp::Not, p[0])];
        for op in [BinaryOp::And, BinaryOp::Or, BinaryOp::Xor] {
            out.push(b.binary(op, p[0], p[1]));
        }
        out.push(b.cmp(CmpOp::Eq, p[0], p[1]));
        out.push(b.cmp(CmpOp::Ne, p[0], p[1]));
        let not_b = b.unary(UnaryOp::Not, p[1]);
        out.push(b.select(p[0], p[1], not_b));
        out
    });
    let i_edges: Vec<u32> = I32_EDGES.iter().map(|&x| x as u32).collect();
    check_function(&m, i, &product(&[i_edges.clone(), i_edges]));
    check_function(&m, u, &product(&[U32_EDGES.to_vec(), U32_EDGES.to_vec()]));
    let round_trip = check_function(&m, bools, &product(&[vec![0, 1], vec![0, 1]]));
    assert!(!calls_anything(&round_trip, bools));
}

#[test]
fn conversions_and_bit_casts_of_every_pair() {
    let mut m = Module::default();
    let f = add(&mut m, "casts", &[("x", Ty::F32), ("i", Ty::I32), ("u", Ty::U32)], |b, p| {
        let mut out = Vec::new();
        for &from in p {
            for to in [Ty::F32, Ty::I32, Ty::U32] {
                // Builder::convert/bitcast skip identities; push them as ops to cover them.
                out.push(b.push(Op::Convert(to, from), &[to])[0]);
                out.push(b.push(Op::Bitcast(to, from), &[to])[0]);
            }
        }
        out
    });
    let floats: Vec<u32> = f32_edges()
        .into_iter()
        .chain([-2147483904.0f32, 4294967296.0, 4294967040.0, -0.99].map(f32::to_bits))
        .collect();
    let i_edges: Vec<u32> = I32_EDGES.iter().map(|&x| x as u32).collect();
    check_function(&m, f, &product(&[floats, i_edges, U32_EDGES.to_vec()]));
}

/// Constants of every kind, used directly and as operands of operations whose written form
/// needs care (a minus before a negative literal, an integer literal in a conversion).
#[test]
fn constants_round_trip_exactly() {
    let mut floats: Vec<f32> = F32_EDGES.to_vec();
    floats.extend([0.1, -0.1, 1.0 / 3.0, std::f32::consts::PI, 16777217.0, 1e-38, 1.17549e-38, -3.4028235e38]);
    let mut rng = Rng::new(7);
    let mut float_bits: Vec<u32> = floats.iter().map(|x| x.to_bits()).collect();
    float_bits.extend([0x7FC0_0001, 0xFFFF_FFFF, 0x8000_0001, 0x0080_0000]);
    float_bits.extend((0..200).map(|_| rng.next() as u32));
    let mut m = Module::default();
    let f = add(&mut m, "constants", &[], |b, _| {
        let mut out = Vec::new();
        for &bits in &float_bits {
            let c = b.konst(Const::F32(bits));
            out.push(c);
        }
        for x in I32_EDGES {
            out.push(b.i32(x));
        }
        for x in U32_EDGES {
            out.push(b.u32(x));
        }
        out.push(b.bool(true));
        out.push(b.bool(false));
        // Operations on literal operands.
        let minus = b.f32(-1.5);
        out.push(b.unary(UnaryOp::Neg, minus));
        let min = b.i32(i32::MIN);
        out.push(b.unary(UnaryOp::Neg, min));
        out.push(b.unary(UnaryOp::Not, min));
        let five = b.i32(-5);
        out.push(b.convert(Ty::F32, five));
        out.push(b.convert(Ty::U32, five));
        out.push(b.bitcast(Ty::F32, min));
        let nan = b.konst(Const::F32(0x7FC0_0001));
        out.push(b.bitcast(Ty::U32, nan));
        out.push(b.bitcast(Ty::I32, nan));
        out.push(b.sub(minus, minus));
        out.push(b.binary(BinaryOp::Shl, five, five));
        out.push(b.binary(BinaryOp::CopySign, nan, minus));
        let t = b.bool(true);
        out.push(b.select(t, five, min));
        out
    });
    let round_trip = RoundTrip::new(&m, &[f]);
    // Bit for bit, NaN payloads included: constants are not computed.
    let mut interp = drs_interp::Interpreter::new(&round_trip.lowered.lowered.module);
    let written = interp.call(round_trip.function(f), &[]).unwrap();
    let original = drs_interp::Interpreter::new(&m).call(f, &[]).unwrap();
    assert_eq!(written.len(), original.len());
    for (k, (a, b)) in original.iter().zip(&written).enumerate().take(float_bits.len()) {
        assert_eq!(a, b, "constant {k}: {:?} written as {:?}", f32::from_bits(*a), f32::from_bits(*b));
    }
    round_trip.compare(&m, f, &[], &World { buffer_len: 0, seed: 0 });
    let source = &round_trip.written.source;
    for text in ["from_bits(0x7F800000u)", "-2147483648", "4294967295u", "f32(-5i)", "-(-1.5)", "3.4028235e38", "1e-45"]
    {
        assert!(source.contains(text), "`{text}` not in\n{source}");
    }
}

/// `if`s with zero, one and two results, with code in one or both branches; loops nested in
/// both directions, with carried values swapped, without carried values, with a constant
/// exit, and with a recorded bound.
#[test]
fn nested_ifs_and_loops() {
    let mut m = Module::default();
    m.externs.push(ExternDecl { name: "tick".into(), params: vec![Ty::F32], results: vec![] });
    let f = add(&mut m, "control", &[("n", Ty::U32), ("x", Ty::F32), ("c", Ty::Bool)], |b, p| {
        let (n, x, c) = (p[0], p[1], p[2]);
        let ten = b.u32(10);
        let n = b.binary(BinaryOp::Min, n, ten);
        // Zero results: code only in `then`, only in `else`.
        b.if_(
            c,
            |b| {
                b.call_extern(0, vec![x]);
                vec![]
            },
            |_| vec![],
        );
        b.if_(
            c,
            |_| vec![],
            |b| {
                let y = b.unary(UnaryOp::Neg, x);
                b.call_extern(0, vec![y]);
                vec![]
            },
        );
        // One result, no code: a select-like if.
        let one = b.f32(1.0);
        let picked = b.if_(c, |_| vec![x], |_| vec![one])[0];
        // Two results, a loop inside the else branch, an if inside the then branch.
        let pair = b.if_(
            c,
            |b| {
                let zero = b.f32(0.0);
                let positive = b.cmp(CmpOp::Gt, x, zero);
                let inner = b.if_(positive, |b| vec![b.math(MathOp::Log, vec![x])], |_| vec![zero]);
                vec![inner[0], n]
            },
            |b| {
                let zero = b.u32(0);
                let r = b.loop_(vec![zero, x], |b, v| {
                    let one = b.u32(1);
                    let i = b.add(v[0], one);
                    let half = b.f32(0.5);
                    let y = b.mul(v[1], half);
                    let go_on = b.cmp(CmpOp::Lt, i, n);
                    (go_on, vec![i, y])
                });
                vec![r[1], r[0]]
            },
        );
        // An outer loop over (i, acc, flag) with an if with results and an inner loop.
        let zero = b.u32(0);
        let start = b.f32(0.25);
        let outer = b.loop_(vec![zero, start, c], |b, v| {
            let (i, acc, flag) = (v[0], v[1], v[2]);
            let fi = b.convert(Ty::F32, i);
            let step = b.if_(flag, |b| vec![b.add(acc, fi)], |b| vec![b.sub(acc, fi)])[0];
            let three = b.u32(3);
            let inner = b.loop_(vec![zero, step], |b, w| {
                let one = b.u32(1);
                let j = b.add(w[0], one);
                let g = b.fma(w[1], pair[0], x);
                let go_on = b.cmp(CmpOp::Lt, j, three);
                (go_on, vec![j, g])
            });
            let one = b.u32(1);
            let next = b.add(i, one);
            let not_flag = b.unary(UnaryOp::Not, flag);
            let go_on = b.cmp(CmpOp::Lt, next, n);
            (go_on, vec![next, inner[1], not_flag])
        });
        // Carried values swapped every iteration.
        let swapped = b.loop_(vec![x, one, zero], |b, v| {
            let one = b.u32(1);
            let k = b.add(v[2], one);
            let go_on = b.cmp(CmpOp::Lt, k, n);
            (go_on, vec![v[1], v[0], k])
        });
        // No carried values, a constant exit: the body runs once.
        b.loop_(vec![], |b, _| {
            b.call_extern(0, vec![picked]);
            (b.bool(false), vec![])
        });
        // A bound recorded on the loop, enforced by a counter as the lowering does.
        let bounded = b.bounded_loop(vec![zero, x], Some(4), |b, v| {
            let one = b.u32(1);
            let count = b.add(v[0], one);
            let four = b.u32(4);
            let below = b.cmp(CmpOp::Lt, count, four);
            let two = b.f32(2.0);
            let y = b.mul(v[1], two);
            let t = b.bool(true);
            let go_on = b.binary(BinaryOp::And, t, below);
            (go_on, vec![count, y])
        });
        vec![picked, pair[0], pair[1], outer[0], outer[1], outer[2], swapped[0], swapped[1], bounded[1]]
    });
    let sets = product(&[vec![0, 1, 2, 5, 20], [0.0f32, -2.0, 3.5, f32::NAN].map(f32::to_bits).to_vec(), vec![0, 1]]);
    let round_trip = check_function(&m, f, &sets);
    let source = &round_trip.written.source;
    assert!(source.contains("@max_iters(4) loop {"), "{source}");
    assert!(source.contains("let (v"), "{source}");
}

#[test]
fn local_arrays_in_and_out_of_range() {
    let mut m = Module::default();
    let f = add(&mut m, "tape", &[("i", Ty::U32), ("x", Ty::F32), ("n", Ty::U32)], |b, p| {
        let (i, x, n) = (p[0], p[1], p[2]);
        let floats = b.func.add_local(Ty::F32, 8);
        let uints = b.func.add_local(Ty::U32, 3);
        let bools = b.func.add_local(Ty::Bool, 2);
        let ints = b.func.add_local(Ty::I32, 1);
        let empty = b.func.add_local(Ty::F32, 0);
        // Unwritten elements read as zero in the interpreter.
        let unwritten = b.local_load(floats, i);
        // Record x * k at k = 0..min(n, 12) (past the end for k >= 8), like a tape.
        let zero = b.u32(0);
        let twelve = b.u32(12);
        let n = b.binary(BinaryOp::Min, n, twelve);
        b.loop_(vec![zero], |b, v| {
            let k = v[0];
            let fk = b.convert(Ty::F32, k);
            let y = b.mul(x, fk);
            b.local_store(floats, k, y);
            b.local_store(uints, k, k);
            let odd = b.binary(BinaryOp::And, k, b.func.params[0].value);
            let odd = b.cmp(CmpOp::Ne, odd, zero);
            b.local_store(bools, k, odd);
            let one = b.u32(1);
            let next = b.add(k, one);
            let go_on = b.cmp(CmpOp::Lt, next, n);
            (go_on, vec![next])
        });
        let minus = b.i32(-3);
        let at0 = b.u32(0);
        b.local_store(ints, at0, minus);
        let far = b.u32(9);
        b.local_store(floats, far, x);
        b.local_store(empty, i, x);
        let seven = b.u32(7);
        vec![
            unwritten,
            b.local_load(floats, i),
            b.local_load(floats, seven),
            b.local_load(floats, far),
            b.local_load(uints, i),
            b.local_load(bools, i),
            b.local_load(ints, i),
            b.local_load(ints, at0),
            b.local_load(empty, i),
            b.local_load(empty, at0),
        ]
    });
    let sets = product(&[(0..14).collect(), vec![1.5f32.to_bits(), f32::NAN.to_bits()], vec![0, 1, 3, 8, 9, 40]]);
    let round_trip = check_function(&m, f, &sets);
    let source = &round_trip.written.source;
    assert!(source.contains("var local0: [f32; 8] = [0.0; 8];"), "{source}");
    assert!(!source.contains("local4:"), "an empty array is not declared:\n{source}");
}

#[test]
fn host_functions_and_buffers() {
    let mut m = Module::default();
    m.externs.push(ExternDecl {
        name: "bsdf::eval".into(),
        params: vec![Ty::U32, Ty::F32],
        results: vec![Ty::F32, Ty::F32],
    });
    m.externs.push(ExternDecl { name: "Sampler::next_1d".into(), params: vec![Ty::U32], results: vec![Ty::F32] });
    m.externs.push(ExternDecl { name: "log".into(), params: vec![Ty::I32], results: vec![] });
    for (name, elem) in [
        ("Diffuse.reflectance[0]", Ty::F32),
        ("grad counts", Ty::U32),
        ("a.b", Ty::I32),
        ("a_b", Ty::I32),
        ("flags", Ty::Bool),
    ] {
        m.buffers.push(BufferDecl { name: name.into(), elem });
    }
    let helper = add(&mut m, "helper", &[("i", Ty::U32)], |b, p| {
        let r = b.call_extern(1, vec![p[0]]);
        let v = b.load(0, p[0]);
        b.atomic_add(0, p[0], r[0]);
        vec![v, r[0]]
    });
    let f = add(&mut m, "effects", &[("i", Ty::U32), ("x", Ty::F32), ("k", Ty::I32)], |b, p| {
        let (i, x, k) = (p[0], p[1], p[2]);
        let r = b.call_extern(0, vec![i, x]);
        b.call_extern(2, vec![k]);
        let h = b.call(helper, vec![i]);
        let count = b.load(1, i);
        let one = b.u32(1);
        b.atomic_add(1, i, one);
        b.store(1, one, count);
        let a = b.load(2, i);
        b.atomic_add(3, i, a);
        b.atomic_add(3, one, k);
        let flag = b.load(4, i);
        let not_flag = b.unary(UnaryOp::Not, flag);
        b.store(4, i, not_flag);
        b.store(0, one, x);
        vec![r[0], r[1], h[0], h[1], count, a, flag]
    });
    let sets = product(&[vec![0, 1, 3, 6, 100], vec![0.5f32.to_bits(), f32::NAN.to_bits()], vec![1, (-9i32) as u32]]);
    let round_trip = check_function(&m, f, &sets);
    let written = &round_trip.written;
    assert_eq!(written.externs.values().collect::<Vec<_>>(), ["bsdf__eval", "Sampler__next_1d", "log_"]);
    let accessors = &written.buffers[&0];
    assert_eq!(accessors.load.as_deref(), Some("buffer_load_Diffuse_reflectance_0"));
    assert_eq!(accessors.store.as_deref(), Some("buffer_store_Diffuse_reflectance_0"));
    assert_eq!(accessors.atomic_add.as_deref(), Some("buffer_atomic_add_Diffuse_reflectance_0"));
    assert_eq!(written.buffers[&2].load.as_deref(), Some("buffer_load_a_b"));
    assert_eq!(written.buffers[&3].atomic_add.as_deref(), Some("buffer_atomic_add_a_b"));
    assert_eq!(written.buffers[&3].load, None);
    assert!(written.source.contains("extern fn bsdf__eval(a0: u32, a1: f32) -> (f32, f32); // `bsdf::eval`"));
}

/// IR names that are keywords, built-in names, the writer's own local names, or that clash
/// once sanitised.
#[test]
fn awkward_names_stay_distinct_and_callable() {
    let mut m = Module::default();
    let mut callees = Vec::new();
    for name in [
        "select",
        "v1",
        "vec3",
        "Frame::to_local",
        "Frame__to_local",
        "fwd_diff(Frame::to_local)",
        "loop",
        "1st",
        "line\nbreak é",
    ] {
        let callee = add(&mut m, name, &[("x", Ty::F32)], |b, p| {
            let two = b.f32(2.0);
            vec![b.mul(p[0], two)]
        });
        callees.push(callee);
    }
    let params: Vec<(&str, Ty)> = ["self", "v3", "wo.x", "wo_x", "", "_", "select", "fn", "local0", "Frame__to_local"]
        .iter()
        .map(|&n| (n, Ty::F32))
        .collect();
    let f = add(&mut m, "names", &params, |b, p| {
        let mut acc = p[0];
        for (k, &callee) in callees.iter().enumerate() {
            let r = b.call(callee, vec![p[k % p.len()]]);
            acc = b.add(acc, r[0]);
        }
        for &q in &p[1..] {
            acc = b.sub(acc, q);
        }
        vec![acc]
    });
    let round_trip = check_function(&m, f, &[]);
    let source = &round_trip.written.source;
    for text in [
        "fn select_(",
        "fn v1_(",
        "fn vec3_(",
        "fn Frame__to_local(",
        "fn Frame__to_local_2(",
        "fn Frame__to_local__fwd(",
        "fn loop_(",
        "fn _1st(",
        "// `line\\nbreak é`\nfn line_break(",
        // (A long signature: one parameter per line.)
        "fn names(\n    self_: f32,\n    v3_: f32,\n    wo_x: f32,\n    wo_x_2: f32,\n    p: f32,\n    p_2: f32,\n    select_2: f32,\n    fn_: f32,\n    local0_: f32,\n    Frame__to_local_3: f32,\n) -> f32 {",
        "// `fwd_diff(Frame::to_local)`: the forward-mode derivative (JVP) of `Frame::to_local`.",
    ] {
        assert!(source.contains(text), "`{text}` not in\n{source}");
    }
}

/// A loop whose continue flag is the constant `true` never ends (the IR forbids that, but
/// the writer must not produce code the checker rejects): the code after it still checks.
#[test]
fn a_loop_that_never_exits_still_checks() {
    let mut m = Module::default();
    let f = add(&mut m, "endless", &[("x", Ty::F32)], |b, p| {
        let r = b.loop_(vec![p[0]], |b, v| {
            let one = b.f32(1.0);
            let y = b.add(v[0], one);
            (b.bool(true), vec![y])
        });
        vec![b.unary(UnaryOp::Neg, r[0])]
    });
    let written = write_program(&m, &[f]).unwrap();
    assert!(written.source.contains("if false { break; }"), "{}", written.source);
    check_and_lower(&written.source);
}

/// The form of the output, on a small function.
#[test]
fn output_reads_like_the_ir() {
    let mut m = Module::default();
    let f = add(&mut m, "Frame::scale", &[("v.x", Ty::F32), ("n", Ty::U32)], |b, p| {
        let zero = b.u32(0);
        let r = b.loop_(vec![zero, p[0]], |b, v| {
            let one = b.u32(1);
            let i = b.add(v[0], one);
            let half = b.f32(-0.5);
            let y = b.mul(v[1], half);
            let go_on = b.cmp(CmpOp::Lt, i, p[1]);
            (go_on, vec![i, y])
        });
        let positive = b.f32(0.0);
        let c = b.cmp(CmpOp::Gt, r[1], positive);
        let s = b.if_(c, |b| vec![b.unary(UnaryOp::Sqrt, r[1])], |_| vec![positive]);
        vec![s[0], r[0]]
    });
    let written = write_program(&m, &[f]).unwrap();
    let expected = "\
// Written from drs IR: `Frame::scale` and the functions it calls.

// `Frame::scale`
fn Frame__scale(v_x: f32, n: u32) -> (f32, u32) {
    var v10: u32 = 0u;
    var v11: f32 = v_x;
    loop {
        let v3 = v10;
        let v4 = v11;
        let v6 = v3 + 1u;
        let v8 = v4 * (-0.5);
        let v9 = v6 < n;
        v10 = v6;
        v11 = v8;
        if !v9 { break; }
    }
    let v13 = v11 > 0.0;
    let v15 = if v13 {
        let v14 = sqrt(v11);
        v14
    } else {
        0.0
    };
    (v15, v10)
}
";
    assert_eq!(written.source, expected);
    check_and_lower(&written.source);
}

#[test]
fn recursion_unknown_functions_and_invalid_ir_are_errors() {
    let mut m = Module::default();
    // `a` calls `b` calls `a` (ids fixed up after both exist).
    let a = add(&mut m, "a", &[("x", Ty::F32)], |_, p| vec![p[0]]);
    let b_id = add(&mut m, "b", &[("x", Ty::F32)], |b, p| b.call(a, vec![p[0]]));
    let fa = m.function_mut(a);
    let y = fa.new_value(Ty::F32);
    let x = fa.params[0].value;
    fa.body.insts.push(Inst { results: vec![y], op: Op::Call(b_id, vec![x]) });
    fa.body.yields = vec![y];
    match write_program(&m, &[b_id]) {
        Err(WriteError::Recursion(cycle)) => assert_eq!(cycle, ["b", "a", "b"]),
        other => panic!("{other:?}"),
    }
    // Direct recursion.
    let fb = m.function_mut(b_id);
    if let Op::Call(callee, _) = &mut fb.body.insts[0].op {
        *callee = b_id;
    }
    match write_program(&m, &[b_id]) {
        Err(WriteError::Recursion(cycle)) => assert_eq!(cycle, ["b", "b"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(write_program(&m, &[FuncId(7)]), Err(WriteError::UnknownFunction(FuncId(7))));
    // A value used but never defined.
    let mut bad = Module::default();
    let g = add(&mut bad, "g", &[], |b, _| vec![b.f32(1.0)]);
    bad.function_mut(g).body.yields = vec![Value(5)];
    let error = write_program(&bad, &[g]).unwrap_err();
    assert!(matches!(&error, WriteError::InvalidIr(e) if e.function == "g"), "{error:?}");
    assert!(error.to_string().contains("invalid IR"));
}
