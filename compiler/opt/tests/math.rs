//! The math library: the expanded IR, run in the interpreter, computes exactly what
//! `drs_opt::math::eval` computes, and its error against the correctly rounded result stays
//! within the bounds documented in `docs/math.md` (dense sweeps, random bit patterns and all
//! special values).

use drs_interp::Interpreter;
use drs_ir::{verify_module, Builder, FuncId, Function, MathOp, Module, Op, Signatures, Ty};
use drs_opt::math::{eval, reference, ulp_distance};

/// The documented maximum error in ulps of each function (`docs/math.md`).
fn bound(op: MathOp) -> u64 {
    match op {
        MathOp::Atan2 | MathOp::Pow => 2,
        _ => 1,
    }
}

fn module_with(op: MathOp) -> Module {
    let mut m = Module::default();
    let mut f = Function::new("f");
    let args: Vec<_> = (0..op.arity()).map(|i| f.add_param(format!("a{i}"), Ty::F32)).collect();
    f.result_types = vec![Ty::F32];
    let sigs = Signatures::default();
    let mut b = Builder::new(&mut f, &sigs);
    let r = b.math(op, args);
    b.finish(vec![r]);
    m.add_function(f);
    m
}

fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::EPSILON,
        1.0e-45,
        f32::from_bits(0x007f_ffff),
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.9999999,
        1.0000001,
        std::f32::consts::PI,
        std::f32::consts::FRAC_PI_2,
        std::f32::consts::FRAC_PI_4,
        88.72283,
        88.72284,
        89.41598,
        -87.33654,
        -103.97208,
        -104.0,
        128.0,
        -149.0,
        -150.0,
        16777216.0,
        16777217.0,
        1e10,
        -1e30,
    ];
    let neg: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The expanded IR and `eval` agree bit for bit, and `verify_module` accepts the expansion.
#[test]
fn expanded_ir_matches_eval_in_the_interpreter() {
    for op in MathOp::ALL {
        let mut m = module_with(op);
        drs_opt::expand_math(&mut m);
        verify_module(&m).unwrap_or_else(|e| panic!("{}: {e}", op.name()));
        let helper = m.find(&drs_opt::math::helper_name(op)).expect("helper added");
        let mut math_ops = 0;
        for f in &m.functions {
            drs_opt::util::walk_insts(&f.body, &mut |i| math_ops += matches!(i.op, Op::Math(..)) as usize);
        }
        assert_eq!(math_ops, 0, "{}: Math ops left", op.name());
        assert!(matches!(m.functions[0].body.insts[0].op, Op::Call(id, _) if id == helper));
        let mut interp = Interpreter::new(&m);
        let mut rng = Rng(0x1234_5678 + op as u64);
        let sp = specials();
        let mut check = |args: &[f32]| {
            let bits: Vec<u32> = args.iter().map(|a| a.to_bits()).collect();
            let got = interp.call(FuncId(0), &bits).unwrap()[0];
            let want = eval(op, args).to_bits();
            assert_eq!(got, want, "{}({args:?})", op.name());
        };
        for i in 0..3000 {
            let r = rng.next();
            let a = f32::from_bits(r as u32);
            let b = f32::from_bits((r >> 32) as u32);
            let small = (i as f32 - 1500.0) * 0.01;
            if op.arity() == 1 {
                check(&[a]);
                check(&[small]);
            } else {
                check(&[a, b]);
                check(&[small, b]);
                check(&[a, small]);
            }
        }
        for &x in &sp {
            if op.arity() == 1 {
                check(&[x]);
            } else {
                for &y in &sp {
                    check(&[x, y]);
                }
            }
        }
    }
}

