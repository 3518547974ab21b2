//! Layouts: how `.drs` values flatten into IR scalars, their component names, and the host
//! values `drsc eval` parses and prints.

mod common;
use common::*;
use drs_ir::Ty;
use drs_lower::{split_call, HostValue, Layout};

fn layout_of_param(src: &str, f: &str, k: usize) -> Layout {
    let p = compile(src);
    let f = p.find_fn(f).unwrap();
    Layout::of(&p.program, &p.program.functions[f].params[k].ty)
}

#[test]
fn flattening_order_and_component_names() {
    let src = r#"
        struct P { a: f32, b: (ivec2, bool), c: [Color; 2] }
        fn f(m: mat3, p: P, t: Texture<Color>, u: ()) -> u32 { 0u }
    "#;
    let m = layout_of_param(src, "f", 0);
    assert_eq!(m.len(), 9);
    assert_eq!(m.component_names("m")[..4], ["m[0].x", "m[0].y", "m[0].z", "m[1].x"]);
    let p = layout_of_param(src, "f", 1);
    assert_eq!(
        p.component_names("p"),
        ["p.a", "p.b.0.x", "p.b.0.y", "p.b.1", "p.c[0].r", "p.c[0].g", "p.c[0].b", "p.c[1].r", "p.c[1].g", "p.c[1].b"]
    );
    assert_eq!(p.scalar_types()[..4], [Ty::F32, Ty::I32, Ty::I32, Ty::Bool]);
    assert_eq!(p.describe(), "P");
    let t = layout_of_param(src, "f", 2);
    assert_eq!((t.len(), t.component_names("t")), (1, vec!["t".to_string()]));
    assert_eq!(t.describe(), "Texture<Color>");
    let u = layout_of_param(src, "f", 3);
    assert!(u.is_empty());
}

#[test]
fn host_values_parse_flatten_and_print() {
    let src = r#"
        struct S { x: f32, n: i32, flags: bvec2 }
        fn f(a: vec3, b: (S, u32), c: [mat3; 1], d: Color) -> f32 { 0.0 }
    "#;
    let a = layout_of_param(src, "f", 0);
    for text in ["vec3(1.0, 2.0, 3.0)", "[1.0, 2.0, 3.0]", "vec3(vec2(1.0, 2.0), 3.0)", "vec3(1.0, vec2(2.0, 3.0))"] {
        let v = a.parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(v.to_string(), "[1.0, 2.0, 3.0]", "{text}");
        assert_eq!(a.flatten(&v).unwrap(), [1.0f32.to_bits(), 2.0f32.to_bits(), 3.0f32.to_bits()]);
    }
    assert_eq!(a.parse("0.5").unwrap().to_string(), "[0.5, 0.5, 0.5]");
    assert_eq!(a.parse("vec3(-2)").unwrap().to_string(), "[-2.0, -2.0, -2.0]");
    assert!(a.parse("vec3(1.0, 2.0)").is_err());
    assert!(a.parse("ivec3(1, 2, 3)").is_err());

    let b = layout_of_param(src, "f", 1);
    let v = b.parse("(S { n: -4, x: 1e-3, flags: bvec2(true, false) }, 0xFFu)").unwrap();
    assert_eq!(v.to_string(), "(S { x: 0.001, n: -4, flags: [true, false] }, 255)");
    let bits = b.flatten(&v).unwrap();
    assert_eq!(bits, [0.001f32.to_bits(), (-4i32) as u32, 1, 0, 255]);
    assert_eq!(b.unflatten(&bits), v);
    assert!(b.parse("(S { x: 1.0, n: 2 }, 1u)").unwrap_err().contains("flags"));

    let c = layout_of_param(src, "f", 2);
    assert_eq!(c.parse("[mat3(2.0)]").unwrap().to_string(), "[[[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]]");
    let d = layout_of_param(src, "f", 3);
    assert_eq!(d.parse("Color(0.25)").unwrap().to_string(), "[0.25, 0.25, 0.25]");
    assert_eq!(HostValue::Tuple(vec![HostValue::F32(f32::NAN)]).to_string(), "(NaN,)");
    assert_eq!(HostValue::Tuple(vec![]).to_string(), "()");
}

#[test]
fn calls_split_at_top_level_commas() {
    assert_eq!(
        split_call("f(1.0, vec3(1.0, 2.0, 3.0), [1, 2], S { a: 1, b: (2, 3) })").unwrap(),
        (
            "f".to_string(),
            vec![
                "1.0".to_string(),
                "vec3(1.0, 2.0, 3.0)".to_string(),
                "[1, 2]".to_string(),
                "S { a: 1, b: (2, 3) }".to_string()
            ]
        )
    );
    assert_eq!(split_call(" Frame::to_local( x ) ").unwrap(), ("Frame::to_local".to_string(), vec!["x".to_string()]));
    assert_eq!(split_call("g()").unwrap(), ("g".to_string(), vec![]));
    assert!(split_call("g(1, (2)").is_err());
    assert!(split_call("g").is_err());
}

#[test]
fn eval_call_reports_bad_calls() {
    let p = compile("fn f(x: f32, v: vec2) -> f32 { x + v.y }");
    assert_eq!(eval(&p, "f(1.0, vec2(2.0, 3.0))"), "4.0");
    assert!(p.eval_call("f(1.0)", |_| {}).unwrap_err().contains("takes 2 arguments"));
    assert!(p.eval_call("f(1.0, true)", |_| {}).unwrap_err().contains("argument `v`"));
    assert!(p.eval_call("nope(1.0)", |_| {}).unwrap_err().contains("no function"));
}
