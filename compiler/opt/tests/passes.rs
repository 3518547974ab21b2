//! Each pass on small IR functions, before and after (insta snapshots of `print_function`).

use drs_ir::*;
use drs_opt::*;

/// Builds a one-function module with params of the given types.
fn module(params: &[Ty], results: &[Ty], body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>) -> Module {
    let mut m = Module::default();
    m.functions.push(function("f", params, results, &Signatures::default(), body));
    verify_module(&m).unwrap();
    m
}

fn function(
    name: &str,
    params: &[Ty],
    results: &[Ty],
    sigs: &Signatures,
    body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>,
) -> Function {
    let mut f = Function::new(name);
    let ps: Vec<Value> = params.iter().enumerate().map(|(i, &t)| f.add_param(format!("p{i}"), t)).collect();
    f.result_types = results.to_vec();
    let mut b = Builder::new(&mut f, sigs);
    let r = body(&mut b, &ps);
    b.finish(r);
    f
}

/// Runs `pass` and returns "before", "after" as one text; checks that the result verifies.
fn before_after(mut m: Module, pass: impl FnOnce(&mut Module)) -> String {
    let before = print_module(&m);
    pass(&mut m);
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{}", print_module(&m)));
    format!("{before}\n=== after ===\n\n{}", print_module(&m))
}

/// Folding then DCE, so that the folded-away instructions disappear from the snapshot.
fn fold_dce(m: &mut Module) {
    fold_constants(m);
    dce(m);
}

#[test]
fn fold_float_identities() {
    use BinaryOp::*;
    let m = module(&[Ty::F32, Ty::F32, Ty::F32], &[Ty::F32; 14], |b, p| {
        let (x, y, z) = (p[0], p[1], p[2]);
        let one = b.f32(1.0);
        let two = b.f32(2.0);
        let m1 = b.f32(-1.0);
        let pz = b.f32(0.0);
        let nz = b.f32(-0.0);
        vec![
            b.binary(Mul, x, one), // x
            b.binary(Div, x, one), // x
            b.binary(Mul, two, x), // x + x
            b.binary(Mul, x, m1),  // -x
            b.binary(Add, x, nz),  // x
            b.binary(Add, x, pz),  // kept: -0 + 0 = +0
            b.binary(Sub, x, pz),  // x
            b.binary(Mul, x, pz),  // kept: NaN, inf, -0
            b.fma(x, y, nz),       // x * y
            b.fma(x, y, pz),       // kept: x*y = -0 gives +0
            b.fma(one, y, z),      // y + z
            {
                let n = b.unary(UnaryOp::Neg, x);
                b.unary(UnaryOp::Neg, n) // x
            },
            {
                let n = b.unary(UnaryOp::Neg, x);
                b.binary(Sub, y, n) // y + x
            },
            {
                let t = b.f32(2.0);
                let s = b.f32(3.0);
                let a = b.add(t, s);
                let r = b.unary(UnaryOp::Sqrt, a);
                b.fma(r, r, one) // constant
            },
        ]
    });
    insta::assert_snapshot!(before_after(m, fold_dce));
}

#[test]
fn fold_integer_and_bool_identities() {
    use BinaryOp::*;
    let m = module(
        &[Ty::I32, Ty::U32, Ty::Bool, Ty::Bool],
        &[Ty::I32, Ty::I32, Ty::I32, Ty::U32, Ty::U32, Ty::Bool, Ty::Bool, Ty::Bool, Ty::Bool, Ty::I32],
        |b, p| {
            let (i, u, c, d) = (p[0], p[1], p[2], p[3]);
            let zero = b.i32(0);
            let one = b.i32(1);
            let uz = b.u32(32);
            let t = b.bool(true);
            let fl = b.bool(false);
            let seven = b.i32(7);
            let five = b.i32(-5);
            vec![
                b.binary(Add, zero, i),
                b.binary(Mul, i, one),
                b.binary(Sub, i, i),
                b.binary(Shl, u, uz),
                b.binary(Xor, u, u),
                b.binary(And, c, t),
                b.binary(Or, c, t),
                {
                    let lt = b.cmp(CmpOp::Lt, i, seven);
                    b.unary(UnaryOp::Not, lt) // i >= 7
                },
                b.select(d, t, fl), // d
                {
                    let q = b.binary(Div, seven, five);
                    b.binary(Rem, q, zero) // constant
                },
            ]
        },
    );
    insta::assert_snapshot!(before_after(m, fold_dce));
}

