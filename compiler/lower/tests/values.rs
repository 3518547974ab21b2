//! Lowered programs compute what spec/types.md and spec/semantics.md say: arithmetic and
//! literals, vectors and swizzles with broadcasting, matrices, structs, tuples and arrays,
//! conversions. Each program runs through check → lower → reference interpreter.

mod common;
use common::*;

#[test]
fn integer_arithmetic_wraps_and_divides_as_specified() {
    let p = compile(
        r#"
        fn add(a: i32, b: i32) -> i32 { a + b }
        fn sub(a: i32, b: i32) -> i32 { a - b }
        fn mul(a: i32, b: i32) -> i32 { a * b }
        fn div(a: i32, b: i32) -> i32 { a / b }
        fn rem(a: i32, b: i32) -> i32 { a % b }
        fn neg(a: i32) -> i32 { -a }
        fn udiv(a: u32, b: u32) -> u32 { a / b }
        fn usub(a: u32, b: u32) -> u32 { a - b }
        fn bits(a: u32, b: u32) -> (u32, u32, u32, u32, u32, u32) { (a & b, a | b, a ^ b, !a, a << 4u, a >> 4u) }
        fn shifts(a: i32) -> (i32, i32) { (a >> 1, a << 1) }
        fn min_literal() -> i32 { -2147483648 }
        fn literals() -> (i32, u32, u32, i32) { (0x7fffffff, 0xFFFFFFFFu, 1_000u, -0b101) }
        fn precedence(a: i32) -> i32 { -a * 2 + 3 % 2 - (1 << 2) }
        "#,
    );
    assert_eq!(eval(&p, "add(2147483647, 1)"), "-2147483648");
    assert_eq!(eval(&p, "sub(-2147483648, 1)"), "2147483647");
    assert_eq!(eval(&p, "mul(65536, 65536)"), "0");
    assert_eq!(eval(&p, "div(-7, 2)"), "-3");
    assert_eq!(eval(&p, "rem(-7, 2)"), "-1");
    assert_eq!(eval(&p, "rem(7, -2)"), "1");
    assert_eq!(eval(&p, "div(-2147483648, -1)"), "-2147483648");
    assert_eq!(eval(&p, "rem(-2147483648, -1)"), "0");
    assert_eq!(eval(&p, "neg(-2147483648)"), "-2147483648");
    assert_eq!(eval(&p, "udiv(4294967295, 2)"), "2147483647");
    assert_eq!(eval(&p, "usub(0, 1)"), "4294967295");
    let (a, b) = (0xCAFE_BABEu32, 0xFFFFu32);
    assert_eq!(
        eval(&p, "bits(3405691582, 65535)"),
        format!("({}, {}, {}, {}, {}, {})", a & b, a | b, a ^ b, !a, a << 4, a >> 4)
    );
    assert_eq!(eval(&p, "shifts(-8)"), "(-4, -16)");
    assert_eq!(eval(&p, "min_literal()"), "-2147483648");
    assert_eq!(eval(&p, "literals()"), "(2147483647, 4294967295, 1000, -5)");
    assert_eq!(eval(&p, "precedence(5)"), (-5 * 2 + 3 % 2 - (1 << 2)).to_string());
}

#[test]
fn float_arithmetic_and_literals() {
    let p = compile(
        r#"
        fn arith(a: f32, b: f32) -> (f32, f32, f32, f32, f32, f32) { (a + b, a - b, a * b, a / b, a % b, -a) }
        fn lits() -> (f32, f32, f32, f32) { (1_000.5, 2.5e-3, -0.0, 3.14159265358979323846) }
        fn cmp(a: f32, b: f32) -> (bool, bool, bool, bool, bool, bool) { (a == b, a != b, a < b, a <= b, a > b, a >= b) }
        "#,
    );
    let r = eval_f32s(&p, "arith(7.5, -2.0)");
    assert_eq!(r, vec![5.5, 9.5, -15.0, -3.75, 7.5 % -2.0, -7.5]);
    let r = eval_f32s(&p, "arith(-5.5, 2.0)");
    assert_eq!(r[4], -1.5, "fmod keeps the sign of the dividend");
    let r = eval_f32s(&p, "lits()");
    assert_eq!(r[..2], [1000.5, 2.5e-3]);
    assert!(same_bits(r[2], -0.0));
    assert_eq!(r[3], std::f32::consts::PI);
    assert_eq!(eval(&p, "cmp(1.0, 2.0)"), "(false, true, true, true, false, false)");
    assert_eq!(eval(&p, "cmp(nan, nan)"), "(false, true, false, false, false, false)");
    assert!(eval_f32s(&p, "arith(1.0, 0.0)")[3].is_infinite());
}

