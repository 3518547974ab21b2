// The cases of the `control` tests, included by the test crates of both backends (their `common`
// module is the harness with their code generator).

use common::{check, Host};
use drs_cranelift::{Buffer, Error, LaneGroup, Lanes, Options};
use drs_ir::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

fn func(m: &mut Module, name: &str, params: &[Ty], body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>) -> FuncId {
    let sigs = Signatures::of(m);
    let mut f = Function::new(name);
    let ps: Vec<Value> = params.iter().enumerate().map(|(i, &t)| f.add_param(format!("p{i}"), t)).collect();
    let mut b = Builder::new(&mut f, &sigs);
    let results = body(&mut b, &ps);
    let types = results.iter().map(|&r| b.ty(r)).collect();
    b.finish(results);
    f.result_types = types;
    m.add_function(f)
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// A long pure chain so that a region is not if-converted.
fn busy(b: &mut Builder, x: Value, n: usize) -> Value {
    let mut v = x;
    for i in 0..n {
        let k = b.f32(1.0 + i as f32 * 0.25);
        let m = b.mul(v, k);
        v = b.sub(m, x);
    }
    v
}

fn lanes_f32_i32(n: usize) -> Vec<Vec<u32>> {
    (0..n).map(|l| vec![f((l as f32 - 9.5) * 0.75), (l as i32 * 7 - 40) as u32]).collect()
}

#[test]
fn divergent_ifs() {
    let mut m = Module::default();
    let both = |b: &mut Builder, p: &[Value], long: bool| {
        let zero = b.f32(0.0);
        let c = b.cmp(CmpOp::Lt, p[0], zero);
        b.if_(
            c,
            |b| {
                let two = b.f32(2.0);
                let x = b.mul(p[0], two);
                let x = if long { busy(b, x, 14) } else { x };
                let one = b.i32(1);
                let n = b.add(p[1], one);
                vec![x, n]
            },
            |b| {
                let x = b.unary(UnaryOp::Sqrt, p[0]);
                let x = if long { busy(b, x, 9) } else { x };
                let three = b.i32(3);
                let n = b.mul(p[1], three);
                vec![x, n]
            },
        )
    };
    func(&mut m, "short", &[Ty::F32, Ty::I32], |b, p| both(b, p, false));
    func(&mut m, "long", &[Ty::F32, Ty::I32], |b, p| both(b, p, true));
    // Nested: a varying if inside a varying if, a uniform if inside, and yields of values
    // defined outside the regions (constants and params).
    func(&mut m, "nested", &[Ty::F32, Ty::I32], |b, p| {
        let zero = b.i32(0);
        let c1 = b.cmp(CmpOp::Gt, p[1], zero);
        let k = b.f32(7.0);
        b.if_(
            c1,
            |b| {
                let ten = b.i32(10);
                let c2 = b.cmp(CmpOp::Lt, p[1], ten);
                let r = b.if_(
                    c2,
                    |b| {
                        let x = busy(b, p[0], 13);
                        vec![x, p[1]]
                    },
                    |_| vec![k, p[1]],
                );
                let t = b.bool(true);
                let u = b.if_(t, |b| vec![b.f32(1.0)], |b| vec![b.f32(2.0)]);
                let s = b.add(r[0], u[0]);
                vec![s, r[1]]
            },
            |b| {
                let x = busy(b, p[0], 20);
                let m1 = b.i32(-1);
                let n = b.mul(p[1], m1);
                vec![x, n]
            },
        )
    });
    // All lanes take the same side for some groups (lane values are sorted).
    for name in ["short", "long", "nested"] {
        check(&m, name, &lanes_f32_i32(37), &[], &[]);
    }
}

#[test]
fn loops_with_different_trip_counts() {
    let mut m = Module::default();
    // sum of 0..n, n different per lane (a while loop as a do-while with a guard).
    func(&mut m, "sum", &[Ty::I32], |b, p| {
        let zero = b.i32(0);
        let out = b.loop_(vec![zero, zero], |b, c| {
            let (i, acc) = (c[0], c[1]);
            let more = b.cmp(CmpOp::Lt, i, p[0]);
            let next = b.if_(
                more,
                |b| {
                    let one = b.i32(1);
                    let i1 = b.add(i, one);
                    let a1 = b.add(acc, i);
                    vec![i1, a1]
                },
                |_| vec![i, acc],
            );
            (more, next)
        });
        vec![out[0], out[1]]
    });
    // Collatz steps: data-dependent trip counts, the loop condition depends on carried values.
    func(&mut m, "collatz", &[Ty::U32], |b, p| {
        let zero = b.u32(0);
        let out = b.loop_(vec![p[0], zero], |b, c| {
            let (x, steps) = (c[0], c[1]);
            let one = b.u32(1);
            let two = b.u32(2);
            let r = b.binary(BinaryOp::Rem, x, two);
            let odd = b.cmp(CmpOp::Eq, r, one);
            let nx = b.if_(
                odd,
                |b| {
                    let three = b.u32(3);
                    let t = b.mul(x, three);
                    vec![b.add(t, one)]
                },
                |b| vec![b.binary(BinaryOp::Shr, x, one)],
            );
            let s1 = b.add(steps, one);
            let cont = b.cmp(CmpOp::Gt, nx[0], one);
            (cont, vec![nx[0], s1])
        });
        vec![out[0], out[1]]
    });
    // A loop with a uniform trip count and varying carried values, and one whose continue
    // flag is a constant (runs once).
    func(&mut m, "uniform_trip", &[Ty::F32], |b, p| {
        let zero = b.i32(0);
        let out = b.loop_(vec![zero, p[0]], |b, c| {
            let one = b.i32(1);
            let i1 = b.add(c[0], one);
            let h = b.f32(0.5);
            let x = b.fma(c[1], h, h);
            let n = b.i32(9);
            let more = b.cmp(CmpOp::Lt, i1, n);
            (more, vec![i1, x])
        });
        let once = b.loop_(vec![out[1]], |b, c| {
            let f = b.bool(false);
            let d = b.f32(3.0);
            (f, vec![b.add(c[0], d)])
        });
        vec![out[0], out[1], once[0]]
    });
    let lanes: Vec<Vec<u32>> = (0..29).map(|l| vec![(l * 5 % 23) as u32]).collect();
    check(&m, "sum", &lanes, &[], &[]);
    let lanes: Vec<Vec<u32>> = (1..40).map(|l| vec![l * 3 + 1]).collect();
    check(&m, "collatz", &lanes, &[], &[]);
    let lanes: Vec<Vec<u32>> = (0..13).map(|l| vec![f(l as f32 * 1.7 - 3.0)]).collect();
    check(&m, "uniform_trip", &lanes, &[], &[]);
}

#[test]
fn nested_loops_with_ifs() {
    let mut m = Module::default();
    // for i in 0..n { for j in 0..i { if (i + j) % 3 == 0 { acc += j } else { acc ^= i } }
    //                 if acc > 50 { break } }
    func(&mut m, "nest", &[Ty::I32, Ty::I32], |b, p| {
        let zero = b.i32(0);
        let out = b.loop_(vec![zero, p[1]], |b, c| {
            let (i, acc) = (c[0], c[1]);
            let inner = b.loop_(vec![zero, acc], |b, d| {
                let (j, acc) = (d[0], d[1]);
                let run = b.cmp(CmpOp::Lt, j, i);
                let acc = b.if_(
                    run,
                    |b| {
                        let s = b.add(i, j);
                        let three = b.i32(3);
                        let r = b.binary(BinaryOp::Rem, s, three);
                        let z = b.cmp(CmpOp::Eq, r, zero);
                        b.if_(z, |b| vec![b.add(acc, j)], |b| vec![b.binary(BinaryOp::Xor, acc, i)])
                    },
                    |_| vec![acc],
                );
                let one = b.i32(1);
                let j1 = b.add(j, one);
                let more = b.cmp(CmpOp::Lt, j1, i);
                (more, vec![j1, acc[0]])
            });
            let acc = inner[1];
            let one = b.i32(1);
            let i1 = b.add(i, one);
            let lim = b.i32(50);
            let small = b.cmp(CmpOp::Le, acc, lim);
            let more = b.cmp(CmpOp::Lt, i1, p[0]);
            let cont = b.binary(BinaryOp::And, more, small);
            (cont, vec![i1, acc])
        });
        vec![out[0], out[1]]
    });
    let lanes: Vec<Vec<u32>> = (0..45).map(|l| vec![(l % 11) as u32, (l - 20) as u32]).collect();
    check(&m, "nest", &lanes, &[], &[]);
}

#[test]
fn calls_with_multiple_results() {
    let mut m = Module::default();
    let divmod = func(&mut m, "divmod", &[Ty::I32, Ty::I32], |b, p| {
        let q = b.div(p[0], p[1]);
        let r = b.binary(BinaryOp::Rem, p[0], p[1]);
        let neg = b.cmp(CmpOp::Lt, r, p[1]);
        vec![q, r, neg]
    });
    let poly = func(&mut m, "poly", &[Ty::F32, Ty::Bool], |b, p| {
        let x2 = b.mul(p[0], p[0]);
        let c = b.f32(-0.16666667);
        let one = b.f32(1.0);
        let t = b.fma(x2, c, one);
        let s = b.mul(t, p[0]);
        let neg = b.unary(UnaryOp::Neg, s);
        let r = b.select(p[1], neg, s);
        vec![r, x2]
    });
    // Calls at the top level, in a divergent if, in a loop, and through another function.
    let mid = func(&mut m, "mid", &[Ty::F32, Ty::I32], |b, p| {
        let zero = b.i32(0);
        let c = b.cmp(CmpOp::Gt, p[1], zero);
        let y = b.call(poly, vec![p[0], c]);
        vec![y[1], y[0]]
    });
    func(&mut m, "top", &[Ty::F32, Ty::I32], |b, p| {
        let seven = b.i32(7);
        let dm = b.call(divmod, vec![p[1], seven]);
        let zero = b.i32(0);
        let c = b.cmp(CmpOp::Lt, dm[1], zero);
        let r = b.if_(
            c,
            |b| {
                let y = b.call(mid, vec![p[0], dm[0]]);
                vec![y[0], y[1]]
            },
            |b| {
                let z = busy(b, p[0], 13);
                vec![z, p[0]]
            },
        );
        let lp = b.loop_(vec![dm[0], r[0]], |b, c| {
            let y = b.call(poly, vec![c[1], dm[2]]);
            let one = b.i32(1);
            let n = b.sub(c[0], one);
            let more = b.cmp(CmpOp::Gt, n, zero);
            (more, vec![n, y[0]])
        });
        vec![dm[0], dm[1], dm[2], r[0], r[1], lp[0], lp[1]]
    });
    let lanes: Vec<Vec<u32>> = (0..35).map(|l| vec![f(l as f32 * 0.1 - 1.3), (l * 3 - 50) as u32]).collect();
    check(&m, "top", &lanes, &[], &[]);
    check(&m, "divmod", &[vec![7, 0], vec![i32::MIN as u32, -1i32 as u32], vec![-7i32 as u32, 2]], &[], &[]);
}

fn memory_module() -> Module {
    let mut m = Module {
        buffers: vec![
            BufferDecl { name: "src".into(), elem: Ty::F32 },
            BufferDecl { name: "dst".into(), elem: Ty::F32 },
            BufferDecl { name: "counts".into(), elem: Ty::I32 },
            BufferDecl { name: "sums".into(), elem: Ty::F32 },
            BufferDecl { name: "flags".into(), elem: Ty::Bool },
            BufferDecl { name: "words".into(), elem: Ty::U32 },
            BufferDecl { name: "totals".into(), elem: Ty::F32 },
        ],
        ..Module::default()
    };
    // Lane `i` (u32, distinct per lane; some out of range) loads src[i * 3 % 50] and
    // src[i] (may be out of range), stores to dst[i] (dropped when out of range) under a
    // divergent condition, adds 1 to counts[i % 4] and 2.0 to sums[i % 3] (exact, so the
    // order of lanes does not matter), adds inexact values to totals[0], [1] and [2] from all
    // lanes, from a divergent subset and from the lanes whose index is in range (one add per
    // element, so the interpreter's order is the lane order too; a private add to one element
    // sums in lane order, which the bits show) and i to counts[0], and stores/loads bools and
    // u32s.
    func(&mut m, "memory", &[Ty::U32, Ty::F32], |b, p| {
        let i = p[0];
        let three = b.u32(3);
        let fifty = b.u32(50);
        let k = b.mul(i, three);
        let k = b.binary(BinaryOp::Rem, k, fifty);
        let a = b.load(0, k);
        let c = b.load(0, i);
        let zero = b.f32(0.0);
        let pos = b.cmp(CmpOp::Gt, p[1], zero);
        let big = b.busy_sum(a, c);
        b.if_(
            pos,
            |b| {
                b.store(1, i, big);
                vec![]
            },
            |_| vec![],
        );
        let four = b.u32(4);
        let ci = b.binary(BinaryOp::Rem, i, four);
        let one = b.i32(1);
        b.atomic_add(2, ci, one);
        let si = b.binary(BinaryOp::Rem, i, three);
        let two = b.f32(2.0);
        b.atomic_add(3, si, two);
        // Out-of-range atomic adds are dropped.
        let far = b.u32(1000);
        let fi = b.add(i, far);
        b.atomic_add(3, fi, two);
        b.atomic_add(2, fi, one);
        let first = b.u32(0);
        let tenth = b.f32(0.1);
        let inexact = b.mul(p[1], tenth);
        b.atomic_add(6, first, inexact);
        let second = b.u32(1);
        b.if_(
            pos,
            |b| {
                b.atomic_add(6, second, inexact);
                vec![]
            },
            |_| vec![],
        );
        let thirty_one = b.u32(31);
        let low = b.cmp(CmpOp::Lt, i, thirty_one);
        let third = b.u32(2);
        let third_or_far = b.select(low, third, far);
        b.atomic_add(6, third_or_far, inexact);
        let signed = b.convert(Ty::I32, i);
        b.atomic_add(2, first, signed);
        b.store(4, i, pos);
        // Read flags where no lane writes (lanes must not read what other lanes write).
        let sixty = b.u32(60);
        let seven = b.u32(7);
        let thirty = b.u32(30);
        let k2 = b.mul(i, seven);
        let k2 = b.binary(BinaryOp::Rem, k2, thirty);
        let k2 = b.add(k2, sixty);
        let fl = b.load(4, k2);
        let w = b.load(5, k);
        let wi = b.binary(BinaryOp::Xor, w, i);
        let wi_idx = b.add(i, fifty);
        b.store(5, wi_idx, wi);
        // A uniform store (index and value the same in every lane).
        let ui = b.u32(49);
        let uv = b.f32(-1.0);
        b.store(1, ui, uv);
        vec![a, c, fl, w]
    });
    m
}

trait BusySum {
    fn busy_sum(&mut self, a: Value, c: Value) -> Value;
}

impl BusySum for Builder<'_> {
    fn busy_sum(&mut self, a: Value, c: Value) -> Value {
        let s = self.add(a, c);
        busy(self, s, 3)
    }
}