#[test]
fn fold_control_flow() {
    let m = module(&[Ty::F32, Ty::I32], &[Ty::F32, Ty::F32, Ty::I32, Ty::F32], |b, p| {
        let (x, n) = (p[0], p[1]);
        let t = b.bool(true);
        // if true { x * 2 } else { x }  →  x + x
        let a = b.if_(
            t,
            |b| {
                let two = b.f32(2.0);
                vec![b.mul(x, two)]
            },
            |_| vec![x],
        )[0];
        // if (n < 3) { x } else { x }  →  x
        let three = b.i32(3);
        let c = b.cmp(CmpOp::Lt, n, three);
        let same = b.if_(c, |_| vec![x], |_| vec![x])[0];
        // a loop whose continue flag is false runs once: i + 1
        let zero = b.i32(0);
        let once = b.loop_(vec![n, zero], |b, v| {
            let one = b.i32(1);
            let i1 = b.add(v[0], one);
            let f = b.bool(false);
            (f, vec![i1, v[1]])
        })[0];
        // a carried value yielded back unchanged is its initial value
        let inv = b.loop_(vec![zero, x], |b, v| {
            let one = b.i32(1);
            let i1 = b.add(v[0], one);
            let more = b.cmp(CmpOp::Lt, i1, n);
            (more, vec![i1, v[1]])
        })[1];
        vec![a, same, once, inv]
    });
    insta::assert_snapshot!(before_after(m, fold_dce));
}

#[test]
fn gvn_over_regions() {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "params".into(), elem: Ty::F32 });
    m.buffers.push(BufferDecl { name: "grads".into(), elem: Ty::F32 });
    let sigs = Signatures::of(&m);
    let f =
        function("f", &[Ty::F32, Ty::F32, Ty::Bool, Ty::U32], &[Ty::F32, Ty::F32, Ty::F32, Ty::F32], &sigs, |b, p| {
            let (x, y, c, i) = (p[0], p[1], p[2], p[3]);
            let s1 = b.add(x, y);
            let s2 = b.add(y, x); // commutative: merged
            let m1 = b.binary(BinaryOp::Min, x, y);
            let m2 = b.binary(BinaryOp::Min, y, x); // f32 min is not commutative: kept
            let l1 = b.load(0, i);
            let l2 = b.load(0, i); // read-only buffer: merged
            let g1 = b.load(1, i);
            b.atomic_add(1, i, x);
            let g2 = b.load(1, i); // written buffer: kept
            let r = b.if_(
                c,
                |b| {
                    let s3 = b.add(x, y); // visible from the enclosing region: merged
                    let k = b.f32(2.0);
                    let p1 = b.mul(s3, k);
                    vec![p1]
                },
                |b| {
                    let k = b.f32(2.0); // the then-region's constant is not visible here: kept
                    let p2 = b.mul(s2, k);
                    vec![p2]
                },
            )[0];
            let t1 = b.add(s1, s2);
            let t2 = b.add(m1, m2);
            let t3 = b.add(l1, l2);
            let t4 = b.add(g1, g2);
            let a = b.add(t1, r);
            vec![a, t2, t3, t4]
        });
    m.functions.push(f);
    verify_module(&m).unwrap();
    insta::assert_snapshot!(before_after(m, gvn));
}

#[test]
fn dce_of_results_and_carried_values() {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "out".into(), elem: Ty::I32 });
    let sigs = Signatures::of(&m);
    let f = function("f", &[Ty::I32, Ty::F32, Ty::Bool], &[Ty::I32], &sigs, |b, p| {
        let (n, x, c) = (p[0], p[1], p[2]);
        let _unused = b.mul(x, x);
        let r = b.if_(
            c,
            |b| {
                let one = b.i32(1);
                let a = b.add(n, one);
                let dead = b.add(x, x);
                vec![a, dead]
            },
            |_| vec![n, x],
        );
        let zero = b.i32(0);
        let fz = b.f32(0.0);
        // carried: i (feeds the continue flag), acc (result), junk (unused), k (feeds a store)
        let out = b.loop_(vec![zero, zero, fz, zero], |b, v| {
            let one = b.i32(1);
            let i1 = b.add(v[0], one);
            let acc = b.add(v[1], v[0]);
            let junk = b.add(v[2], x);
            let k1 = b.add(v[3], one);
            let z = b.u32(0);
            b.store(0, z, k1);
            let more = b.cmp(CmpOp::Lt, i1, r[0]);
            (more, vec![i1, acc, junk, k1])
        });
        vec![out[1]]
    });
    m.functions.push(f);
    verify_module(&m).unwrap();
    insta::assert_snapshot!(before_after(m, dce));
}

