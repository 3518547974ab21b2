//! `if`, loops and jumps: every loop form with `break`, `continue` and `return` inside nested
//! ifs and loops, `@max_iters`, jumps in the middle of expressions, and short-circuit
//! operators whose right side has effects.

mod common;
use common::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

#[test]
fn if_expressions_and_assignments_in_branches() {
    let p = compile(
        r#"
        fn classify(x: f32) -> i32 { if x < 0.0 { -1 } else if x == 0.0 { 0 } else { 1 } }
        fn pick(c: bool) -> f32 { var x: f32; if c { x = 1.0; } else { x = 2.0; } x }
        fn maybe(c: bool, d: bool) -> (f32, vec2) {
            var x = 10.0;
            var v = vec2(0.0);
            if c { x += 1.0; if d { v.y = 3.0; } } else { v = vec2(5.0, 6.0); }
            (x, v)
        }
        fn value_and_effects(c: bool) -> (f32, i32) {
            var n = 0;
            let y = if c { n = 1; 2.5 } else { n = 2; -2.5 };
            (y, n)
        }
        fn blocks(a: f32) -> f32 { let b = { let t = a * 2.0; t + 1.0 }; b * { 3.0 } }
        fn shadow(x: f32) -> f32 { let x = x * 2.0; let x = x + 1.0; x }
        "#,
    );
    assert_eq!(eval(&p, "classify(-3.0)"), "-1");
    assert_eq!(eval(&p, "classify(0.0)"), "0");
    assert_eq!(eval(&p, "classify(4.0)"), "1");
    assert_eq!(eval(&p, "pick(true)"), "1.0");
    assert_eq!(eval(&p, "pick(false)"), "2.0");
    assert_eq!(eval(&p, "maybe(true, true)"), "(11.0, [0.0, 3.0])");
    assert_eq!(eval(&p, "maybe(true, false)"), "(11.0, [0.0, 0.0])");
    assert_eq!(eval(&p, "maybe(false, true)"), "(10.0, [5.0, 6.0])");
    assert_eq!(eval(&p, "value_and_effects(true)"), "(2.5, 1)");
    assert_eq!(eval(&p, "value_and_effects(false)"), "(-2.5, 2)");
    assert_eq!(eval(&p, "blocks(1.0)"), "9.0");
    assert_eq!(eval(&p, "shadow(1.0)"), "3.0");
}

#[test]
fn while_for_and_loop() {
    let p = compile(
        r#"
        fn sum_to(n: i32) -> i32 { var total = 0; for i in 0..n { total += i; } total }
        fn sum_unsigned(a: u32, b: u32) -> u32 { var total = 0u; for k in a..b { total += k; } total }
        fn near_max() -> i32 { var count = 0; for i in 2147483645..2147483647 { count += 1; } count }
        fn halve(x: f32) -> (f32, i32) { var v = x; var steps = 0; while v > 1.0 { v *= 0.5; steps += 1; } (v, steps) }
        fn odd_sum() -> i32 {
            var i = 0;
            var sum = 0;
            loop {
                i += 1;
                if i > 10 { break; }
                if i % 2 == 0 { continue; }
                sum += i;
            }
            sum
        }
        fn nested(n: i32) -> i32 {
            var count = 0;
            for i in 0..n {
                for j in 0..n {
                    if j > i { break }
                    if (i + j) % 3 == 0 { continue }
                    count += 1;
                }
                var k = 0;
                while true {
                    k += 1;
                    if k >= i { break; }
                }
                count += k;
            }
            count
        }
        fn condition_effects() -> i32 { var k = 0; var runs = 0; while { k += 1; k < 5 } { runs += 10; } k + runs }
        fn fresh_locals() -> i32 { var s = 0; for i in 0..3 { var t = 1; t += i; s += t; } s }
        fn assigned_in_loop() -> f32 { var x: f32; loop { x = 4.0; break; } x }
        fn reverse_range() -> i32 { var n = 0; for i in 5..2 { n += 1; } n }
        "#,
    );
    assert_eq!(eval(&p, "sum_to(10)"), "45");
    assert_eq!(eval(&p, "sum_to(0)"), "0");
    assert_eq!(eval(&p, "sum_to(-5)"), "0");
    assert_eq!(eval(&p, "sum_unsigned(1u, 5u)"), "10");
    assert_eq!(eval(&p, "near_max()"), "2");
    assert_eq!(eval(&p, "halve(10.0)"), "(0.625, 4)");
    assert_eq!(eval(&p, "halve(0.5)"), "(0.5, 0)");
    assert_eq!(eval(&p, "odd_sum()"), "25");
    let nested = |n: i32| {
        let mut count = 0;
        for i in 0..n {
            for j in 0..n {
                if j > i {
                    break;
                }
                if (i + j) % 3 == 0 {
                    continue;
                }
                count += 1;
            }
            let mut k = 0;
            loop {
                k += 1;
                if k >= i {
                    break;
                }
            }
            count += k;
        }
        count
    };
    for n in [0, 1, 4, 7] {
        assert_eq!(eval(&p, &format!("nested({n})")), nested(n).to_string(), "nested({n})");
    }
    assert_eq!(eval(&p, "condition_effects()"), "45");
    assert_eq!(eval(&p, "fresh_locals()"), "6");
    assert_eq!(eval(&p, "assigned_in_loop()"), "4.0");
    assert_eq!(eval(&p, "reverse_range()"), "0");
}