#[test]
fn loads_stores_and_atomics_out_of_range() {
    let m = memory_module();
    let src: Vec<u32> = (0..50).map(|i| f(i as f32 * 1.5 - 10.0)).collect();
    let words: Vec<u32> = (0..100).map(|i| i * 0x0101_0101).collect();
    let flags = (0..80).map(|i| (i % 3 == 0) as u32).collect();
    let buffers = vec![src, vec![0; 50], vec![0; 4], vec![0; 3], flags, words, vec![0; 3]];
    // Indices 0..60 and a few huge ones, different signs of the second argument.
    let mut lanes: Vec<Vec<u32>> =
        (0..60).map(|i| vec![i, f((i as f32 - 20.0) * (if i % 3 == 0 { -1.0 } else { 1.0 }))]).collect();
    lanes.push(vec![u32::MAX, f(1.0)]);
    lanes.push(vec![0x8000_0000, f(1.0)]);
    check(&m, "memory", &lanes, &buffers, &[]);
    // Empty buffers: every access is out of range.
    let empty = vec![vec![]; 7];
    check(&m, "memory", &lanes, &empty, &[]);
    // Buffers private to the call: the adds are plain loads and stores, in the same order.
    for buffers in [buffers, empty] {
        let want = common::interp(&m, "memory", &lanes, &buffers, &[]);
        for &mode in common::MODES {
            let (jit, reloaded) = common::compile_and_reload(&m, &Options::new(mode).private_buffers(true)).unwrap();
            for jit in [jit, reloaded] {
                let got = common::run_jit(&jit, "memory", &lanes, &buffers, &[]);
                common::compare(&m, "memory", mode, &lanes, &want, &got);
            }
        }
    }
}