/// Max error over `inputs`, asserting the documented bound.
fn measure(op: MathOp, inputs: impl Iterator<Item = Vec<f32>>) -> u64 {
    let mut max = 0;
    for args in inputs {
        let got = eval(op, &args);
        let want = reference(op, &args);
        let d = ulp_distance(got, want);
        assert!(
            d <= bound(op),
            "{}({args:?}) = {got:e} ({:#010x}), correctly rounded {want:e} ({:#010x}): {d} ulp > {}",
            op.name(),
            got.to_bits(),
            want.to_bits(),
            bound(op)
        );
        max = max.max(d);
    }
    max
}

/// Every 2^k-th bit pattern, both signs, plus a dense sweep of the interesting range.
#[test]
fn unary_functions_are_within_their_bounds() {
    let unary: Vec<MathOp> = MathOp::ALL.into_iter().filter(|m| m.arity() == 1).collect();
    for op in unary {
        let stride = 1021u64; // 4.2M inputs over all bit patterns
        let sweep = (0..(1u64 << 32) / stride).map(|i| vec![f32::from_bits((i * stride) as u32)]);
        measure(op, sweep);
        let (lo, hi) = match op {
            MathOp::Asin | MathOp::Acos => (-1.0f32, 1.0f32),
            MathOp::Log | MathOp::Log2 => (0.0, 4.0),
            MathOp::Exp | MathOp::Exp2 => (-150.0, 130.0),
            MathOp::Sinh | MathOp::Cosh => (-92.0, 92.0),
            MathOp::Tanh => (-10.0, 10.0),
            _ => (-10.0, 10.0),
        };
        if matches!(op, MathOp::Sin | MathOp::Cos | MathOp::Tan) {
            // around the switch between the Cody–Waite and the Payne–Hanek reductions
            let b = 16777216.0f32.to_bits();
            let around = (b - 100_000..b + 100_000).map(|i| vec![f32::from_bits(i)]);
            measure(op, around);
        }
        let n = 200_000;
        let dense = (0..=n).map(|i| vec![lo + (hi - lo) * (i as f32 / n as f32)]);
        measure(op, dense);
        measure(op, specials().into_iter().map(|x| vec![x]));
    }
}

#[test]
fn binary_functions_are_within_their_bounds() {
    for op in [MathOp::Atan2, MathOp::Pow] {
        let mut rng = Rng(0xdead_beef ^ op as u64);
        let random = (0..400_000).map(|_| {
            let r = rng.next();
            vec![f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32)]
        });
        measure(op, random);
        let mut rng = Rng(0xfeed_f00d ^ op as u64);
        let moderate = (0..400_000).map(|_| {
            let r = rng.next();
            let u = (r as u32) as f32 / 4294967296.0;
            let v = ((r >> 32) as u32) as f32 / 4294967296.0;
            let x = (u * 16.0 - 8.0).exp2();
            vec![if r & 1 == 0 { x } else { -x }, v * 60.0 - 30.0]
        });
        measure(op, moderate);
        let grid: Vec<f32> = (-40..=40).map(|i| i as f32 * 0.25).chain(specials()).collect();
        let pairs: Vec<Vec<f32>> = grid.iter().flat_map(|&x| grid.iter().map(move |&y| vec![x, y])).collect();
        measure(op, pairs.into_iter());
    }
}