fn call_module() -> Module {
    let mut m = Module::default();
    let sigs = Signatures::default();
    // lerp(a, b, t) = fma(b - a, t, a): small
    m.functions.push(function("lerp", &[Ty::F32; 3], &[Ty::F32], &sigs, |b, p| {
        let d = b.sub(p[1], p[0]);
        vec![b.fma(d, p[2], p[0])]
    }));
    // a bigger function: a polynomial with a loop
    m.functions.push(function("poly", &[Ty::F32], &[Ty::F32], &sigs, |b, p| {
        let zero = b.i32(0);
        let one = b.f32(1.0);
        let r = b.loop_(vec![zero, one], |b, v| {
            let k = b.i32(1);
            let i1 = b.add(v[0], k);
            let mut acc = v[1];
            for c in [0.5f32, 0.25, 0.125, 0.0625, 0.03125] {
                let cc = b.f32(c);
                acc = b.fma(acc, p[0], cc);
            }
            let n = b.i32(4);
            let more = b.cmp(CmpOp::Lt, i1, n);
            (more, vec![i1, acc])
        });
        vec![r[1]]
    }));
    let sigs = Signatures::of(&m);
    m.functions.push(function("main", &[Ty::F32; 3], &[Ty::F32], &sigs, |b, p| {
        let l = b.call(FuncId(0), vec![p[0], p[1], p[2]])[0];
        let q = b.call(FuncId(1), vec![l])[0];
        vec![q]
    }));
    verify_module(&m).unwrap();
    m
}

#[test]
fn inline_small_callees() {
    let opts = InlineOptions { threshold: 10, always_below: 4, max_caller: 1000, ..InlineOptions::DEFAULT };
    insta::assert_snapshot!(before_after(call_module(), |m| inline_calls(m, &opts)));
}

#[test]
fn inline_everything() {
    insta::assert_snapshot!(before_after(call_module(), |m| inline_calls(m, &InlineOptions::FULL)));
}

#[test]
fn optimize_pipeline() {
    let m = module(&[Ty::F32, Ty::I32], &[Ty::F32], |b, p| {
        let (x, n) = (p[0], p[1]);
        let one = b.f32(1.0);
        let a = b.mul(x, one);
        let s1 = b.add(a, x);
        let s2 = b.add(x, x);
        let zero = b.i32(0);
        let r = b.loop_(vec![zero, s1, s2], |b, v| {
            let k = b.i32(1);
            let i1 = b.add(v[0], k);
            let t = b.add(v[1], v[2]);
            let u = b.add(s1, s2); // loop invariant, same as outside
            let more = b.cmp(CmpOp::Lt, i1, n);
            (more, vec![i1, t, u])
        });
        vec![r[1]]
    });
    insta::assert_snapshot!(before_after(m, |m| optimize(m, OptLevel::Default)));
}