#[test]
fn vectors_swizzles_and_broadcasting() {
    let p = compile(
        r#"
        fn scale(v: vec3, s: f32) -> (vec3, vec3, vec3) { (v * s, s * v, v / s) }
        fn swizzle(v: vec4) -> (vec3, vec2, f32, vec4) { (v.zyx, v.ww, v.y, v.rgba.abgr) }
        fn build(v: vec2) -> vec4 { vec4(v.yx, 0.5, vec2(1.0, 2.0).y) }
        fn assign(v: vec3) -> vec3 { var w = v; w.xz = vec2(10.0, 30.0); w.y += 1.0; w.x *= 2.0; w }
        fn splat() -> (vec3, Color) { let v: vec3 = 0.25; let c: Color = -1.5; (v, c) }
        fn colors(c: Color) -> (Color, f32, vec2, Color) { (c.bgr * 2.0, c.g, c.rb, 1.0 - c) }
        fn ivecs(a: ivec3, b: ivec3) -> (ivec3, ivec3, ivec3) { (a + b, a * 2, -a) }
        fn uvecs(a: uvec2) -> uvec2 { (a & uvec2(1u)) << uvec2(2u, 3u) }
        fn eq(a: vec3, b: vec3) -> (bool, bool) { (a == b, a != b) }
        fn beq(a: bvec2, b: bvec2) -> (bool, bvec2) { (a == b, a & b) }
        fn index(v: vec3, i: i32) -> f32 { v[i] }
        "#,
    );
    assert_eq!(eval(&p, "scale(vec3(1.0, 2.0, 4.0), 2.0)"), "([2.0, 4.0, 8.0], [2.0, 4.0, 8.0], [0.5, 1.0, 2.0])");
    assert_eq!(
        eval(&p, "swizzle(vec4(1.0, 2.0, 3.0, 4.0))"),
        "([3.0, 2.0, 1.0], [4.0, 4.0], 2.0, [4.0, 3.0, 2.0, 1.0])"
    );
    assert_eq!(eval(&p, "build(vec2(7.0, 8.0))"), "[8.0, 7.0, 0.5, 2.0]");
    assert_eq!(eval(&p, "assign(vec3(1.0, 2.0, 3.0))"), "[20.0, 3.0, 30.0]");
    assert_eq!(eval(&p, "splat()"), "([0.25, 0.25, 0.25], [-1.5, -1.5, -1.5])");
    assert_eq!(eval(&p, "colors(Color(0.25, 0.5, 0.75))"), "([1.5, 1.0, 0.5], 0.5, [0.25, 0.75], [0.75, 0.5, 0.25])");
    assert_eq!(eval(&p, "ivecs(ivec3(1, -2, 3), ivec3(10, 20, 30))"), "([11, 18, 33], [2, -4, 6], [-1, 2, -3])");
    assert_eq!(eval(&p, "uvecs(uvec2(3u, 2u))"), "[4, 0]");
    assert_eq!(eval(&p, "eq(vec3(1.0, 2.0, 3.0), vec3(1.0, 2.0, 3.0))"), "(true, false)");
    assert_eq!(eval(&p, "eq(vec3(1.0, 2.0, 3.0), vec3(1.0, 5.0, 3.0))"), "(false, true)");
    assert_eq!(eval(&p, "eq(vec3(nan, 2.0, 3.0), vec3(nan, 2.0, 3.0))"), "(false, true)");
    assert_eq!(eval(&p, "beq(bvec2(true, false), bvec2(true, true))"), "(false, [true, false])");
    assert_eq!(eval(&p, "index(vec3(1.0, 2.0, 3.0), 0)"), "1.0");
    assert_eq!(eval(&p, "index(vec3(1.0, 2.0, 3.0), 2)"), "3.0");
}