/// C99 special cases of pow and atan2, exactly.
#[test]
fn pow_and_atan2_special_cases() {
    let pow = |x: f32, y: f32| eval(MathOp::Pow, &[x, y]);
    let same = |a: f32, b: f32| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
    for x in specials() {
        assert!(same(pow(x, 0.0), 1.0) && same(pow(x, -0.0), 1.0), "pow({x}, 0)");
        assert!(same(pow(1.0, x), 1.0), "pow(1, {x})");
    }
    assert!(same(pow(-2.0, 3.0), -8.0));
    assert!(same(pow(-2.0, 2.0), 4.0));
    assert!(pow(-2.0, 0.5).is_nan());
    assert!(same(pow(-0.0, -1.0), f32::NEG_INFINITY));
    assert!(same(pow(0.0, -1.0), f32::INFINITY));
    assert!(same(pow(-0.0, -2.0), f32::INFINITY));
    assert!(same(pow(-0.0, 3.0), -0.0));
    assert!(same(pow(-0.0, 2.0), 0.0));
    assert!(same(pow(-1.0, f32::INFINITY), 1.0));
    assert!(same(pow(-1.0, f32::NEG_INFINITY), 1.0));
    assert!(same(pow(0.5, f32::NEG_INFINITY), f32::INFINITY));
    assert!(same(pow(2.0, f32::NEG_INFINITY), 0.0));
    assert!(same(pow(0.5, f32::INFINITY), 0.0));
    assert!(same(pow(2.0, f32::INFINITY), f32::INFINITY));
    assert!(same(pow(f32::NEG_INFINITY, 3.0), f32::NEG_INFINITY));
    assert!(same(pow(f32::NEG_INFINITY, -3.0), -0.0));
    assert!(same(pow(f32::NEG_INFINITY, 2.0), f32::INFINITY));
    assert!(same(pow(f32::INFINITY, -1.0), 0.0));
    assert!(pow(f32::NAN, 1.0).is_nan() && pow(2.0, f32::NAN).is_nan());
    assert!(same(pow(2.0, 10.0), 1024.0));
    assert!(same(pow(10.0, 39.0), f32::INFINITY));
    assert!(same(pow(10.0, -46.0), 0.0));

    let atan2 = |y: f32, x: f32| eval(MathOp::Atan2, &[y, x]);
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    assert!(same(atan2(0.0, 1.0), 0.0) && same(atan2(-0.0, 1.0), -0.0));
    assert!(same(atan2(0.0, -1.0), PI) && same(atan2(-0.0, -1.0), -PI));
    assert!(same(atan2(0.0, -0.0), PI) && same(atan2(-0.0, 0.0), -0.0));
    assert!(same(atan2(1.0, 0.0), FRAC_PI_2) && same(atan2(-1.0, -0.0), -FRAC_PI_2));
    assert!(same(atan2(f32::INFINITY, f32::INFINITY), FRAC_PI_4));
    assert!(same(atan2(f32::NEG_INFINITY, f32::NEG_INFINITY), -3.0 * FRAC_PI_4));
    assert!(same(atan2(1.0, f32::INFINITY), 0.0) && same(atan2(-1.0, f32::NEG_INFINITY), -PI));
    assert!(atan2(f32::NAN, 1.0).is_nan() && atan2(1.0, f32::NAN).is_nan());
}

/// Odd functions are odd, including at ±0; even functions are even.
#[test]
fn symmetries_and_zeros() {
    for op in [MathOp::Sin, MathOp::Tan, MathOp::Asin, MathOp::Atan, MathOp::Sinh, MathOp::Tanh] {
        assert_eq!(eval(op, &[0.0]).to_bits(), 0, "{}(+0)", op.name());
        assert_eq!(eval(op, &[-0.0]).to_bits(), (-0.0f32).to_bits(), "{}(-0)", op.name());
        for i in 1..2000 {
            let x = i as f32 * 0.0123;
            assert_eq!(eval(op, &[-x]).to_bits(), (-eval(op, &[x])).to_bits(), "{}({x})", op.name());
        }
    }
    for op in [MathOp::Cos, MathOp::Cosh] {
        for i in 0..2000 {
            let x = i as f32 * 0.0123;
            assert_eq!(eval(op, &[-x]).to_bits(), eval(op, &[x]).to_bits(), "{}({x})", op.name());
        }
    }
    assert_eq!(eval(MathOp::Exp, &[0.0]), 1.0);
    assert_eq!(eval(MathOp::Log, &[1.0]).to_bits(), 0);
    assert_eq!(eval(MathOp::Cos, &[0.0]), 1.0);
    assert_eq!(eval(MathOp::Acos, &[1.0]).to_bits(), 0);
}
