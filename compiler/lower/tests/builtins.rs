//! Built-in functions (spec/builtins.md), compared with the same computation in Rust.

mod common;
use common::*;

const SAMPLES: [f32; 9] = [-2.5, -1.0, -0.3, -0.0, 0.0, 0.25, 0.7, 1.0, 3.75];

fn check_unary(p: &drs_lower::LoweredProgram, name: &str, f: impl Fn(f32) -> f32) {
    for x in SAMPLES {
        let got = eval_f32(p, &format!("{name}({x:?})"));
        let want = f(x);
        assert!(same_bits(got, want) || (got.is_nan() && want.is_nan()), "{name}({x}) = {got}, expected {want}");
    }
}

#[test]
fn elementwise_float_functions_match_rust() {
    let p = compile(
        r#"
        fn f_sqrt(x: f32) -> f32 { sqrt(x) }
        fn f_rsqrt(x: f32) -> f32 { rsqrt(x) }
        fn f_sin(x: f32) -> f32 { sin(x) }
        fn f_cos(x: f32) -> f32 { cos(x) }
        fn f_tan(x: f32) -> f32 { tan(x) }
        fn f_asin(x: f32) -> f32 { asin(x) }
        fn f_acos(x: f32) -> f32 { acos(x) }
        fn f_atan(x: f32) -> f32 { atan(x) }
        fn f_sinh(x: f32) -> f32 { sinh(x) }
        fn f_cosh(x: f32) -> f32 { cosh(x) }
        fn f_tanh(x: f32) -> f32 { tanh(x) }
        fn f_exp(x: f32) -> f32 { exp(x) }
        fn f_exp2(x: f32) -> f32 { exp2(x) }
        fn f_log(x: f32) -> f32 { log(x) }
        fn f_log2(x: f32) -> f32 { log2(x) }
        fn f_floor(x: f32) -> f32 { floor(x) }
        fn f_ceil(x: f32) -> f32 { ceil(x) }
        fn f_trunc(x: f32) -> f32 { trunc(x) }
        fn f_round(x: f32) -> f32 { round(x) }
        fn f_fract(x: f32) -> f32 { fract(x) }
        fn f_saturate(x: f32) -> f32 { saturate(x) }
        fn f_abs(x: f32) -> f32 { abs(x) }
        fn f_sign(x: f32) -> f32 { sign(x) }
        "#,
    );
    check_unary(&p, "f_sqrt", f32::sqrt);
    check_unary(&p, "f_rsqrt", |x| 1.0 / x.sqrt());
    check_unary(&p, "f_sin", f32::sin);
    check_unary(&p, "f_cos", f32::cos);
    check_unary(&p, "f_tan", f32::tan);
    check_unary(&p, "f_asin", f32::asin);
    check_unary(&p, "f_acos", f32::acos);
    check_unary(&p, "f_atan", f32::atan);
    check_unary(&p, "f_sinh", f32::sinh);
    check_unary(&p, "f_cosh", f32::cosh);
    check_unary(&p, "f_tanh", f32::tanh);
    check_unary(&p, "f_exp", f32::exp);
    check_unary(&p, "f_exp2", f32::exp2);
    check_unary(&p, "f_log", f32::ln);
    check_unary(&p, "f_log2", f32::log2);
    check_unary(&p, "f_floor", f32::floor);
    check_unary(&p, "f_ceil", f32::ceil);
    check_unary(&p, "f_trunc", f32::trunc);
    check_unary(&p, "f_round", f32::round);
    check_unary(&p, "f_fract", |x| x - x.floor());
    // min(max(x, 0), 1) with the IR's Min/Max: -0.0 becomes +0.0.
    check_unary(&p, "f_saturate", |x| {
        let low = if x > 0.0 { x } else { 0.0 };
        if low < 1.0 {
            low
        } else {
            1.0
        }
    });
    check_unary(&p, "f_abs", f32::abs);
    // sign: ±0 and NaN are returned as they are.
    check_unary(&p, "f_sign", |x| {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            x
        }
    });
    assert!(eval_f32(&p, "f_sign(nan)").is_nan());
    assert_eq!(eval_f32(&p, "f_round(2.5)"), 3.0);
    assert_eq!(eval_f32(&p, "f_round(-2.5)"), -3.0);
}