#[test]
fn uniformity() {
    let mut m = Module::default();
    m.externs.push(ExternDecl { name: "rand".into(), params: vec![], results: vec![Ty::F32] });
    m.buffers.push(BufferDecl { name: "tex".into(), elem: Ty::F32 });
    let sigs = Signatures::of(&m);
    // params: u (uniform f32), v (varying f32), n (uniform i32), i (uniform u32)
    let f = function(
        "f",
        &[Ty::F32, Ty::F32, Ty::I32, Ty::U32],
        &[Ty::F32, Ty::F32, Ty::F32, Ty::I32, Ty::I32],
        &sigs,
        |b, p| {
            let (u, v, n, i) = (p[0], p[1], p[2], p[3]);
            let uu = b.mul(u, u);
            let uv = b.add(u, v);
            let tex = b.load(0, i);
            let r = b.call_extern(0, vec![])[0];
            let cu = b.cmp(CmpOp::Lt, uu, tex); // uniform condition
            let cv = b.cmp(CmpOp::Lt, uv, r); // varying condition
            let a = b.if_(cu, |b| vec![b.add(uu, tex)], |_| vec![u])[0];
            let c = b.if_(cv, |b| vec![b.mul(u, u)], |_| vec![u])[0];
            let zero = b.i32(0);
            // uniform trip count: carried values uniform, results uniform
            let l1 = b.loop_(vec![zero], |b, s| {
                let one = b.i32(1);
                let i1 = b.add(s[0], one);
                (b.cmp(CmpOp::Lt, i1, n), vec![i1])
            })[0];
            // varying exit: the counter is uniform in the body, its result is varying
            let l2 = b.loop_(vec![zero], |b, s| {
                let one = b.i32(1);
                let i1 = b.add(s[0], one);
                let f = b.convert(Ty::F32, i1);
                (b.cmp(CmpOp::Lt, f, v), vec![i1])
            })[0];
            vec![a, c, r, l1, l2]
        },
    );
    m.functions.push(f);
    verify_module(&m).unwrap();
    let flags = uniform_values(&m, FuncId(0), &[true, false, true, true]);
    let mut text = print_module(&m);
    text.push_str("\nuniform:");
    for (v, u) in flags.iter().enumerate() {
        if *u {
            text.push_str(&format!(" %{v}"));
        }
    }
    text.push_str("\nvarying:");
    for (v, u) in flags.iter().enumerate() {
        if !*u {
            text.push_str(&format!(" %{v}"));
        }
    }
    insta::assert_snapshot!(text);
}

#[test]
fn expand_math_calls_helpers() {
    let mut m = module(&[Ty::F32, Ty::F32], &[Ty::F32, Ty::F32, Ty::F32], |b, p| {
        let s = b.math(MathOp::Sin, vec![p[0]]);
        let c = b.math(MathOp::Sin, vec![p[1]]);
        let w = b.math(MathOp::Pow, vec![p[0], p[1]]);
        vec![s, c, w]
    });
    expand_math(&mut m);
    verify_module(&m).unwrap();
    let mut text = print_function(&m, &m.functions[0]);
    for f in &m.functions[1..] {
        text.push_str(&format!("{}: {} instructions\n", f.name, util::size(&f.body)));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn inline_respects_the_caller_cap() {
    let count_calls = |m: &Module| {
        let mut n = 0;
        util::walk_insts(&m.functions[2].body, &mut |i| n += matches!(i.op, Op::Call(..)) as usize);
        n
    };
    // main has 2 instructions, lerp 2, poly 18; both are under the threshold
    let mut m = call_module();
    inline_calls(&mut m, &InlineOptions { threshold: 100, always_below: 1, max_caller: 3, ..InlineOptions::DEFAULT });
    verify_module(&m).unwrap();
    assert_eq!(count_calls(&m), 2, "nothing fits the cap");
    let mut m = call_module();
    inline_calls(&mut m, &InlineOptions { threshold: 100, always_below: 2, max_caller: 3, ..InlineOptions::DEFAULT });
    assert_eq!(count_calls(&m), 1, "lerp is always inlined, poly does not fit");
    let mut m = call_module();
    inline_calls(&mut m, &InlineOptions { threshold: 100, always_below: 1, max_caller: 30, ..InlineOptions::DEFAULT });
    verify_module(&m).unwrap();
    assert_eq!(count_calls(&m), 0, "both fit: 2 + 2 + 18 <= 30");
}

#[test]
fn recursion_is_never_inlined() {
    let mut m = Module::default();
    m.functions.push(Function::new("f"));
    m.functions.push(Function::new("g"));
    for (i, other) in [(0usize, 1u32), (1, 0)] {
        let sigs = Signatures { functions: vec![vec![Ty::I32], vec![Ty::I32]], ..Default::default() };
        let f = function(if i == 0 { "f" } else { "g" }, &[Ty::I32], &[Ty::I32], &sigs, |b, p| {
            let r = b.call(FuncId(other), vec![p[0]])[0];
            vec![b.add(r, p[0])]
        });
        m.functions[i] = f;
    }
    verify_module(&m).unwrap();
    let before = m.clone();
    inline_calls(&mut m, &InlineOptions::FULL);
    assert_eq!(m, before);
}

/// A function that reads a buffer which the module writes is not merged across calls nor
/// hoisted out of a loop that writes the buffer.
#[test]
fn calls_that_read_written_buffers_stay_put() {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "b".into(), elem: Ty::F32 });
    let sigs = Signatures::of(&m);
    m.functions.push(function("get", &[Ty::U32], &[Ty::F32], &sigs, |b, p| vec![b.load(0, p[0])]));
    let sigs = Signatures::of(&m);
    m.functions.push(function("main", &[Ty::U32, Ty::F32, Ty::I32], &[Ty::F32, Ty::F32], &sigs, |b, p| {
        let a = b.call(FuncId(0), vec![p[0]])[0];
        b.store(0, p[0], p[1]);
        let c = b.call(FuncId(0), vec![p[0]])[0];
        let zero = b.i32(0);
        let f0 = b.f32(0.0);
        let l = b.loop_(vec![zero, f0], |b, v| {
            let x = b.call(FuncId(0), vec![p[0]])[0];
            let s = b.add(v[1], x);
            b.store(0, p[0], s);
            let one = b.i32(1);
            let i1 = b.add(v[0], one);
            (b.cmp(CmpOp::Lt, i1, p[2]), vec![i1, s])
        })[1];
        let r = b.add(a, c);
        vec![r, l]
    }));
    verify_module(&m).unwrap();
    let count = |m: &Module| {
        let mut n = 0;
        util::walk_insts(&m.functions[1].body, &mut |i| n += matches!(i.op, Op::Call(..)) as usize);
        n
    };
    let mut opt = m.clone();
    optimize(&mut opt, OptLevel::Basic);
    assert_eq!(count(&opt), 3);
    let mut interp = drs_interp::Interpreter::new(&m);
    let mut interp2 = drs_interp::Interpreter::new(&opt);
    for it in [&mut interp, &mut interp2] {
        it.buffers = vec![vec![1.0f32.to_bits(); 4]];
    }
    let args = [2, 5.0f32.to_bits(), 3];
    assert_eq!(interp.call(FuncId(1), &args).unwrap(), interp2.call(FuncId(1), &args).unwrap());
}