#[test]
fn return_inside_nested_ifs_and_loops() {
    let p = compile(
        r#"
        fn sign_of(x: f32) -> f32 { if x > 0.0 { return 1.0; } if x < 0.0 { return -1.0; } 0.0 }
        fn find(values: [f32; 4], target: f32) -> i32 {
            for i in 0..4 { if values[i] == target { return i; } }
            -1
        }
        fn grid(n: i32, target: i32) -> (i32, i32, i32) {
            var visited = 0;
            for i in 0..n {
                var j = 0;
                while j < n {
                    visited += 1;
                    if i * n + j == target {
                        if visited > 0 { return (i, j, visited); }
                    }
                    j += 1;
                }
            }
            (-1, -1, visited)
        }
        fn loop_return(limit: i32) -> i32 {
            var i = 0;
            loop {
                i += 1;
                loop {
                    if i > limit { return i * 100; }
                    break;
                }
                if i == 50 { break; }
            }
            i
        }
        fn unit_return(c: bool) -> i32 { var n = 1; if c { n = 2; } n }
        fn only_returns(x: i32) -> i32 { if x > 0 { return 1; } else { return 2; } }
        fn early(x: f32) -> vec2 {
            if x < 0.0 { return vec2(0.0); }
            var v = vec2(x);
            v.y += 1.0;
            v
        }
        "#,
    );
    assert_eq!(eval(&p, "sign_of(2.0)"), "1.0");
    assert_eq!(eval(&p, "sign_of(-2.0)"), "-1.0");
    assert_eq!(eval(&p, "sign_of(0.0)"), "0.0");
    assert_eq!(eval(&p, "find([1.0, 2.0, 3.0, 4.0], 3.0)"), "2");
    assert_eq!(eval(&p, "find([1.0, 2.0, 3.0, 4.0], 5.0)"), "-1");
    assert_eq!(eval(&p, "grid(4, 6)"), "(1, 2, 7)");
    assert_eq!(eval(&p, "grid(3, 100)"), "(-1, -1, 9)");
    assert_eq!(eval(&p, "loop_return(3)"), "400");
    assert_eq!(eval(&p, "loop_return(1000)"), "50");
    assert_eq!(eval(&p, "unit_return(true)"), "2");
    assert_eq!(eval(&p, "only_returns(5)"), "1");
    assert_eq!(eval(&p, "only_returns(-5)"), "2");
    assert_eq!(eval(&p, "early(-1.0)"), "[0.0, 0.0]");
    assert_eq!(eval(&p, "early(2.0)"), "[2.0, 3.0]");
}

/// A `return` in the body's tail position (ending the body, or ending an `if` whose rest of
/// the body becomes its `else`) lowers to plain branch values: no `returned` flag and no
/// selects of return slots, which vector code would pay for at every later merge.
#[test]
fn tail_position_returns_need_no_returned_flag() {
    let p = compile(
        r#"
        fn clamp_step(x: f32) -> f32 {
            if x < 0.0 { return 0.0; }
            let y = x * 2.0;
            if y > 3.0 { let z = y - 3.0; return 3.0 + z * 0.5; }
            return y;
        }
        fn nested(a: i32, b: i32) -> (i32, i32) {
            var n = a;
            if a > b {
                n += 1;
                if n > 10 { return (n, 1); }
                return (n * 2, 3);
            }
            let m = n + b;
            if m == 7 { return (m, 2); }
            (n, m)
        }
        fn with_loop_return(n: i32) -> i32 {
            if n < 0 { return -1; }
            for i in 0..n { if i * i > n { return i; } }
            n
        }
        "#,
    );
    assert_eq!(eval(&p, "clamp_step(-1.0)"), "0.0");
    assert_eq!(eval(&p, "clamp_step(1.0)"), "2.0");
    assert_eq!(eval(&p, "clamp_step(2.5)"), "4.0");
    assert_eq!(eval(&p, "nested(12, 3)"), "(13, 1)");
    assert_eq!(eval(&p, "nested(4, 3)"), "(10, 3)");
    assert_eq!(eval(&p, "nested(2, 5)"), "(7, 2)");
    assert_eq!(eval(&p, "nested(1, 5)"), "(1, 6)");
    assert_eq!(eval(&p, "with_loop_return(-3)"), "-1");
    assert_eq!(eval(&p, "with_loop_return(10)"), "4");
    assert_eq!(eval(&p, "with_loop_return(0)"), "0");
    let printed = |name: &str| {
        let f = p.lowered.functions[&p.find_fn(name).unwrap()];
        drs_ir::print_function(&p.lowered.module, p.lowered.module.function(f))
    };
    for name in ["clamp_step", "nested"] {
        let ir = printed(name);
        assert!(!ir.contains("select"), "{name} selects return slots:\n{ir}");
    }
    // The return inside the loop still needs the flag.
    assert!(printed("with_loop_return").contains("select"));
}