#[test]
fn functions_of_several_arguments_match_rust() {
    let p = compile(
        r#"
        fn f_atan2(y: f32, x: f32) -> f32 { atan2(y, x) }
        fn f_pow(x: f32, y: f32) -> f32 { pow(x, y) }
        fn f_min(a: f32, b: f32) -> f32 { min(a, b) }
        fn f_max(a: f32, b: f32) -> f32 { max(a, b) }
        fn f_clamp(x: f32, lo: f32, hi: f32) -> f32 { clamp(x, lo, hi) }
        fn f_lerp(a: f32, b: f32, t: f32) -> f32 { lerp(a, b, t) }
        fn f_step(e: f32, x: f32) -> f32 { step(e, x) }
        fn f_smoothstep(a: f32, b: f32, x: f32) -> f32 { smoothstep(a, b, x) }
        fn f_fma(a: f32, b: f32, c: f32) -> f32 { fma(a, b, c) }
        "#,
    );
    for &a in &SAMPLES {
        for &b in &SAMPLES {
            let call = |name: &str| eval_f32(&p, &format!("{name}({a:?}, {b:?})"));
            assert!(same_bits(call("f_atan2"), a.atan2(b)), "atan2({a}, {b})");
            let pw = call("f_pow");
            assert!(same_bits(pw, a.powf(b)) || (pw.is_nan() && a.powf(b).is_nan()), "pow({a}, {b})");
            assert_eq!(call("f_min"), if a < b { a } else { b });
            assert_eq!(call("f_max"), if a > b { a } else { b });
            assert_eq!(call("f_step"), if b < a { 0.0 } else { 1.0 });
            let three = |name: &str, c: f32| eval_f32(&p, &format!("{name}({a:?}, {b:?}, {c:?})"));
            assert!(same_bits(three("f_lerp", 0.3), a + (b - a) * 0.3), "lerp({a}, {b})");
            assert!(same_bits(three("f_fma", 1.7), a.mul_add(b, 1.7)), "fma({a}, {b})");
            if a < b {
                let low = if 0.5 > a { 0.5 } else { a };
                assert_eq!(eval_f32(&p, &format!("f_clamp(0.5, {a:?}, {b:?})")), if low < b { low } else { b });
                let t = ((0.5 - a) / (b - a)).clamp(0.0, 1.0);
                assert!(same_bits(three("f_smoothstep", 0.5), t * t * (3.0 - 2.0 * t)), "smoothstep({a}, {b})");
            }
        }
    }
    // fma rounds once: 1 + 2^-23 squared minus (1 + 2^-22) is 2^-46, lost without fusion.
    let e = f32::EPSILON;
    assert_eq!(eval_f32(&p, &format!("f_fma({:?}, {:?}, {:?})", 1.0 + e, 1.0 + e, -(1.0 + 2.0 * e))), e * e);
}

#[test]
fn vector_arguments_broadcast_scalars() {
    let p = compile(
        r#"
        fn clamp_color(c: Color) -> Color { clamp(c, 0.0, 1.0) }
        fn lerp_scalar_t(a: vec3, b: vec3, t: f32) -> vec3 { lerp(a, b, t) }
        fn smooth(x: vec2) -> vec2 { smoothstep(0.0, 1.0, x) }
        fn mins(a: vec3, b: vec3) -> (vec3, vec3) { (min(a, b), max(a, b)) }
        fn ints(a: ivec2, b: i32, u: uvec2) -> (ivec2, ivec2, i32, uvec2, i32) {
            (abs(a), clamp(a, -b, b), max(b, 3), min(u, uvec2(5u)), sign(b))
        }
        fn iabs(x: i32) -> i32 { abs(x) }
        fn uabs(x: u32) -> u32 { abs(x) }
        fn isign(x: i32) -> i32 { sign(x) }
        fn sel(c: bool, a: vec3, b: vec3) -> (vec3, f32) { (select(c, a, b), select(!c, 1.0, 2.0)) }
        "#,
    );
    assert_eq!(eval(&p, "clamp_color(Color(-1.0, 0.5, 2.0))"), "[0.0, 0.5, 1.0]");
    assert_eq!(eval(&p, "lerp_scalar_t(vec3(0.0, 1.0, 2.0), vec3(2.0, 3.0, 6.0), 0.5)"), "[1.0, 2.0, 4.0]");
    assert_eq!(eval(&p, "smooth(vec2(0.5, 2.0))"), "[0.5, 1.0]");
    assert_eq!(eval(&p, "mins(vec3(1.0, 5.0, -1.0), vec3(2.0, 4.0, -1.0))"), "([1.0, 4.0, -1.0], [2.0, 5.0, -1.0])");
    assert_eq!(eval(&p, "ints(ivec2(-3, 9), 4, uvec2(2u, 9u))"), "([3, 9], [-3, 4], 4, [2, 5], 1)");
    assert_eq!(eval(&p, "iabs(-2147483648)"), "-2147483648");
    assert_eq!(eval(&p, "iabs(-7)"), "7");
    assert_eq!(eval(&p, "uabs(4000000000u)"), "4000000000");
    assert_eq!(eval(&p, "isign(-9)"), "-1");
    assert_eq!(eval(&p, "isign(0)"), "0");
    assert_eq!(eval(&p, "sel(true, vec3(1.0), vec3(2.0))"), "([1.0, 1.0, 1.0], 2.0)");
    assert_eq!(eval(&p, "sel(false, vec3(1.0), vec3(2.0))"), "([2.0, 2.0, 2.0], 1.0)");
}