/// Loads of a local array are merged and hoisted only where no store to that array can come
/// between; another array's stores do not matter.
#[test]
fn local_loads_move_only_between_stores_to_other_arrays() {
    let m = module(&[Ty::U32, Ty::U32, Ty::F32, Ty::I32], &[Ty::F32; 4], |b, p| {
        let (i, j, x, n) = (p[0], p[1], p[2], p[3]);
        let a = b.func.add_local(Ty::F32, 4);
        let c = b.func.add_local(Ty::F32, 4);
        for k in 0..4 {
            let k = b.u32(k);
            b.local_store(a, k, x);
            b.local_store(c, k, x);
        }
        let a1 = b.local_load(a, i);
        let a2 = b.local_load(a, i); // merged with a1
        b.local_store(a, j, x);
        let a3 = b.local_load(a, i); // kept: a store to `a` came between
        let c1 = b.local_load(c, i);
        let zero = b.i32(0);
        let l = b.bounded_loop(vec![zero], Some(6), |b, v| {
            let la = b.local_load(a, j); // stays: the loop stores to `a`
            let lc = b.local_load(c, i); // hoisted (LICM), then merged with c1 (GVN)
            let s = b.add(la, lc);
            let k = b.convert(Ty::U32, v[0]);
            b.local_store(a, k, s);
            let one = b.i32(1);
            let next = b.add(v[0], one);
            (b.cmp(CmpOp::Lt, next, n), vec![next])
        });
        let _ = l;
        let a4 = b.local_load(a, i); // kept: the loop stored to `a`
        let c2 = b.local_load(c, i); // merged with c1
        let s1 = b.add(a1, a2);
        let s2 = b.add(c1, c2);
        vec![s1, a3, a4, s2]
    });
    let mut opt = m.clone();
    let text = before_after(m.clone(), |m| {
        licm(m);
        gvn(m);
    });
    insta::assert_snapshot!(text);
    licm(&mut opt);
    gvn(&mut opt);
    let mut count = 0;
    util::walk_insts(&opt.functions[0].body, &mut |i| count += matches!(i.op, Op::LocalLoad { .. }) as usize);
    assert_eq!(count, 5, "{}", print_module(&opt));
    for args in [[1, 2, 1.5f32.to_bits(), 3], [2, 2, (-4.0f32).to_bits(), 1], [0, 5, 0.25f32.to_bits(), 9]] {
        let want = drs_interp::Interpreter::new(&m).call(FuncId(0), &args).unwrap();
        assert_eq!(drs_interp::Interpreter::new(&opt).call(FuncId(0), &args).unwrap(), want);
    }
}

