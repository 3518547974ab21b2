//! f64 mode (`Interpreter::call_f64`): the same results as f32 mode where f32 is exact, more
//! accurate where it is not, f64 libm for `Math`, and the documented rules at the edges
//! (conversions, bitcasts, buffers, host functions, local arrays).

use drs_interp::{Interpreter, Trap, Wide};
use drs_ir::*;

fn func(m: &mut Module, name: &str, params: &[Ty], body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>) -> FuncId {
    let sigs = Signatures::of(m);
    let mut f = Function::new(name);
    let ps: Vec<Value> = params.iter().enumerate().map(|(i, &t)| f.add_param(format!("p{i}"), t)).collect();
    let mut b = Builder::new(&mut f, &sigs);
    let results = body(&mut b, &ps);
    let types = results.iter().map(|&r| b.ty(r)).collect();
    b.finish(results);
    f.result_types = types;
    let id = m.add_function(f);
    verify_module(m).unwrap_or_else(|e| panic!("{e}\n{}", print_module(m)));
    id
}

fn wide_f(x: f64) -> Wide {
    Wide::Float(x)
}

fn float(w: Wide) -> f64 {
    w.as_f64().unwrap_or_else(|| panic!("{w:?} is not a float"))
}

#[test]
fn exact_cases_match_f32_mode() {
    let mut m = Module::default();
    let id = func(&mut m, "mix", &[Ty::F32, Ty::F32, Ty::I32, Ty::Bool], |b, p| {
        let (x, y, n, c) = (p[0], p[1], p[2], p[3]);
        let sum = b.add(x, y);
        let prod = b.mul(sum, y);
        let two = b.f32(2.0);
        let half = b.div(prod, two);
        let fma = b.fma(x, y, half);
        let diff = b.sub(fma, x);
        let mn = b.binary(BinaryOp::Min, x, y);
        let mx = b.binary(BinaryOp::Max, x, y);
        let rem = b.binary(BinaryOp::Rem, x, y);
        let fl = b.unary(UnaryOp::Floor, x);
        let rd = b.unary(UnaryOp::Round, y);
        let sq = b.mul(y, y);
        let root = b.unary(UnaryOp::Sqrt, sq);
        let lt = b.cmp(CmpOp::Lt, x, y);
        let both = b.binary(BinaryOp::And, lt, c);
        let sel = b.select(both, x, y);
        let xi = b.convert(Ty::I32, x);
        let ni = b.add(xi, n);
        let nf = b.convert(Ty::F32, n);
        let bits = b.bitcast(Ty::U32, x);
        let back = b.bitcast(Ty::F32, bits);
        vec![sum, prod, half, fma, diff, mn, mx, rem, fl, rd, root, lt, sel, ni, nf, bits, back]
    });
    let tys = m.function(id).result_types.clone();
    let mut it = Interpreter::new(&m);
    let cases = [(1.5f32, -2.25f32, 7i32, true), (-3.0, 0.5, -2, false), (6.5, 2.0, 40, true), (0.0, -0.0, 0, true)];
    for (x, y, n, c) in cases {
        let bits = it.call(id, &[x.to_bits(), y.to_bits(), n as u32, c as u32]).unwrap();
        let args = [wide_f(x as f64), wide_f(y as f64), Wide::Bits(n as u32), Wide::Bits(c as u32)];
        let wide = it.call_f64(id, &args).unwrap();
        for (i, ((&b32, &w), &ty)) in bits.iter().zip(&wide).zip(&tys).enumerate() {
            assert!(w.fits(ty), "result {i}: {w:?} does not carry {ty:?}");
            match w {
                // Exact: the f64 value is the f32 result itself, not just close to it (any
                // NaN stands for any other: their payloads are unspecified).
                Wide::Float(v) => {
                    let want = f32::from_bits(b32) as f64;
                    assert!(v == want || v.is_nan() && want.is_nan(), "result {i} for {x} {y} {n} {c}: {v} vs {want}");
                    assert!(v != 0.0 || v.is_sign_negative() == want.is_sign_negative(), "result {i}: sign of zero");
                }
                Wide::Bits(b) => assert_eq!(b, b32, "result {i} for {x} {y} {n} {c}"),
            }
        }
    }
}