/// Loads of a buffer that no function writes may move and merge (the backend marks them so);
/// loads of a buffer that the kernel also writes must see the writes. In a loop, a lane loads
/// the same element of each buffer every trip: the read-only one's load could leave the loop,
/// the written one's must not, since the lane adds to that element before reading it again.
#[test]
fn loads_move_only_in_buffers_that_no_one_writes() {
    let mut m = Module {
        buffers: vec![BufferDecl { name: "fixed".into(), elem: Ty::F32 }, BufferDecl { name: "running".into(), elem: Ty::F32 }],
        ..Module::default()
    };
    func(&mut m, "sums", &[Ty::U32, Ty::I32], |b, p| {
        let (lane, trips) = (p[0], p[1]);
        let zero = b.f32(0.0);
        let start = b.i32(0);
        let out = b.loop_(vec![start, zero, zero], |b, c| {
            let fixed = b.load(0, lane);
            let seen = b.load(1, lane);
            let sum_fixed = b.add(c[1], fixed);
            let sum_seen = b.add(c[2], seen);
            let bumped = b.add(seen, fixed);
            b.store(1, lane, bumped);
            let one = b.i32(1);
            let i = b.add(c[0], one);
            let more = b.cmp(CmpOp::Lt, i, trips);
            (more, vec![i, sum_fixed, sum_seen])
        });
        vec![out[1], out[2]]
    });
    // Lanes 0..40 (one element each; some past the buffers' 32 elements) with 1..6 trips.
    let lanes: Vec<Vec<u32>> = (0..40).map(|l| vec![l, 1 + l % 6]).collect();
    let fixed: Vec<u32> = (0..32).map(|i| f(0.5 + i as f32)).collect();
    let running: Vec<u32> = (0..32).map(|i| f(i as f32 * 0.25)).collect();
    check(&m, "sums", &lanes, &[fixed, running], &[]);
}