/// Every inlined call gets its own copy of the callee's arrays, after the caller's.
#[test]
fn inlining_appends_and_renumbers_local_arrays() {
    let mut m = Module::default();
    let sigs = Signatures::default();
    // swap(i, x): returns the element before writing x there (unwritten here: 0).
    m.functions.push(function("swap", &[Ty::U32, Ty::F32], &[Ty::F32], &sigs, |b, p| {
        let a = b.func.add_local(Ty::F32, 2);
        let zero = b.f32(0.0);
        for k in 0..2 {
            let k = b.u32(k);
            b.local_store(a, k, zero);
        }
        let old = b.local_load(a, p[0]);
        b.local_store(a, p[0], p[1]);
        let new = b.local_load(a, p[0]);
        vec![b.add(old, new)]
    }));
    let sigs = Signatures::of(&m);
    m.functions.push(function("main", &[Ty::U32, Ty::F32], &[Ty::F32, Ty::I32], &sigs, |b, p| {
        let own = b.func.add_local(Ty::I32, 3);
        let seven = b.i32(7);
        b.local_store(own, p[0], seven);
        let r1 = b.call(FuncId(0), vec![p[0], p[1]])[0];
        let r2 = b.call(FuncId(0), vec![p[0], r1])[0];
        vec![r2, b.local_load(own, p[0])]
    }));
    verify_module(&m).unwrap();
    let mut inlined = m.clone();
    inline_calls(&mut inlined, &InlineOptions::FULL);
    verify_module(&inlined).unwrap();
    let main = &inlined.functions[1];
    assert_eq!(
        main.locals,
        vec![
            LocalArray { elem: Ty::I32, len: 3 },
            LocalArray { elem: Ty::F32, len: 2 },
            LocalArray { elem: Ty::F32, len: 2 }
        ]
    );
    let mut arrays = Vec::new();
    util::walk_insts(&main.body, &mut |i| {
        if let Op::LocalLoad { array, .. } | Op::LocalStore { array, .. } = i.op {
            arrays.push(array);
        }
    });
    assert_eq!(arrays, vec![0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 0]);
    for args in [[0, 1.5f32.to_bits()], [1, (-2.0f32).to_bits()], [2, 3.0f32.to_bits()]] {
        let want = drs_interp::Interpreter::new(&m).call(FuncId(1), &args).unwrap();
        assert_eq!(drs_interp::Interpreter::new(&inlined).call(FuncId(1), &args).unwrap(), want);
    }
}

/// A function that only writes its own local arrays has no side effect for its callers, and
/// a local load is never uniform.
#[test]
fn local_arrays_are_private_to_a_call() {
    let mut m = Module::default();
    let sigs = Signatures::default();
    m.functions.push(function("scratch", &[Ty::U32, Ty::F32], &[Ty::F32], &sigs, |b, p| {
        let a = b.func.add_local(Ty::F32, 4);
        b.local_store(a, p[0], p[1]);
        vec![b.local_load(a, p[0])]
    }));
    let sigs = Signatures::of(&m);
    m.functions.push(function("main", &[Ty::U32, Ty::F32], &[Ty::F32], &sigs, |b, p| {
        let _unused = b.call(FuncId(0), vec![p[0], p[1]]);
        let a = b.call(FuncId(0), vec![p[0], p[1]])[0];
        let c = b.call(FuncId(0), vec![p[0], p[1]])[0];
        vec![b.add(a, c)]
    }));
    verify_module(&m).unwrap();
    let mut opt = m.clone();
    optimize(&mut opt, OptLevel::Basic);
    let mut calls = 0;
    util::walk_insts(&opt.functions[1].body, &mut |i| calls += matches!(i.op, Op::Call(..)) as usize);
    assert_eq!(calls, 1, "{}", print_module(&opt));
    // The store and the load stay in the callee.
    assert_eq!(util::size(&opt.functions[0].body), 2, "{}", print_module(&opt));
    let u = uniform_values(&m, FuncId(0), &[true, true]);
    let load = m.functions[0].body.insts[1].results[0];
    assert!(!u[load.0 as usize]);
}

