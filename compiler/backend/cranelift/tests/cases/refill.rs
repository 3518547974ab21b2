// The cases of the `refill` tests, included by the test crates of both backends (their `common`
// module is the harness with their code generator).

use common::Host;
use drs_cranelift::{Buffer, Lanes, Options};
use drs_ir::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// `walk(steps, bias, depth)`: the shape of a path tracer. A host call before the loop (the
/// camera sample), a guard on the uniform `depth` (`if depth == 0 { return (0, bias) }`), a
/// loop of `steps % 23 + 1` iterations with a host call in each (the intersection), whose
/// body reads a value computed before it, and code after it that mixes the loop's results with
/// the parameters. `walk` ends its loop with a computed continue flag (a do-while, as `loop`
/// lowers); `walk_while` as `while active { ... }` lowers and optimises: `if active { ... }
/// else { the carried values }` with `active` itself as the continue flag, so that a lane runs
/// one iteration more than it works. `walk_add` is `walk_while` that also adds each
/// iteration's count into buffer 0 (`counts[i % 4] += i`), as a gradient kernel adds into its
/// gradient buffers: adds do not keep a loop from being refilled.
fn walk_module() -> Module {
    let mut m = Module {
        externs: vec![
            ExternDecl { name: "camera".into(), params: vec![Ty::U32], results: vec![Ty::F32] },
            ExternDecl { name: "bounce".into(), params: vec![Ty::F32, Ty::U32], results: vec![Ty::F32] },
        ],
        buffers: vec![BufferDecl { name: "counts".into(), elem: Ty::U32 }],
        ..Module::default()
    };
    for name in WALKS {
        let sigs = Signatures::of(&m);
        let mut f = Function::new(name);
        let steps = f.add_param("steps", Ty::U32);
        let bias = f.add_param("bias", Ty::F32);
        let depth = f.add_param("depth", Ty::I32);
        let mut b = Builder::new(&mut f, &sigs);
        let zero = b.i32(0);
        let no_depth = b.cmp(CmpOp::Eq, depth, zero);
        let out = b.if_(
            no_depth,
            |b| {
                let z = b.f32(0.0);
                vec![z, bias]
            },
            |b| {
                let start = b.call_extern(0, vec![steps])[0];
                let offset = b.add(start, bias);
                let twenty_three = b.u32(23);
                let one = b.u32(1);
                let count = b.binary(BinaryOp::Rem, steps, twenty_three);
                let count = b.add(count, one);
                let first = b.u32(0);
                // One iteration: (i, x) -> (i + 1, bounce(x, i) + offset, i + 1 < count).
                let step = |b: &mut Builder, i: Value, x: Value| {
                    let x = b.call_extern(1, vec![x, i])[0];
                    let x = b.add(x, offset);
                    let one = b.u32(1);
                    let i = b.add(i, one);
                    if name == "walk_add" {
                        let four = b.u32(4);
                        let slot = b.binary(BinaryOp::Rem, i, four);
                        b.atomic_add(0, slot, i);
                    }
                    let more = b.cmp(CmpOp::Lt, i, count);
                    (i, x, more)
                };
                let (i, x) = if name == "walk" {
                    let l = b.loop_(vec![first, start], |b, c| {
                        let (i, x, more) = step(b, c[0], c[1]);
                        (more, vec![i, x])
                    });
                    (l[0], l[1])
                } else {
                    let active = b.bool(true);
                    let l = b.loop_(vec![first, start, active], |b, c| {
                        let next = b.if_(
                            c[2],
                            |b| {
                                let (i, x, more) = step(b, c[0], c[1]);
                                vec![i, x, more]
                            },
                            |_| vec![c[0], c[1], c[2]],
                        );
                        (c[2], next)
                    });
                    (l[0], l[1])
                };
                let converted = b.convert(Ty::F32, i);
                let result = b.mul(x, converted);
                vec![result, offset]
            },
        );
        b.finish(vec![out[0], out[1]]);
        f.result_types = vec![Ty::F32, Ty::F32];
        m.add_function(f);
    }
    m
}

const WALKS: [&str; 3] = ["walk", "walk_while", "walk_add"];