/// Local arrays under divergence: lanes write different elements (and one shared element)
/// under the masks of a varying `if` and of a loop whose trip count differs per lane, with
/// uniform, varying and out-of-range indices; every cell read back must be the lane's own.
#[test]
fn local_arrays_under_divergent_masks() {
    let mut m = Module::default();
    func(&mut m, "tape", &[Ty::U32, Ty::F32], |b, p| {
        let (lane, x) = (p[0], p[1]);
        let vals = b.func.add_local(Ty::F32, 8);
        let flags = b.func.add_local(Ty::Bool, 3);
        let counts = b.func.add_local(Ty::I32, 5);
        // Fill: a uniform index with a varying value (vals), uniform values (flags, counts).
        let zero = b.u32(0);
        b.loop_(vec![zero], |b, v| {
            let i = v[0];
            let fi = b.convert(Ty::F32, i);
            let xi = b.mul(x, fi);
            b.local_store(vals, i, xi);
            let no = b.bool(false);
            b.local_store(flags, i, no);
            let ii = b.convert(Ty::I32, i);
            let neg = b.unary(UnaryOp::Neg, ii);
            b.local_store(counts, i, neg);
            let one = b.u32(1);
            let next = b.add(i, one);
            let eight = b.u32(8);
            (b.cmp(CmpOp::Lt, next, eight), vec![next])
        });
        // A varying if: a third of the lanes write their own element (varying index), one
        // shared element (uniform index) and a flag (index 3 is out of range); the others
        // write counts[lane & 7] (5..7 out of range).
        let three = b.u32(3);
        let r = b.binary(BinaryOp::Rem, lane, three);
        let z = b.u32(0);
        let picked = b.cmp(CmpOp::Eq, r, z);
        b.if_(
            picked,
            |b| {
                let seven = b.u32(7);
                let own = b.binary(BinaryOp::And, lane, seven);
                let hundred = b.f32(100.0);
                let big = b.add(x, hundred);
                b.local_store(vals, own, big);
                let two = b.u32(2);
                let negx = b.unary(UnaryOp::Neg, x);
                b.local_store(vals, two, negx);
                let one = b.u32(1);
                let half = b.binary(BinaryOp::Shr, lane, one);
                let fi = b.binary(BinaryOp::And, half, three);
                let yes = b.bool(true);
                b.local_store(flags, fi, yes);
                vec![]
            },
            |b| {
                let seven = b.u32(7);
                let idx = b.binary(BinaryOp::And, lane, seven);
                let li = b.convert(Ty::I32, lane);
                b.local_store(counts, idx, li);
                vec![]
            },
        );
        // A loop of `lane & 3` iterations (at least one): counts[j] += 10 + j.
        let zero = b.u32(0);
        b.loop_(vec![zero], |b, v| {
            let j = v[0];
            let old = b.local_load(counts, j);
            let ten = b.i32(10);
            let ji = b.convert(Ty::I32, j);
            let inc = b.add(ten, ji);
            let new = b.add(old, inc);
            b.local_store(counts, j, new);
            let one = b.u32(1);
            let next = b.add(j, one);
            let three = b.u32(3);
            let n = b.binary(BinaryOp::And, lane, three);
            (b.cmp(CmpOp::Lt, next, n), vec![next])
        });
        // Read everything back: uniform indices (whole vectors), varying and out of range.
        let mut out = Vec::new();
        for i in 0..9 {
            let i = b.u32(i);
            out.push(b.local_load(vals, i));
        }
        for i in 0..4 {
            let i = b.u32(i);
            out.push(b.local_load(flags, i));
        }
        for i in 0..6 {
            let i = b.u32(i);
            out.push(b.local_load(counts, i));
        }
        let fifteen = b.u32(15);
        let own = b.binary(BinaryOp::And, lane, fifteen);
        out.push(b.local_load(vals, own));
        out.push(b.local_load(counts, lane));
        let four = b.u32(4);
        let fl = b.binary(BinaryOp::Rem, lane, four);
        out.push(b.local_load(flags, fl));
        out
    });
    verify_module(&m).unwrap();
    let lanes: Vec<Vec<u32>> = (0..19).map(|l| vec![l, f(l as f32 * 0.5 - 3.0)]).collect();
    check(&m, "tape", &lanes, &[], &[]);
    // The interpreter's answer for one lane, worked out by hand: lane 6 takes the `if`
    // (6 % 3 == 0), so vals[6] = x + 100, vals[2] = -x, flags[3] (out of range) is dropped;
    // its loop runs 6 & 3 = 2 iterations.
    let x = 0.0f32;
    let want = common::interp(&m, "tape", &[vec![6, f(x)]], &[], &[]).results.remove(0);
    let mut expected: Vec<u32> = (0..8).map(|i| f(x * i as f32)).collect();
    expected[6] = f(x + 100.0);
    expected[2] = f(-x);
    expected.push(0); // vals[8]
    expected.extend([0, 0, 0, 0]); // flags
    expected.extend([10, 10, (-2i32) as u32, (-3i32) as u32, (-4i32) as u32, 0]); // counts
    expected.extend([f(x + 100.0), 0, 0]);
    assert_eq!(want, expected);
}