#[test]
fn max_iters_ends_the_loop_as_if_by_break() {
    let p = compile(
        r#"
        // The checker treats a `loop` without `break` as diverging even with `@max_iters`
        // (a sema gap), hence the `break` that never runs.
        fn forever() -> i32 { var n = 0; @max_iters(7) loop { n += 1; if n < 0 { break; } } n }
        fn bounded_while(x: f32) -> (f32, i32) { var v = x; var k = 0; @max_iters(3) while v > 1.0 { v *= 0.5; k += 1; } (v, k) }
        fn bounded_for(n: i32) -> i32 { var s = 0; @max_iters(4) for i in 0..n { s += i; } s }
        fn breaks_first() -> i32 { var n = 0; @max_iters(100) loop { n += 1; if n == 5 { break; } } n }
        fn continue_counts(n: i32) -> i32 { var s = 0; @max_iters(5) for i in 0..n { if i % 2 == 0 { continue; } s += i; } s }
        "#,
    );
    assert_eq!(eval(&p, "forever()"), "7");
    assert_eq!(eval(&p, "bounded_while(100.0)"), "(12.5, 3)");
    assert_eq!(eval(&p, "bounded_while(2.0)"), "(1.0, 1)");
    assert_eq!(eval(&p, "bounded_for(100)"), "6");
    assert_eq!(eval(&p, "bounded_for(2)"), "1");
    assert_eq!(eval(&p, "breaks_first()"), "5");
    // Iterations that `continue` count too: i = 0..4 run, the odd ones add.
    assert_eq!(eval(&p, "continue_counts(100)"), "4");
}

/// The bound of each loop of function `name`, outermost first, in program order.
fn loop_bounds(p: &drs_lower::LoweredProgram, name: &str) -> Vec<Option<u32>> {
    fn walk(r: &drs_ir::Region, out: &mut Vec<Option<u32>>) {
        for inst in &r.insts {
            match &inst.op {
                drs_ir::Op::Loop { body, max_iters, .. } => {
                    out.push(*max_iters);
                    walk(body, out);
                }
                drs_ir::Op::If { then, els, .. } => {
                    walk(then, out);
                    walk(els, out);
                }
                _ => {}
            }
        }
    }
    let f = p.find_fn(name).unwrap_or_else(|| panic!("no function `{name}`"));
    let mut out = Vec::new();
    walk(&p.lowered.module.function(p.lowered.functions[&f]).body, &mut out);
    out
}

#[test]
fn max_iters_is_recorded_on_the_ir_loop() {
    let p = compile(
        r#"
        fn nested(n: i32) -> i32 {
            var s = 0;
            @max_iters(4) for i in 0..n { for j in 0..i { s += j; } @max_iters(9) while s > 100 { s -= 1; } }
            s
        }
        fn plain(n: i32) -> i32 { var s = 0; for i in 0..n { s += i; } s }
        "#,
    );
    assert_eq!(loop_bounds(&p, "nested"), vec![Some(4), None, Some(9)]);
    assert_eq!(loop_bounds(&p, "plain"), vec![None]);
}

#[test]
fn short_circuit_skips_the_right_side_with_effects() {
    let p = compile(
        r#"
        extern fn probe(x: f32) -> bool;
        fn and(a: bool, x: f32) -> bool { a && probe(x) }
        fn or(a: bool, x: f32) -> bool { a || probe(x) }
        fn pure(a: bool, b: bool, c: bool) -> (bool, bool) { (a && b || c, a || b && c) }
        fn chain(x: f32) -> bool { x > 0.0 && probe(x) && probe(x + 1.0) }
        "#,
    );
    let calls = Arc::new(AtomicU32::new(0));
    let run = |call: &str| {
        calls.store(0, Ordering::SeqCst);
        let c = calls.clone();
        let out = eval_with(&p, call, move |i| {
            assert!(i.bind_extern(
                "probe",
                Box::new(move |args| {
                    c.fetch_add(1, Ordering::SeqCst);
                    vec![(f32::from_bits(args[0]) > 1.5) as u32]
                })
            ));
        });
        (out, calls.load(Ordering::SeqCst))
    };
    assert_eq!(run("and(false, 2.0)"), ("false".into(), 0));
    assert_eq!(run("and(true, 2.0)"), ("true".into(), 1));
    assert_eq!(run("and(true, 1.0)"), ("false".into(), 1));
    assert_eq!(run("or(true, 1.0)"), ("true".into(), 0));
    assert_eq!(run("or(false, 2.0)"), ("true".into(), 1));
    assert_eq!(run("chain(-1.0)"), ("false".into(), 0));
    assert_eq!(run("chain(1.0)"), ("false".into(), 1));
    assert_eq!(run("chain(2.0)"), ("true".into(), 2));
    for (a, b, c) in [(false, false, true), (true, false, false), (true, true, false), (false, true, true)] {
        assert_eq!(run(&format!("pure({a}, {b}, {c})")).0, format!("({}, {})", a && b || c, a || b && c));
    }
}