#[test]
fn cancellation_is_resolved_in_f64() {
    let mut m = Module::default();
    let id = func(&mut m, "cancel", &[Ty::F32], |b, p| {
        let one = b.f32(1.0);
        let s = b.add(one, p[0]);
        vec![b.sub(s, one)]
    });
    let mut it = Interpreter::new(&m);
    assert_eq!(it.call(id, &[1e-8f32.to_bits()]).unwrap(), vec![0f32.to_bits()]);
    let r = float(it.call_f64(id, &[wide_f(1e-8)]).unwrap()[0]);
    // Within the rounding of `1 + 1e-8` to f64 (2^-53), where f32 loses everything.
    assert!((r - 1e-8).abs() <= f64::EPSILON, "(1 + 1e-8) - 1 = {r:e} in f64 mode");
}

#[test]
fn every_math_op_is_f64_libm() {
    type Reference = fn(f64, f64) -> f64;
    let reference: [(MathOp, Reference); 15] = [
        (MathOp::Sin, |x, _| x.sin()),
        (MathOp::Cos, |x, _| x.cos()),
        (MathOp::Tan, |x, _| x.tan()),
        (MathOp::Asin, |x, _| x.asin()),
        (MathOp::Acos, |x, _| x.acos()),
        (MathOp::Atan, |x, _| x.atan()),
        (MathOp::Atan2, |y, x| y.atan2(x)),
        (MathOp::Sinh, |x, _| x.sinh()),
        (MathOp::Cosh, |x, _| x.cosh()),
        (MathOp::Tanh, |x, _| x.tanh()),
        (MathOp::Exp, |x, _| x.exp()),
        (MathOp::Exp2, |x, _| x.exp2()),
        (MathOp::Log, |x, _| x.ln()),
        (MathOp::Log2, |x, _| x.log2()),
        (MathOp::Pow, |x, y| x.powf(y)),
    ];
    assert_eq!(reference.map(|r| r.0), MathOp::ALL);
    let mut m = Module::default();
    let ids: Vec<FuncId> = MathOp::ALL
        .iter()
        .map(|&op| func(&mut m, op.name(), &[Ty::F32, Ty::F32], |b, p| vec![b.math(op, p[..op.arity()].to_vec())]))
        .collect();
    let mut it = Interpreter::new(&m);
    // Arguments that are not f32 values: f64 mode must not round them.
    let inputs = [(0.3, 1.7), (-0.71, 2.2), (0.999, -0.35), (1e-9, 3.1), (2.5e2, 0.1)];
    for ((op, want), id) in reference.iter().zip(ids) {
        for (x, y) in inputs {
            let got = float(it.call_f64(id, &[wide_f(x), wide_f(y)]).unwrap()[0]);
            let expected = want(x, y);
            assert!(
                got.to_bits() == expected.to_bits() || (got.is_nan() && expected.is_nan()),
                "{}({x}, {y}) = {got:e}, f64 libm {expected:e}",
                op.name()
            );
        }
    }
}

#[test]
fn conversions_and_bitcasts_round_as_documented() {
    let mut m = Module::default();
    let id = func(&mut m, "conv", &[Ty::F32, Ty::I32], |b, p| {
        let to_int = b.convert(Ty::I32, p[0]);
        let to_uint = b.convert(Ty::U32, p[0]);
        let from_int = b.convert(Ty::F32, p[1]);
        let bits = b.bitcast(Ty::U32, p[0]);
        let back = b.bitcast(Ty::F32, bits);
        vec![to_int, to_uint, from_int, bits, back]
    });
    let mut it = Interpreter::new(&m);
    // 2.9999999999 truncates to 2 in f64 (in f32 it would first round to 3.0).
    let big = 16_777_217; // 2^24 + 1: exact in f64, not in f32
    let out = it.call_f64(id, &[wide_f(2.9999999999), Wide::Bits(big)]).unwrap();
    assert_eq!(out[0], Wide::Bits(2));
    assert_eq!(out[1], Wide::Bits(2));
    assert_eq!(out[2], Wide::Float(16_777_217.0));
    assert_eq!(out[3], Wide::Bits(3.0f32.to_bits()));
    assert_eq!(out[4], Wide::Float(3.0));
    // Saturation and NaN.
    let out = it.call_f64(id, &[wide_f(-1e12), Wide::Bits(0)]).unwrap();
    assert_eq!((out[0], out[1]), (Wide::Bits(i32::MIN as u32), Wide::Bits(0)));
    let out = it.call_f64(id, &[wide_f(f64::NAN), Wide::Bits(0)]).unwrap();
    assert_eq!((out[0], out[1]), (Wide::Bits(0), Wide::Bits(0)));
}