#[test]
fn extern_calls_per_active_lane() {
    let mut m = Module {
        externs: vec![
            ExternDecl {
                name: "mix".into(),
                params: vec![Ty::U32, Ty::F32, Ty::Bool],
                results: vec![Ty::U32, Ty::F32, Ty::Bool],
            },
            ExternDecl { name: "count".into(), params: vec![Ty::I32], results: vec![] },
        ],
        ..Module::default()
    };
    func(&mut m, "ext", &[Ty::U32, Ty::F32], |b, p| {
        let t = b.bool(true);
        let r0 = b.call_extern(0, vec![p[0], p[1], t]);
        let ten = b.u32(10);
        let c = b.cmp(CmpOp::Lt, p[0], ten);
        let r1 = b.if_(
            c,
            |b| {
                let k = b.i32(1);
                b.call_extern(1, vec![k]);
                let r = b.call_extern(0, vec![r0[0], r0[1], r0[2]]);
                vec![r[0], r[1], r[2]]
            },
            |b| {
                let k = b.i32(100);
                b.call_extern(1, vec![k]);
                vec![p[0], p[1], c]
            },
        );
        // In a loop with per-lane trip counts.
        let zero = b.u32(0);
        let lp = b.loop_(vec![zero, r1[0]], |b, c| {
            let r = b.call_extern(0, vec![c[1], p[1], r1[2]]);
            let one = b.u32(1);
            let i1 = b.add(c[0], one);
            let seven = b.u32(7);
            let lim = b.binary(BinaryOp::Rem, p[0], seven);
            let more = b.cmp(CmpOp::Lt, i1, lim);
            (more, vec![i1, r[0]])
        });
        vec![r0[0], r0[1], r0[2], r1[0], r1[1], r1[2], lp[0], lp[1]]
    });
    let mix: Host = Arc::new(|a: &[u32]| {
        let x = a[0].wrapping_mul(2654435761).rotate_left(5) ^ a[2];
        let y = f32::from_bits(a[1]) * 0.5 + (a[0] % 13) as f32;
        vec![x, y.to_bits(), (x & 1 == 0) as u32]
    });
    let counter = Arc::new(AtomicU32::new(0));
    let c2 = counter.clone();
    let count: Host = Arc::new(move |a: &[u32]| {
        c2.fetch_add(a[0], Ordering::Relaxed);
        vec![]
    });
    let hosts = [("mix", mix), ("count", count)];
    let lanes: Vec<Vec<u32>> = (0..27).map(|l| vec![l * 3 % 20, f(l as f32 - 4.0)]).collect();
    let want = common::interp(&m, "ext", &lanes, &[], &hosts);
    let per_run = counter.swap(0, Ordering::Relaxed);
    for &mode in common::MODES {
        let got = common::jit(&m, mode, "ext", &lanes, &[], &hosts);
        common::compare(&m, "ext", mode, &lanes, &want, &got);
        // `common::jit` runs the fresh code and the code reloaded from bytes.
        assert_eq!(counter.swap(0, Ordering::Relaxed), 2 * per_run, "{mode:?}: extern called for inactive lanes");
    }
}