/// Options with `depth` uniform, as the render's integrator instance is.
fn options(mode: Lanes) -> Options {
    WALKS.into_iter().fold(Options::new(mode), |o, name| o.uniform(name, vec![false, false, true]))
}

fn camera() -> Host {
    Arc::new(|a: &[u32]| vec![(a[0] as f32 * 0.125 + 1.0).to_bits()])
}

fn bounce(calls: Arc<AtomicU32>) -> Host {
    Arc::new(move |a: &[u32]| {
        calls.fetch_add(1, Ordering::Relaxed);
        vec![(f32::from_bits(a[0]) * 0.75 + a[1] as f32).to_bits()]
    })
}

/// Arguments of `n` lanes; `depth(l)` must be the same for the lanes of an aligned group.
fn lanes(n: u32, depth: impl Fn(u32) -> i32) -> Vec<Vec<u32>> {
    (0..n)
        .map(|l| vec![l.wrapping_mul(2_654_435_761) >> 7, (l as f32 * 0.5 - 3.0).to_bits(), depth(l) as u32])
        .collect()
}

/// Every lane's results equal the interpreter's, for batches that are several groups long, a
/// partial last group, one lane, the uniform guard taken (no loop at all), and a uniform
/// parameter that differs between groups (which the plain wrapper runs).
#[test]
fn refilled_lanes_compute_what_the_interpreter_does() {
    let m = walk_module();
    let iterations = Arc::new(AtomicU32::new(0));
    let hosts = [("camera", camera()), ("bounce", bounce(iterations.clone()))];
    let counts = [vec![0u32; 4]];
    for (name, n, depth) in WALKS
        .into_iter()
        .flat_map(|name| [(203, 8), (64, 8), (1, 8), (37, 0), (120, -1)].map(|(n, depth)| (name, n, depth)))
    {
        // -1: depth 0 in the second of every three groups of 8 lanes, else 8.
        let lanes = lanes(n, |l| if depth >= 0 { depth } else { 8 * ((l / 8) % 3 != 1) as i32 });
        let want = common::interp(&m, name, &lanes, &counts, &hosts);
        for &mode in common::MODES {
            let (jit, reloaded) = common::compile_and_reload(&m, &options(mode)).unwrap();
            for jit in [jit, reloaded] {
                let got = common::run_jit(&jit, name, &lanes, &counts, &hosts);
                common::compare(&m, name, mode, &lanes, &want, &got);
            }
        }
    }
}

/// The loop's host calls see full groups until the queue of samples runs dry: at most one
/// call per `W` iterations, plus the last samples' iterations.
#[test]
fn the_loop_runs_with_full_groups() {
    let m = walk_module();
    let vector_modes = common::MODES.iter().copied().filter(|&mode| mode != Lanes::X1);
    for (name, mode) in vector_modes.flat_map(|mode| WALKS.map(|name| (name, mode))) {
        let w = mode.count();
        let jit = common::compile_jit(&m, &options(mode)).unwrap();
        let k = jit.function(name).unwrap();
        let (calls, lanes_run) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let mut ext = jit.externs();
        ext.bind("camera", |a, r| r[0] = (a[0] as f32).to_bits()).unwrap();
        let (c, l) = (calls.clone(), lanes_run.clone());
        ext.bind_group("bounce", move |g| {
            c.fetch_add(1, Ordering::Relaxed);
            g.map_lanes(|[x]| {
                l.fetch_add(1, Ordering::Relaxed);
                [x]
            })
        })
        .unwrap();
        let n = 256;
        let lanes = lanes(n, |_| 8);
        let args: Vec<u32> = (0..3).flat_map(|p| lanes.iter().map(move |l| l[p])).collect();
        let mut results = vec![0u32; 2 * n as usize];
        let mut counts = [0u32; 4];
        k.call_batch(n as usize, &args, &mut results, &[Buffer::from_mut(&mut counts)], &ext).unwrap();
        let iterations: u32 = lanes.iter().map(|l| l[0] % 23 + 1).sum();
        assert_eq!(lanes_run.load(Ordering::Relaxed), iterations, "{name} {mode:?}");
        let bound = iterations.div_ceil(w as u32) + 23;
        let calls = calls.load(Ordering::Relaxed);
        assert!(calls <= bound, "{name} {mode:?}: {calls} calls for {iterations} iterations (at most {bound})");
    }
}