/// Passes that rebuild a loop keep its `max_iters`.
#[test]
fn loop_bounds_survive_optimisation() {
    let m = module(&[Ty::F32, Ty::I32], &[Ty::F32], |b, p| {
        let zero = b.i32(0);
        let unused = b.f32(3.0);
        let r = b.bounded_loop(vec![zero, p[0], unused], Some(12), |b, v| {
            let one = b.i32(1);
            let next = b.add(v[0], one);
            let two = b.f32(2.0);
            let x = b.mul(v[1], two);
            let more = b.cmp(CmpOp::Lt, next, p[1]);
            (more, vec![next, x, v[2]])
        });
        vec![r[1]]
    });
    for level in [OptLevel::Basic, OptLevel::Default, OptLevel::Full] {
        let mut opt = m.clone();
        optimize(&mut opt, level);
        let mut bounds = Vec::new();
        let mut carried = Vec::new();
        util::walk_insts(&opt.functions[0].body, &mut |i| {
            if let Op::Loop { init, max_iters, .. } = &i.op {
                bounds.push(*max_iters);
                carried.push(init.len());
            }
        });
        // DCE dropped the unused carried value, and the bound is still there.
        assert_eq!((bounds, carried), (vec![Some(12)], vec![2]), "{level:?}\n{}", print_module(&opt));
    }
}

/// A carried value that a branch with a side effect passes through or updates, and that
/// nothing else reads, is dead (as `prev_it.t` in the path tracer's loop, updated in a masked
/// branch that also calls the scene); one that the branch's store reads is kept.
#[test]
fn dce_drops_carried_values_that_only_pass_through_a_branch() {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "out".into(), elem: Ty::F32 });
    let sigs = Signatures::of(&m);
    let f = function("f", &[Ty::I32, Ty::F32], &[Ty::I32], &sigs, |b, p| {
        let (n, x) = (p[0], p[1]);
        let zero = b.i32(0);
        let fz = b.f32(0.0);
        // carried: i (continue flag), passed (through the branch only), stored (read by its store)
        let out = b.loop_(vec![zero, fz, fz], |b, v| {
            let one = b.i32(1);
            let i1 = b.add(v[0], one);
            let two = b.i32(2);
            let odd = b.binary(BinaryOp::Rem, i1, two);
            let c = b.cmp(CmpOp::Eq, odd, one);
            let r = b.if_(
                c,
                |b| {
                    let z = b.u32(0);
                    b.store(0, z, v[2]);
                    let passed = b.add(v[1], x);
                    let stored = b.mul(v[2], x);
                    vec![passed, stored]
                },
                |_| vec![v[1], v[2]],
            );
            let more = b.cmp(CmpOp::Lt, i1, n);
            (more, vec![i1, r[0], r[1]])
        });
        vec![out[0]]
    });
    m.functions.push(f);
    verify_module(&m).unwrap();
    dce(&mut m);
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{}", print_module(&m)));
    let mut shapes = Vec::new();
    util::walk_insts(&m.functions[0].body, &mut |i| match &i.op {
        Op::Loop { init, .. } => shapes.push(("loop", init.len())),
        Op::If { .. } => shapes.push(("if", i.results.len())),
        _ => {}
    });
    assert_eq!(shapes, [("loop", 2), ("if", 1)], "{}", print_module(&m));
}