/// A group closure sees one call per lane group with the active lanes of the branch it is
/// called from, reads arguments and writes results by (index, lane), lane by lane
/// (`map_lanes`) or all lanes at once (`write_results`, columns of the group's width written in
/// place; the LLVM backend runs these cases at 16 lanes too), and gets the same answers as the
/// per-lane binding.
#[test]
fn group_externs_see_the_active_lanes_of_a_group() {
    let mut m = Module {
        externs: vec![ExternDecl {
            name: "affine".into(),
            params: vec![Ty::F32, Ty::I32, Ty::Bool],
            results: vec![Ty::F32, Ty::Bool],
        }],
        ..Module::default()
    };
    func(&mut m, "grouped", &[Ty::F32, Ty::I32], |b, p| {
        let zero = b.f32(0.0);
        let positive = b.cmp(CmpOp::Gt, p[0], zero);
        let r = b.if_(
            positive,
            |b| {
                let t = b.bool(true);
                let r = b.call_extern(0, vec![p[0], p[1], t]);
                vec![r[0], r[1]]
            },
            |b| {
                let f = b.bool(false);
                vec![p[0], f]
            },
        );
        vec![r[0], r[1]]
    });
    let affine = |x: u32, k: u32, flag: u32| -> [u32; 2] {
        [(f32::from_bits(x) * 2.0 + k as i32 as f32).to_bits(), (flag == 1 && k as i32 % 2 == 0) as u32]
    };
    let lanes: Vec<Vec<u32>> = (0..19).map(|l| vec![f(l as f32 * 0.5 - 3.0 + (l % 3) as f32), l * 5]).collect();
    let want = common::interp(
        &m,
        "grouped",
        &lanes,
        &[],
        &[("affine", Arc::new(move |a: &[u32]| affine(a[0], a[1], a[2]).to_vec()))],
    );
    #[derive(Clone, Copy, Debug)]
    enum Style {
        Indexed,
        ByLane,
        WholeGroup,
    }
    let styles = [Style::Indexed, Style::ByLane, Style::WholeGroup];
    for (mode, style) in common::MODES.iter().copied().flat_map(|mode| styles.map(|s| (mode, s))) {
        let jit = common::compile_jit(&m, &Options::new(mode)).unwrap();
        let k = jit.function("grouped").unwrap();
        let calls = Arc::new(AtomicU32::new(0));
        let lanes_run = Arc::new(AtomicU32::new(0));
        let mut ext = jit.externs();
        let (c, r) = (calls.clone(), lanes_run.clone());
        ext.bind_group("affine", move |g| {
            c.fetch_add(1, Ordering::Relaxed);
            match style {
                Style::ByLane => {
                    return g.map_lanes(|[x, k, flag]| {
                        r.fetch_add(1, Ordering::Relaxed);
                        affine(x, k, flag)
                    })
                }
                Style::WholeGroup => {
                    r.fetch_add(g.active().count_ones(), Ordering::Relaxed);
                    return match g.lanes() {
                        1 => whole_group::<1>(g, affine),
                        4 => whole_group::<4>(g, affine),
                        8 => whole_group::<8>(g, affine),
                        16 => whole_group::<16>(g, affine),
                        lanes => panic!("a group of {lanes} lanes"),
                    };
                }
                Style::Indexed => {}
            }
            for lane in g.active_lanes() {
                r.fetch_add(1, Ordering::Relaxed);
                let [x, flag] = affine(g.arg(0, lane), g.arg(1, lane), g.arg(2, lane));
                g.set(0, lane, x);
                g.set(1, lane, flag);
            }
        })
        .unwrap();
        let n = lanes.len();
        let args: Vec<u32> = (0..2).flat_map(|p| lanes.iter().map(move |l| l[p])).collect();
        let mut results = vec![0u32; 2 * n];
        k.call_batch(n, &args, &mut results, &[], &ext).unwrap();
        for (l, w) in want.results.iter().enumerate() {
            assert_eq!([results[l], results[n + l]], [w[0], w[1]], "{mode:?} {style:?} lane {l}");
        }
        let positive = lanes.iter().filter(|l| f32::from_bits(l[0]) > 0.0).count() as u32;
        assert_eq!(lanes_run.load(Ordering::Relaxed), positive, "{mode:?} {style:?}: lanes run");
        let groups = calls.load(Ordering::Relaxed) as usize;
        assert!(groups <= n.div_ceil(mode.count()), "{mode:?} {style:?}: {groups} calls for {n} lanes");
    }
}

/// `f` of every lane of a group of `L` lanes, inactive ones included, written with
/// `write_results`.
fn whole_group<const L: usize>(g: &mut LaneGroup, f: impl Fn(u32, u32, u32) -> [u32; 2]) {
    let [x, k, flag]: [[u32; L]; 3] = [0, 1, 2].map(|p| g.arg_lanes(p).try_into().unwrap());
    g.write_results(|columns: &mut [[u32; L]; 2]| {
        for l in 0..L {
            [columns[0][l], columns[1][l]] = f(x[l], k[l], flag[l]);
        }
    });
}

#[test]
fn masked_calls_have_no_side_effects_in_inactive_lanes() {
    let m = memory_module();
    for mode in [Lanes::X4, Lanes::X8] {
        let jit = common::compile_jit(&m, &Options::new(mode)).unwrap();
        let k = jit.function("memory").unwrap();
        let w = mode.count();
        let mut args = vec![0u32; 2 * w];
        for l in 0..w {
            args[l] = l as u32;
            args[w + l] = f(1.0);
        }
        let mut results = vec![0u32; 4 * w];
        let mut bufs: Vec<Vec<u32>> =
            vec![vec![0; 50], vec![0; 50], vec![0; 4], vec![0; 3], vec![0; 80], vec![0; 100], vec![0; 3]];
        let active = 0b0101;
        {
            let views: Vec<Buffer> = bufs.iter_mut().map(|b| Buffer::from_mut(b)).collect();
            k.call_masked(active, &args, &mut results, &views, &jit.externs()).unwrap();
        }
        // counts[i % 4] got 1 for lanes 0 and 2 only, and counts[0] their indices, 0 and 2.
        assert_eq!(bufs[2], vec![3, 0, 1, 0], "{mode:?}");
        assert_eq!(bufs[4][..4], [1, 0, 1, 0], "{mode:?}");
        assert!(k.call_masked(1 << w, &args, &mut results, &[], &jit.externs()).is_err());
    }
}

