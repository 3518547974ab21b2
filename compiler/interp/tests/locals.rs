//! Local arrays in the interpreter: fresh zeroed arrays per call, out-of-range accesses, and a
//! forward/reverse tape through bounded loops.

use drs_interp::Interpreter;
use drs_ir::*;

/// Builds a function with the given params, filling its body with `body` (which returns the
/// results); returns its id.
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

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn every_call_gets_fresh_zeroed_arrays() {
    let mut m = Module::default();
    // Reads element i, writes x there, reads it again.
    let swap = func(&mut m, "swap", &[Ty::U32, Ty::F32], |b, p| {
        let a = b.func.add_local(Ty::F32, 4);
        let before = b.local_load(a, p[0]);
        b.local_store(a, p[0], p[1]);
        let after = b.local_load(a, p[0]);
        vec![before, after]
    });
    // Calls it twice in one call: the second call does not see the first one's write.
    let twice = func(&mut m, "twice", &[Ty::U32, Ty::F32], |b, p| {
        let first = b.call(swap, vec![p[0], p[1]]);
        let second = b.call(swap, vec![p[0], p[1]]);
        vec![first[0], second[0], second[1]]
    });
    let mut it = Interpreter::new(&m);
    for _ in 0..2 {
        assert_eq!(it.call(swap, &[2, f(1.5)]).unwrap(), vec![0, f(1.5)]);
    }
    assert_eq!(it.call(twice, &[3, f(-2.0)]).unwrap(), vec![0, 0, f(-2.0)]);
}

#[test]
fn out_of_range_reads_give_zero_and_writes_are_dropped() {
    let mut m = Module::default();
    let id = func(&mut m, "oob", &[Ty::U32], |b, p| {
        let a = b.func.add_local(Ty::I32, 2);
        let seven = b.i32(7);
        let nine = b.i32(9);
        b.local_store(a, p[0], seven);
        let last = b.u32(1);
        b.local_store(a, last, nine);
        let at = b.local_load(a, p[0]);
        let one = b.local_load(a, last);
        vec![at, one]
    });
    let mut it = Interpreter::new(&m);
    assert_eq!(it.call(id, &[0]).unwrap(), vec![7, 9]);
    // Index 1 is written last either way.
    assert_eq!(it.call(id, &[1]).unwrap(), vec![9, 9]);
    for index in [2, 5, u32::MAX] {
        assert_eq!(it.call(id, &[index]).unwrap(), vec![0, 9], "index {index}");
    }
}

#[test]
fn a_tape_replays_a_loop_backwards() {
    // Forward: x_{k+1} = x_k * x_k + c for k < n (n <= 8), each x_k taped. Backward: the
    // derivative d x_n / d x_0 = prod 2 x_k, read from the tape in reverse order.
    let mut m = Module::default();
    let id = func(&mut m, "tape", &[Ty::F32, Ty::F32, Ty::U32], |b, p| {
        let (x0, c, n) = (p[0], p[1], p[2]);
        let tape = b.func.add_local(Ty::F32, 8);
        let zero = b.u32(0);
        let fwd = b.bounded_loop(vec![zero, x0], Some(8), |b, s| {
            let (k, x) = (s[0], s[1]);
            b.local_store(tape, k, x);
            let xx = b.mul(x, x);
            let next_x = b.add(xx, c);
            let one = b.u32(1);
            let next_k = b.add(k, one);
            let more = b.cmp(CmpOp::Lt, next_k, n);
            (more, vec![next_k, next_x])
        });
        let one_f = b.f32(1.0);
        let bwd = b.bounded_loop(vec![fwd[0], one_f], Some(8), |b, s| {
            let (k, d) = (s[0], s[1]);
            let one = b.u32(1);
            let k1 = b.sub(k, one);
            let x = b.local_load(tape, k1);
            let two = b.f32(2.0);
            let dx = b.mul(two, x);
            let d1 = b.mul(d, dx);
            let zero = b.u32(0);
            let more = b.cmp(CmpOp::Gt, k1, zero);
            (more, vec![k1, d1])
        });
        vec![fwd[1], bwd[1]]
    });
    let mut it = Interpreter::new(&m);
    for (x0, c, n) in [(0.5f32, 0.25f32, 1u32), (0.5, -0.5, 3), (0.125, 0.5, 8)] {
        let (mut x, mut d) = (x0, 1.0f32);
        let mut xs = Vec::new();
        for _ in 0..n {
            xs.push(x);
            x = x * x + c;
        }
        for &xk in xs.iter().rev() {
            d *= 2.0 * xk;
        }
        assert_eq!(it.call(id, &[f(x0), f(c), n]).unwrap(), vec![f(x), f(d)], "x0 {x0} c {c} n {n}");
    }
}

#[test]
fn bool_and_u32_arrays() {
    let mut m = Module::default();
    let id = func(&mut m, "flags", &[Ty::U32, Ty::Bool], |b, p| {
        let flags = b.func.add_local(Ty::Bool, 3);
        let counts = b.func.add_local(Ty::U32, 3);
        let k = b.u32(5);
        b.local_store(flags, p[0], p[1]);
        b.local_store(counts, p[0], k);
        let flag = b.local_load(flags, p[0]);
        let count = b.local_load(counts, p[0]);
        let other = b.u32(2);
        let other_flag = b.local_load(flags, other);
        vec![flag, count, other_flag]
    });
    let mut it = Interpreter::new(&m);
    assert_eq!(it.call(id, &[0, 1]).unwrap(), vec![1, 5, 0]);
    assert_eq!(it.call(id, &[2, 1]).unwrap(), vec![1, 5, 1]);
    assert_eq!(it.call(id, &[7, 1]).unwrap(), vec![0, 0, 0]);
}