#[test]
fn matrices() {
    let p = compile(
        r#"
        fn mm(a: mat3, b: mat3) -> mat3 { a * b }
        fn mv(m: mat3, v: vec3) -> vec3 { m * v }
        fn vm(v: vec3, m: mat3) -> vec3 { v * m }
        fn lin(a: mat3, b: mat3) -> (mat3, mat3, mat3, mat3, mat3) { (a + b, a - b, a * 2.0, 0.5 * a, a / 2.0) }
        fn neg(a: mat4) -> mat4 { -a }
        fn ident() -> (mat3, mat4) { (mat3(1.0), mat4(2.0)) }
        fn shrink(m: mat4) -> mat3 { mat3(m) }
        fn grow(m: mat3) -> mat4 { mat4(m) }
        fn column(m: mat3, i: i32) -> vec3 { m[i] }
        fn element(m: mat3, i: i32, j: u32) -> f32 { m[i][j] }
        fn set(m: mat3, i: i32, j: i32, x: f32) -> mat3 { var n = m; n[i][j] = x; n }
        fn mat4v(m: mat4, v: vec4) -> vec4 { m * v }
        "#,
    );
    // Columns (1,2,3), (4,5,6), (7,8,9): rows are (1,4,7), (2,5,8), (3,6,9).
    let a = "mat3(vec3(1.0, 2.0, 3.0), vec3(4.0, 5.0, 6.0), vec3(7.0, 8.0, 9.0))";
    let b = "mat3(vec3(1.0, 0.0, 1.0), vec3(0.0, 2.0, 0.0), vec3(1.0, 1.0, 0.0))";
    let am = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    let bm = [[1.0f32, 0.0, 1.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]];
    // Element (r, c) of A B is Σ_k A(r, k) B(k, c), summed left to right.
    let expected: Vec<f32> =
        bm.iter().flat_map(|col| (0..3).map(move |r| am.iter().zip(col).map(|(a, b)| a[r] * b).sum::<f32>())).collect();
    assert_eq!(eval_f32s(&p, &format!("mm({a}, {b})")), expected);
    assert_eq!(eval(&p, &format!("mv({a}, vec3(1.0, 0.0, -1.0))")), "[-6.0, -6.0, -6.0]");
    assert_eq!(eval(&p, &format!("vm(vec3(1.0, 0.0, -1.0), {a})")), "[-2.0, -2.0, -2.0]");
    assert_eq!(
        eval(&p, &format!("lin({a}, {b})")),
        "([[2.0, 2.0, 4.0], [4.0, 7.0, 6.0], [8.0, 9.0, 9.0]], [[0.0, 2.0, 2.0], [4.0, 3.0, 6.0], [6.0, 7.0, 9.0]], \
         [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0], [14.0, 16.0, 18.0]], [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0], [3.5, 4.0, 4.5]], \
         [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0], [3.5, 4.0, 4.5]])"
    );
    assert_eq!(eval_f32s(&p, "neg(mat4(1.0))")[..5], [-1.0, -0.0, -0.0, -0.0, -0.0]);
    assert_eq!(
        eval(&p, "ident()"),
        "([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], \
         [[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0]])"
    );
    let m4 = "mat4(vec4(1.0, 2.0, 3.0, 4.0), vec4(5.0, 6.0, 7.0, 8.0), vec4(9.0, 10.0, 11.0, 12.0), vec4(13.0, 14.0, 15.0, 16.0))";
    assert_eq!(eval(&p, &format!("shrink({m4})")), "[[1.0, 2.0, 3.0], [5.0, 6.0, 7.0], [9.0, 10.0, 11.0]]");
    assert_eq!(
        eval(&p, &format!("grow({a})")),
        "[[1.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, 0.0], [7.0, 8.0, 9.0, 0.0], [0.0, 0.0, 0.0, 1.0]]"
    );
    assert_eq!(eval(&p, &format!("column({a}, 1)")), "[4.0, 5.0, 6.0]");
    assert_eq!(eval(&p, &format!("element({a}, 2, 1u)")), "8.0");
    assert_eq!(eval(&p, &format!("set({a}, 1, 2, -1.0)")), "[[1.0, 2.0, 3.0], [4.0, 5.0, -1.0], [7.0, 8.0, 9.0]]");
    // A dynamic index out of range changes nothing.
    assert_eq!(eval(&p, &format!("set({a}, 3, 0, -1.0)")), "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]");
    assert_eq!(eval(&p, &format!("mat4v({m4}, vec4(1.0, 1.0, 1.0, 1.0))")), "[28.0, 32.0, 36.0, 40.0]");
}