#[test]
fn jumps_inside_expressions_skip_the_rest_of_the_expression() {
    let p = compile(
        r#"
        extern fn effect(x: f32) -> f32;
        fn add(a: f32, b: f32) -> f32 { a + b }
        fn f(c: bool) -> f32 {
            let y = add(if c { return -1.0; } else { 1.0 }, effect(2.0));
            y * 10.0
        }
        fn g(xs: [f32; 3]) -> f32 {
            var total = 0.0;
            for i in 0..3 {
                total += if xs[i] < 0.0 { break; } else { effect(xs[i]) };
            }
            total
        }
        "#,
    );
    let calls = Arc::new(AtomicU32::new(0));
    let run = |call: &str| {
        calls.store(0, Ordering::SeqCst);
        let c = calls.clone();
        let out = eval_with(&p, call, move |i| {
            i.bind_extern(
                "effect",
                Box::new(move |args| {
                    c.fetch_add(1, Ordering::SeqCst);
                    vec![args[0]]
                }),
            );
        });
        (out, calls.load(Ordering::SeqCst))
    };
    assert_eq!(run("f(true)"), ("-1.0".into(), 0));
    assert_eq!(run("f(false)"), ("30.0".into(), 1));
    assert_eq!(run("g([1.0, 2.0, 4.0])"), ("7.0".into(), 3));
    assert_eq!(run("g([1.0, -2.0, 4.0])"), ("1.0".into(), 1));
}

#[test]
fn extern_calls_run_in_source_order() {
    let p = compile(
        r#"
        extern fn tick() -> u32;
        fn pair() -> (u32, u32) { (tick(), tick()) }
        fn ops() -> u32 { tick() * 10u + tick() }
        fn in_loop() -> u32 { var s = 0u; for i in 0..3 { s = s * 10u + tick(); } s }
        "#,
    );
    let run = |call: &str| {
        let n = Arc::new(AtomicU32::new(1));
        eval_with(&p, call, move |i| {
            i.bind_extern("tick", Box::new(move |_| vec![n.fetch_add(1, Ordering::SeqCst)]));
        })
    };
    assert_eq!(run("pair()"), "(1, 2)");
    assert_eq!(run("ops()"), "12");
    assert_eq!(run("in_loop()"), "123");
}

#[test]
fn loops_that_only_return_and_unit_functions_that_return_early() {
    let p = compile(
        r#"
        extern fn log_value(x: f32);
        fn first_above(xs: [f32; 4], t: f32) -> f32 { var i = 0; loop { if xs[i] > t || i == 3 { return xs[i]; } i += 1; } }
        fn report(c: bool, x: f32) { if c { return; } log_value(x); }
        fn nested_while(n: i32) -> i32 {
            var i = 0;
            loop {
                var j = 0;
                while j < n {
                    if i * j == 6 { return i * 10 + j; }
                    j += 1;
                }
                i += 1;
                if i > n { break; }
            }
            -1
        }
        "#,
    );
    assert_eq!(eval(&p, "first_above([1.0, 5.0, 2.0, 7.0], 4.0)"), "5.0");
    assert_eq!(eval(&p, "first_above([1.0, 5.0, 2.0, 7.0], 9.0)"), "7.0");
    let logged = Arc::new(AtomicU32::new(0));
    let run = |call: &str| {
        logged.store(0, Ordering::SeqCst);
        let l = logged.clone();
        let out = eval_with(&p, call, move |i| {
            i.bind_extern(
                "log_value",
                Box::new(move |_| {
                    l.fetch_add(1, Ordering::SeqCst);
                    vec![]
                }),
            );
        });
        (out, logged.load(Ordering::SeqCst))
    };
    assert_eq!(run("report(true, 1.0)"), ("()".into(), 0));
    assert_eq!(run("report(false, 1.0)"), ("()".into(), 1));
    assert_eq!(eval(&p, "nested_while(4)"), "23");
    assert_eq!(eval(&p, "nested_while(1)"), "-1");
}