#[test]
fn uniform_parameters() {
    let mut m = Module::default();
    func(&mut m, "scale", &[Ty::F32, Ty::I32, Ty::F32], |b, p| {
        // `p0` and `p1` are declared uniform: a uniform loop and branch on them.
        let zero = b.i32(0);
        let out = b.loop_(vec![zero, p[2]], |b, c| {
            let x = b.mul(c[1], p[0]);
            let one = b.i32(1);
            let i1 = b.add(c[0], one);
            let more = b.cmp(CmpOp::Lt, i1, p[1]);
            (more, vec![i1, x])
        });
        let c = b.cmp(CmpOp::Gt, p[0], out[1]);
        let r = b.if_(c, |b| vec![b.unary(UnaryOp::Floor, out[1])], |b| vec![b.unary(UnaryOp::Ceil, out[1])]);
        vec![out[0], r[0]]
    });
    let lanes: Vec<Vec<u32>> = (0..21).map(|l| vec![f(1.25), 5, f(l as f32 * 0.3 - 2.0)]).collect();
    let want = common::interp(&m, "scale", &lanes, &[], &[]);
    for &mode in common::MODES {
        let jit = common::compile_jit(&m, &Options::new(mode).uniform("scale", vec![true, true])).unwrap();
        let got = common::run_jit(&jit, "scale", &lanes, &[], &[]);
        common::compare(&m, "scale", mode, &lanes, &want, &got);
    }
    assert!(matches!(
        common::compile_jit(&m, &Options::new(Lanes::X4).uniform("nope", vec![true])),
        Err(Error::BadOptions(_))
    ));
    assert!(matches!(
        common::compile_jit(&m, &Options::new(Lanes::X4).uniform("scale", vec![true; 4])),
        Err(Error::BadOptions(_))
    ));
}

#[test]
fn errors_are_values() {
    // An unexpanded Math op.
    let mut m = Module::default();
    func(&mut m, "sin", &[Ty::F32], |b, p| vec![b.math(MathOp::Sin, vec![p[0]])]);
    let e = common::compile_jit(&m, &Options::new(Lanes::X4)).err().expect("rejected");
    assert!(matches!(&e, Error::Unsupported { function, .. } if function == "sin"), "{e}");
    assert!(e.to_string().contains("sin"));

    // Recursion (valid IR, which the interpreter runs with a depth limit).
    let mut m = Module::default();
    let mut r = Function::new("rec");
    let x = r.add_param("x", Ty::I32);
    r.result_types = vec![Ty::I32];
    let sigs = Signatures { functions: vec![vec![Ty::I32]], ..Default::default() };
    let mut b = Builder::new(&mut r, &sigs);
    let y = b.call(FuncId(0), vec![x]);
    b.finish(y);
    m.add_function(r);
    verify_module(&m).unwrap();
    assert!(
        matches!(common::compile_jit(&m, &Options::new(Lanes::X1)), Err(Error::Unsupported { function, .. }) if function == "rec")
    );

    // Invalid IR.
    let mut m = Module::default();
    let mut bad = Function::new("bad");
    let x = bad.add_param("x", Ty::F32);
    bad.result_types = vec![Ty::I32];
    bad.body.yields = vec![x];
    m.add_function(bad);
    assert!(matches!(common::compile_jit(&m, &Options::new(Lanes::X1)), Err(Error::Verify(_))));

    // Call errors.
    let mut m = Module {
        externs: vec![ExternDecl { name: "host".into(), params: vec![Ty::F32], results: vec![Ty::F32] }],
        ..Module::default()
    };
    func(&mut m, "id", &[Ty::F32], |b, p| b.call_extern(0, vec![p[0]]));
    let jit = common::compile_jit(&m, &Options::new(Lanes::X4)).unwrap();
    assert!(matches!(jit.function("nope"), Err(Error::UnknownFunction(_))));
    let k = jit.function("id").unwrap();
    let mut out = [0u32; 4];
    let ext = jit.externs();
    assert!(matches!(k.call(&[0; 3], &mut out, &[], &ext), Err(Error::Arity { .. })));
    assert!(matches!(k.call(&[0; 4], &mut out, &[], &ext), Err(Error::UnboundExtern(n)) if n == "host"));
    assert!(matches!(k.call(&[0; 4], &mut out, &[], &Default::default()), Err(Error::ExternMismatch)));
    let mut ext = jit.externs();
    assert!(matches!(ext.bind("other", |_, _| {}), Err(Error::UnknownExtern(_))));
    ext.bind("host", |a, r| {
        if a[0] == 7 {
            panic!("boom");
        }
        r[0] = a[0] + 1;
    })
    .unwrap();
    k.call(&[1, 2, 3, 4], &mut out, &[], &ext).unwrap();
    assert_eq!(out, [2, 3, 4, 5]);
    assert!(matches!(k.call(&[1, 7, 3, 4], &mut out, &[], &ext), Err(Error::ExternPanicked(n)) if n == "host"));
    // The thread's error state is reset by the next call.
    k.call(&[1, 2, 3, 4], &mut out, &[], &ext).unwrap();
    // A group closure that writes more results than the extern has.
    let mut ext = jit.externs();
    ext.bind_group("host", |g| g.map_lanes(|[x]| [x, 0])).unwrap();
    assert!(matches!(k.call(&[1, 2, 3, 4], &mut out, &[], &ext), Err(Error::ExternPanicked(n)) if n == "host"));
    // One that writes columns of another width, or more columns than the extern has results.
    let mut ext = jit.externs();
    ext.bind_group("host", |g| g.write_results(|_: &mut [[u32; 8]; 1]| {})).unwrap();
    assert!(matches!(k.call(&[1, 2, 3, 4], &mut out, &[], &ext), Err(Error::ExternPanicked(n)) if n == "host"));
    let mut ext = jit.externs();
    ext.bind_group("host", |g| g.write_results(|_: &mut [[u32; 4]; 2]| {})).unwrap();
    assert!(matches!(k.call(&[1, 2, 3, 4], &mut out, &[], &ext), Err(Error::ExternPanicked(n)) if n == "host"));
}