/// Stores to a local array that is never read are removed with the array; the others are
/// renumbered and kept.
#[test]
fn dce_drops_write_only_arrays() {
    let mut m = module(&[Ty::U32, Ty::F32], &[Ty::F32], |b, p| {
        let (i, x) = (p[0], p[1]);
        let unread = b.func.add_local(Ty::F32, 8);
        let read = b.func.add_local(Ty::F32, 8);
        b.local_store(unread, i, x);
        let y = b.mul(x, x);
        b.local_store(read, i, y);
        vec![b.local_load(read, i)]
    });
    let before = drs_interp::Interpreter::new(&m).call(FuncId(0), &[3, 2f32.to_bits()]).unwrap();
    dce(&mut m);
    verify_module(&m).unwrap();
    let f = &m.functions[0];
    assert_eq!(f.locals, [LocalArray { elem: Ty::F32, len: 8 }]);
    let text = print_function(&m, f);
    assert_eq!(text.matches("local_store").count(), 1, "{text}");
    assert_eq!(drs_interp::Interpreter::new(&m).call(FuncId(0), &[3, 2f32.to_bits()]).unwrap(), before);
}

/// A callee of about `2 * steps` instructions: `x` through `steps` multiply-adds.
fn big_function(name: &str, steps: usize) -> Function {
    function(name, &[Ty::F32], &[Ty::F32], &Signatures::default(), |b, p| {
        let mut acc = p[0];
        for k in 0..steps {
            let c = b.f32(1.0 / (k + 2) as f32);
            acc = b.fma(acc, c, p[0]);
        }
        vec![acc]
    })
}

#[test]
fn kernels_inline_callees_with_one_or_two_call_sites_and_drop_the_rest() {
    // All above the general inlining threshold (60 instructions); `twice_huge` also above
    // the kernels' limit for callees with two call sites.
    let huge = KERNEL_TWO_CALL_SITES_BELOW / 2 + 10;
    let mut m = Module::default();
    m.functions.push(big_function("unused", 40));
    m.functions.push(big_function("once", 40));
    m.functions.push(big_function("twice", 40));
    m.functions.push(big_function("thrice", 40));
    m.functions.push(big_function("twice_huge", huge));
    let sigs = Signatures::of(&m);
    m.functions.push(function("entry", &[Ty::F32], &[Ty::F32], &sigs, |b, p| {
        let mut x = b.call(FuncId(1), vec![p[0]])[0];
        for callee in [2, 2, 3, 3, 3, 4, 4] {
            x = b.call(FuncId(callee), vec![x])[0];
        }
        vec![x]
    }));
    verify_module(&m).unwrap();
    let entry = FuncId(5);
    let kernel = prepare_kernel(&m, OptLevel::Default, entry);
    verify_module(&kernel).unwrap();
    let names: Vec<&str> = kernel.functions.iter().map(|f| f.name.as_str()).collect();
    // The entry first; `once` and `twice` inlined (then unreachable), `thrice` and
    // `twice_huge` kept, `unused` dropped.
    assert_eq!(names, ["entry", "thrice", "twice_huge"]);
    // The general preparation keeps every function and inlines none of the big callees.
    let general = prepare_for_backend(&m, OptLevel::Default);
    assert_eq!(general.functions.len(), 6);
    let x = 0.75f32.to_bits();
    let run = |m: &Module, f: FuncId| drs_interp::Interpreter::new(m).call(f, &[x]).unwrap()[0];
    assert_eq!(run(&kernel, FuncId(0)), run(&m, entry));
}

/// A result counts as read when an instruction or a region's yield reads it, in any function
/// and at any call; a result that no call's value is read of does not, nor do the results of
/// an extern that is never called.
#[test]
fn extern_results_read_by_some_call() {
    let mut m = Module::default();
    let pair = ExternDecl { name: "pair".into(), params: vec![], results: vec![Ty::F32, Ty::F32, Ty::F32] };
    let unused = ExternDecl { name: "unused".into(), params: vec![], results: vec![Ty::F32] };
    m.externs.extend([pair, unused]);
    let sigs = Signatures::of(&m);
    // f reads result 0 in an instruction; g yields result 2 from a region; result 1 is dropped.
    m.functions.push(function("f", &[], &[Ty::F32], &sigs, |b, _| {
        let r = b.call_extern(0, vec![]);
        vec![b.add(r[0], r[0])]
    }));
    m.functions.push(function("g", &[Ty::Bool], &[Ty::F32], &sigs, |b, p| {
        let r = b.call_extern(0, vec![]);
        let zero = b.f32(0.0);
        vec![b.if_(p[0], |_| vec![r[2]], |_| vec![zero])[0]]
    }));
    verify_module(&m).unwrap();
    assert_eq!(util::extern_results_read(&m), vec![vec![true, false, true], vec![false]]);
}