#[test]
fn matrix_products_are_sums_of_products_left_to_right() {
    // (a0 b0 + a1 b1) + a2 b2 with separate roundings: with a0 b0 = 1e8, a1 b1 = -1e8 and
    // a2 b2 = 1, the left-to-right sum is exactly 1 (a fused or reordered sum may differ).
    let p = compile("fn mv(m: mat3, v: vec3) -> vec3 { m * v }");
    let r =
        eval_f32s(&p, "mv(mat3(vec3(1e8, 0.0, 0.0), vec3(-1e8, 0.0, 0.0), vec3(1.0, 0.0, 0.0)), vec3(1.0, 1.0, 1.0))");
    assert_eq!(r[0], (1e8f32 + -1e8f32) + 1.0);
    // The product's own code: the stdlib's functions in the module may use fma on purpose.
    let module = &p.lowered.module;
    let mv = &module.functions[module.find("mv").expect("mv is lowered").0 as usize];
    let text = drs_ir::print_function(module, mv);
    assert!(!text.contains("fma"), "{text}");
}

#[test]
fn structs_tuples_and_arrays() {
    let p = compile(
        r#"
        struct Inner { a: f32, b: vec2 }
        struct Outer { n: i32, inner: Inner, flag: bool }
        fn make(x: f32) -> Outer { Outer { flag: true, inner: Inner { b: vec2(x, 2.0 * x), a: -x }, n: 7 } }
        fn update(o: Outer) -> Outer { var p = o; p.inner.b.y = 100.0; p.n += 1; p.inner.a = p.inner.b.x; p }
        fn tuples(t: (f32, (i32, bool))) -> (bool, i32, f32) {
            let (x, (n, b)) = t;
            var u = t;
            (u.1).0 = n * 3;
            (b, (u.1).0, x + t.0)
        }
        fn wildcard() -> f32 { let (_, y, _) = (1.0, 2.0, 3.0); y }
        fn read(a: [f32; 4], i: u32) -> f32 { a[i] }
        fn write(a: [f32; 4], i: i32, x: f32) -> [f32; 4] { var b = a; b[i] = x; b }
        fn nested(i: i32, j: i32) -> [vec3; 3] {
            var a = [vec3(0.0); 3];
            a[i].y = 5.0;
            a[j][2] += 1.5;
            a
        }
        fn repeat() -> [[i32; 2]; 3] { [[1, 2]; 3] }
        fn struct_array(i: i32) -> f32 { let s = [Inner { a: 1.0, b: vec2(2.0) }, Inner { a: 3.0, b: vec2(4.0) }]; s[i].a + s[i].b.y }
        fn unit() { }
        fn empty_struct() -> () { () }
        "#,
    );
    assert_eq!(eval(&p, "make(1.5)"), "Outer { n: 7, inner: Inner { a: -1.5, b: [1.5, 3.0] }, flag: true }");
    assert_eq!(
        eval(&p, "update(Outer { n: 1, inner: Inner { a: 0.0, b: [8.0, 9.0] }, flag: false })"),
        "Outer { n: 2, inner: Inner { a: 8.0, b: [8.0, 100.0] }, flag: false }"
    );
    assert_eq!(eval(&p, "tuples((2.5, (4, true)))"), "(true, 12, 5.0)");
    assert_eq!(eval(&p, "wildcard()"), "2.0");
    assert_eq!(eval(&p, "read([1.0, 2.0, 3.0, 4.0], 2u)"), "3.0");
    assert_eq!(eval(&p, "read([1.0, 2.0, 3.0, 4.0], 0u)"), "1.0");
    assert_eq!(eval(&p, "write([1.0, 2.0, 3.0, 4.0], 1, 9.0)"), "[1.0, 9.0, 3.0, 4.0]");
    assert_eq!(eval(&p, "write([1.0, 2.0, 3.0, 4.0], 3, 9.0)"), "[1.0, 2.0, 3.0, 9.0]");
    assert_eq!(eval(&p, "write([1.0, 2.0, 3.0, 4.0], -1, 9.0)"), "[1.0, 2.0, 3.0, 4.0]");
    assert_eq!(eval(&p, "write([1.0, 2.0, 3.0, 4.0], 4, 9.0)"), "[1.0, 2.0, 3.0, 4.0]");
    assert_eq!(eval(&p, "nested(1, 2)"), "[[0.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 1.5]]");
    assert_eq!(eval(&p, "nested(0, 0)"), "[[0.0, 5.0, 1.5], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]");
    assert_eq!(eval(&p, "repeat()"), "[[1, 2], [1, 2], [1, 2]]");
    assert_eq!(eval(&p, "struct_array(1)"), "7.0");
    assert_eq!(eval(&p, "struct_array(0)"), "3.0");
    assert_eq!(eval(&p, "unit()"), "()");
    assert_eq!(eval(&p, "empty_struct()"), "()");
}