#[test]
fn buffers_stay_f32_and_hosts_see_f32() {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "params".into(), elem: Ty::F32 });
    m.externs.push(ExternDecl { name: "host".into(), params: vec![Ty::F32], results: vec![Ty::F32] });
    let id = func(&mut m, "io", &[Ty::F32], |b, p| {
        let zero = b.u32(0);
        let one = b.u32(1);
        let loaded = b.load(0, zero);
        let sum = b.add(loaded, p[0]);
        b.store(0, one, sum);
        b.atomic_add(0, zero, p[0]);
        let h = b.call_extern(0, vec![p[0]]);
        vec![sum, h[0]]
    });
    let mut it = Interpreter::new(&m);
    it.buffers[0] = vec![0.1f32.to_bits(), 0];
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    it.bind_extern(
        "host",
        Box::new(move |a| {
            log.lock().unwrap().push(a[0]);
            vec![0.7f32.to_bits()]
        }),
    );
    let x = 1.0 + 1e-10;
    let out = it.call_f64(id, &[wide_f(x)]).unwrap();
    // The element is read as the f32 0.1, widened exactly.
    assert_eq!(out[0], Wide::Float(0.1f32 as f64 + x));
    assert_eq!(out[1], Wide::Float(0.7f32 as f64));
    // Writes round to f32.
    assert_eq!(it.buffers[0][1], ((0.1f32 as f64 + x) as f32).to_bits());
    assert_eq!(it.buffers[0][0], ((0.1f32 as f64 + x) as f32).to_bits());
    assert_eq!(*seen.lock().unwrap(), vec![1.0f32.to_bits()]);
}

#[test]
fn local_arrays_hold_f64() {
    let mut m = Module::default();
    let id = func(&mut m, "keep", &[Ty::F32], |b, p| {
        let a = b.func.add_local(Ty::F32, 2);
        let i = b.u32(1);
        b.local_store(a, i, p[0]);
        let x = b.local_load(a, i);
        let one = b.f32(1.0);
        vec![b.sub(x, one)]
    });
    let mut it = Interpreter::new(&m);
    let r = float(it.call_f64(id, &[wide_f(1.0 + 2f64.powi(-40))]).unwrap()[0]);
    assert_eq!(r, 2f64.powi(-40));
}

#[test]
fn arguments_of_the_wrong_kind_are_a_trap() {
    let mut m = Module::default();
    let id = func(&mut m, "pair", &[Ty::F32, Ty::U32], |_, p| vec![p[0], p[1]]);
    let mut it = Interpreter::new(&m);
    let err = it.call_f64(id, &[wide_f(1.0), wide_f(2.0)]).unwrap_err();
    assert_eq!(err, Trap::ArgumentKind { function: "pair".into(), index: 1, ty: Ty::U32 });
    assert!(err.to_string().contains("Wide::Bits"), "{err}");
    let err = it.call_f64(id, &[Wide::Bits(1), Wide::Bits(2)]).unwrap_err();
    assert_eq!(err, Trap::ArgumentKind { function: "pair".into(), index: 0, ty: Ty::F32 });
    assert!(matches!(it.call_f64(id, &[wide_f(1.0)]), Err(Trap::Arity { expected: 2, given: 1, .. })));
}