#[test]
fn classification_and_bits() {
    let p = compile(
        r#"
        fn classify(x: f32) -> (bool, bool, bool) { (isnan(x), isinf(x), isfinite(x)) }
        fn bits(x: f32) -> u32 { to_bits(x) }
        fn float(b: u32) -> f32 { from_bits(b) }
        "#,
    );
    assert_eq!(eval(&p, "classify(nan)"), "(true, false, false)");
    assert_eq!(eval(&p, "classify(inf)"), "(false, true, false)");
    assert_eq!(eval(&p, "classify(-inf)"), "(false, true, false)");
    assert_eq!(eval(&p, "classify(-3.5)"), "(false, false, true)");
    assert_eq!(eval(&p, "bits(1.0)"), 1.0f32.to_bits().to_string());
    assert_eq!(eval(&p, "bits(-0.0)"), (-0.0f32).to_bits().to_string());
    assert_eq!(eval(&p, "float(1078530011u)"), format!("{:?}", f32::from_bits(1078530011)));
}

#[test]
fn geometry_matches_rust() {
    let p = compile(
        r#"
        fn geo(a: vec3, b: vec3) -> (f32, f32, f32, f32, vec3, vec3) {
            (dot(a, b), length(a), length_squared(a), distance(a, b), normalize(a), cross(a, b))
        }
        fn refl(i: vec3, n: vec3) -> vec3 { reflect(i, n) }
        fn refr(i: vec3, n: vec3, eta: f32) -> vec3 { refract(i, n, eta) }
        "#,
    );
    let (a, b) = ([1.5f32, -2.0, 0.25], [0.5f32, 3.0, -1.0]);
    let dot = |x: [f32; 3], y: [f32; 3]| x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    let len = dot(a, a).sqrt();
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let mut want = vec![dot(a, b), len, dot(a, a), dot(d, d).sqrt()];
    want.extend(a.iter().map(|x| x / len));
    want.extend([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]);
    assert_eq!(eval_f32s(&p, "geo(vec3(1.5, -2.0, 0.25), vec3(0.5, 3.0, -1.0))"), want);

    let n = [0.0f32, 0.0, 1.0];
    let i = [0.6f32, 0.0, -0.8];
    let t = 2.0 * dot(n, i);
    let want: Vec<f32> = (0..3).map(|k| i[k] - t * n[k]).collect();
    assert_eq!(eval_f32s(&p, "refl(vec3(0.6, 0.0, -0.8), vec3(0.0, 0.0, 1.0))"), want);

    let refract = |eta: f32| -> Vec<f32> {
        let d = dot(n, i);
        let k = 1.0 - eta * eta * (1.0 - d * d);
        if k < 0.0 {
            vec![0.0; 3]
        } else {
            (0..3).map(|c| eta * i[c] - (eta * d + k.sqrt()) * n[c]).collect()
        }
    };
    assert_eq!(eval_f32s(&p, "refr(vec3(0.6, 0.0, -0.8), vec3(0.0, 0.0, 1.0), 0.75)"), refract(0.75));
    // Total internal reflection.
    assert_eq!(eval_f32s(&p, "refr(vec3(0.6, 0.0, -0.8), vec3(0.0, 0.0, 1.0), 1.8)"), refract(1.8));
    assert_eq!(refract(1.8), vec![0.0; 3]);
}