#[test]
fn compound_assignment_evaluates_the_index_once_before_the_value() {
    let p = compile(
        r#"
        extern fn next() -> i32;
        fn bump(a: [i32; 3]) -> [i32; 3] { var b = a; b[next()] += next() * 10; b }
        "#,
    );
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let c = counter.clone();
    let out = eval_with(&p, "bump([1, 2, 3])", move |i| {
        i.bind_extern("next", Box::new(move |_| vec![c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) as u32]));
    });
    // The index is evaluated first (0), then the value (1 * 10).
    assert_eq!(out, "[11, 2, 3]");
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn conversions_and_their_edge_cases() {
    let p = compile(
        r#"
        fn to_f(i: i32, u: u32) -> (f32, f32) { (f32(i), f32(u)) }
        fn to_i(x: f32, u: u32) -> (i32, i32) { (i32(x), i32(u)) }
        fn to_u(x: f32, i: i32) -> (u32, u32) { (u32(x), u32(i)) }
        fn vecs(v: vec3, i: ivec3, u: uvec2) -> (ivec3, vec3, uvec3, ivec2) { (ivec3(v), vec3(i), uvec3(i), ivec2(u)) }
        fn colors(v: vec3, c: Color) -> (Color, vec3, Color, vec3) { (Color(v), vec3(c), Color(2.0), vec3(c.r)) }
        fn identity(b: bool, x: f32) -> (bool, f32, vec2) { (bool(b), f32(x), vec2(vec2(x, 1.0))) }
        "#,
    );
    assert_eq!(eval(&p, "to_f(-2147483648, 4294967295)"), format!("({:?}, {:?})", i32::MIN as f32, u32::MAX as f32));
    assert_eq!(eval(&p, "to_f(16777217, 16777217)"), "(16777216.0, 16777216.0)");
    assert_eq!(eval(&p, "to_i(-1.75, 4294967295)"), "(-1, -1)");
    assert_eq!(eval(&p, "to_i(3.99, 2147483648)"), "(3, -2147483648)");
    assert_eq!(eval(&p, "to_u(2.5, -1)"), "(2, 4294967295)");
    assert_eq!(
        eval(&p, "vecs(vec3(1.5, -2.5, 0.0), ivec3(-1, 2, 3), uvec2(7u, 8u))"),
        "([1, -2, 0], [-1.0, 2.0, 3.0], [4294967295, 2, 3], [7, 8])"
    );
    assert_eq!(
        eval(&p, "colors(vec3(1.0, 2.0, 3.0), Color(4.0, 5.0, 6.0))"),
        "([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0])"
    );
    assert_eq!(eval(&p, "identity(true, 2.5)"), "(true, 2.5, [2.5, 1.0])");
}

#[test]
fn constants_are_lowered_where_used() {
    let p = compile(
        r#"
        const A: f32 = 2.0 * B;
        const B: f32 = 1.5;
        const V: vec3 = vec3(A, B, 0.5);
        const N: i32 = 3;
        const BITS: u32 = to_bits(1.0) >> 23u;
        fn use_them(i: i32) -> (f32, vec3, f32, u32) { var a = [0.0; N]; a[N - 1] = A; (a[2], V * B, PI, BITS) }
        "#,
    );
    assert_eq!(eval(&p, "use_them(0)"), format!("(3.0, [4.5, 2.25, 0.75], {:?}, 127)", std::f32::consts::PI));
}