#[test]
fn atomics_from_many_threads() {
    let mut m = Module {
        buffers: vec![BufferDecl { name: "f".into(), elem: Ty::F32 }, BufferDecl { name: "i".into(), elem: Ty::I32 }],
        ..Module::default()
    };
    func(&mut m, "add", &[Ty::U32], |b, p| {
        let four = b.u32(4);
        let i = b.binary(BinaryOp::Rem, p[0], four);
        let one = b.f32(1.0);
        b.atomic_add(0, i, one);
        let k = b.i32(3);
        b.atomic_add(1, i, k);
        vec![]
    });
    for &mode in common::MODES {
        let jit = common::compile_jit(&m, &Options::new(mode)).unwrap();
        let k = jit.function("add").unwrap();
        let fs: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let is: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let ext = jit.externs();
        let n = 4096;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let args: Vec<u32> = (0..n as u32).collect();
                    let bufs = [Buffer::new(&fs), Buffer::new(&is)];
                    for _ in 0..4 {
                        k.call_batch(n, &args, &mut [], &bufs, &ext).unwrap();
                    }
                });
            }
        });
        let per = (4 * 4 * n / 4) as u32;
        for e in &fs {
            assert_eq!(f32::from_bits(e.load(Ordering::Relaxed)), per as f32, "{mode:?}");
        }
        for e in &is {
            assert_eq!(e.load(Ordering::Relaxed), per * 3, "{mode:?}");
        }
    }
}

/// Local arrays larger than a page work (the frame is probed as it grows), and a function
/// whose arrays would take more than `MAX_LOCAL_BYTES` of stack is an error, not a crash.
#[test]
fn large_local_arrays() {
    let array_fn = |len: u32| {
        let mut m = Module::default();
        func(&mut m, "sum", &[Ty::U32, Ty::F32], |b, p| {
            let a = b.func.add_local(Ty::F32, len);
            let zero = b.u32(0);
            b.loop_(vec![zero], |b, v| {
                let fi = b.convert(Ty::F32, v[0]);
                let x = b.mul(p[1], fi);
                b.local_store(a, v[0], x);
                let one = b.u32(1);
                let next = b.add(v[0], one);
                let end = b.u32(len);
                (b.cmp(CmpOp::Lt, next, end), vec![next])
            });
            // Sum every 97th element from a lane-dependent start (varying indices).
            let seven = b.u32(7);
            let start = b.binary(BinaryOp::And, p[0], seven);
            let f0 = b.f32(0.0);
            let r = b.loop_(vec![start, f0], |b, v| {
                let x = b.local_load(a, v[0]);
                let s = b.add(v[1], x);
                let step = b.u32(97);
                let next = b.add(v[0], step);
                let end = b.u32(len);
                (b.cmp(CmpOp::Lt, next, end), vec![next, s])
            });
            vec![r[1]]
        });
        m
    };
    let m = array_fn(4096);
    let lanes: Vec<Vec<u32>> = (0..13).map(|l| vec![l, f(l as f32 * 0.25 - 1.0)]).collect();
    check(&m, "sum", &lanes, &[], &[]);

    let limit = drs_cranelift::MAX_LOCAL_BYTES as u32;
    let m = array_fn(limit / 4 / 8 + 1);
    assert!(common::compile_jit(&m, &Options::new(Lanes::X1)).is_ok());
    match common::compile_jit(&m, &Options::new(Lanes::X8)) {
        Err(Error::Unsupported { function, message }) => {
            assert_eq!(function, "sum");
            assert!(message.contains("local arrays"), "{message}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("an oversized local array compiled"),
    }
}

#[test]
fn only_named_entries_are_callable() {
    let mut m = Module::default();
    let inner = func(&mut m, "inner", &[Ty::F32], |b, p| {
        let z = busy(b, p[0], 5);
        vec![z]
    });
    func(&mut m, "outer", &[Ty::F32], |b, p| {
        let y = b.call(inner, vec![p[0]]);
        let two = b.f32(2.0);
        vec![b.mul(y[0], two)]
    });
    let lanes: Vec<Vec<u32>> = (0..9).map(|l| vec![f(l as f32 * 0.4 - 1.5)]).collect();
    for &mode in common::MODES {
        let all = common::compile_jit(&m, &Options::new(mode)).unwrap();
        let options = Options::new(mode).entry("outer");
        let one = common::compile_jit(&m, &options).unwrap();
        // The same code runs; the callee alone is not callable from the host.
        let want = common::run_jit(&all, "outer", &lanes, &[], &[]);
        assert_eq!(common::run_jit(&one, "outer", &lanes, &[], &[]), want, "{mode:?}");
        assert!(matches!(one.function("inner"), Err(Error::UnknownFunction(_))));
        assert!(matches!(one.function_by_id(inner), Err(Error::UnknownFunction(_))));
        assert!(all.function("inner").is_ok());
        // Without the callee's entry wrapper, the code is smaller.
        let sizes = [Options::new(mode), options].map(|o| common::compile_native(&m, &o).unwrap().code_size());
        assert!(sizes[1] < sizes[0], "{mode:?}: {sizes:?}");
    }
    assert!(matches!(
        common::compile_jit(&m, &Options::new(Lanes::X4).entry("nope")),
        Err(Error::BadOptions(m)) if m.contains("nope")
    ));
}