#[test]
fn matrix_functions() {
    let p = compile(
        r#"
        fn t3(m: mat3) -> mat3 { transpose(m) }
        fn det3(m: mat3) -> f32 { determinant(m) }
        fn det4(m: mat4) -> f32 { determinant(m) }
        fn inv3(m: mat3) -> mat3 { inverse(m) }
        fn inv4(m: mat4) -> mat4 { inverse(m) }
        fn check4(m: mat4) -> mat4 { m * inverse(m) }
        "#,
    );
    let a = "mat3(vec3(1.0, 2.0, 3.0), vec3(4.0, 5.0, 6.0), vec3(7.0, 8.0, 9.0))";
    assert_eq!(eval(&p, &format!("t3({a})")), "[[1.0, 4.0, 7.0], [2.0, 5.0, 8.0], [3.0, 6.0, 9.0]]");
    assert_eq!(eval(&p, &format!("det3({a})")), "0.0");
    // Columns (2,0,0), (0,3,0), (1,0,4): det = 24; inverse by hand.
    let b = "mat3(vec3(2.0, 0.0, 0.0), vec3(0.0, 3.0, 0.0), vec3(1.0, 0.0, 4.0))";
    assert_eq!(eval(&p, &format!("det3({b})")), "24.0");
    // (Cofactors of zero minors may be -0.0, which compares equal to 0.0.)
    assert_eq!(eval_f32s(&p, &format!("inv3({b})")), [0.5, 0.0, 0.0, 0.0, 1.0 / 3.0, 0.0, -0.125, 0.0, 0.25]);
    // A translation and scale: det 8, inverse exact.
    let m =
        "mat4(vec4(2.0, 0.0, 0.0, 0.0), vec4(0.0, 2.0, 0.0, 0.0), vec4(0.0, 0.0, 2.0, 0.0), vec4(1.0, 2.0, 3.0, 1.0))";
    assert_eq!(eval(&p, &format!("det4({m})")), "8.0");
    assert_eq!(
        eval_f32s(&p, &format!("inv4({m})")),
        [0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, -0.5, -1.0, -1.5, 1.0]
    );
    // A general matrix times its inverse is the identity, up to rounding.
    let g = "mat4(vec4(4.0, 1.0, 0.5, 0.0), vec4(-1.0, 3.0, 0.0, 2.0), vec4(0.25, 0.0, 5.0, 1.0), vec4(1.0, -2.0, 1.0, 6.0))";
    let r = eval_f32s(&p, &format!("check4({g})"));
    for (k, x) in r.iter().enumerate() {
        let want = if k / 4 == k % 4 { 1.0 } else { 0.0 };
        assert!((x - want).abs() < 1e-5, "element {k}: {x}");
    }
    // Laplace expansion of a general 4x4 determinant, checked in f64.
    let cols = [[4.0f64, 1.0, 0.5, 0.0], [-1.0, 3.0, 0.0, 2.0], [0.25, 0.0, 5.0, 1.0], [1.0, -2.0, 1.0, 6.0]];
    let det = det_f64(&cols);
    assert!((eval_f32(&p, &format!("det4({g})")) as f64 - det).abs() < 1e-3, "{det}");
}

fn det_f64(cols: &[[f64; 4]; 4]) -> f64 {
    // Gaussian elimination on rows r, columns c: a[r][c] = cols[c][r].
    let mut a = [[0.0f64; 4]; 4];
    for (c, col) in cols.iter().enumerate() {
        for (r, &x) in col.iter().enumerate() {
            a[r][c] = x;
        }
    }
    let mut det = 1.0;
    for i in 0..4 {
        let pivot = (i..4).max_by(|&x, &y| a[x][i].abs().total_cmp(&a[y][i].abs())).unwrap();
        if pivot != i {
            a.swap(i, pivot);
            det = -det;
        }
        det *= a[i][i];
        let pivot_row = a[i];
        for row in a.iter_mut().skip(i + 1) {
            let f = row[i] / pivot_row[i];
            for (x, p) in row.iter_mut().zip(pivot_row).skip(i) {
                *x -= f * p;
            }
        }
    }
    det
}

#[test]
fn derivative_controls_pass_values_through() {
    let p = compile(
        r#"
        struct S { x: f32, n: i32 }
        fn d(v: vec3, s: S) -> (vec3, S) { (detach(v), detach(s)) }
        fn r(a: Color, b: Color) -> Color { replace_grad(a, b) }
        "#,
    );
    assert_eq!(eval(&p, "d(vec3(1.0, 2.0, 3.0), S { x: 4.0, n: 5 })"), "([1.0, 2.0, 3.0], S { x: 4.0, n: 5 })");
    assert_eq!(eval(&p, "r(Color(1.0, 2.0, 3.0), Color(7.0))"), "[1.0, 2.0, 3.0]");
    let text = drs_ir::print_module(&p.lowered.module);
    assert_eq!(text.matches("detach").count(), 4, "{text}");
    assert_eq!(text.matches("replace_grad").count(), 3, "{text}");
}
