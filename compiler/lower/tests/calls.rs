//! Calls: methods of structs and extern types, extern functions bound to host functions,
//! plugin methods reading their params from buffers, calls through plugin references and
//! textures, and functions that cannot be lowered yet.

mod common;
use common::*;
use drs_lower::LowerError;
use std::sync::{Arc, Mutex};

#[test]
fn struct_methods_and_associated_functions() {
    let p = compile(
        r#"
        struct Basis { s: vec3, t: vec3, n: vec3 }
        impl Basis {
            fn to_local(self, v: vec3) -> vec3 { vec3(dot(v, self.s), dot(v, self.t), dot(v, self.n)) }
            fn standard() -> Basis { Basis { s: vec3(1.0, 0.0, 0.0), t: vec3(0.0, 1.0, 0.0), n: vec3(0.0, 0.0, 1.0) } }
            fn flipped(self) -> Basis { Basis { s: self.t, t: self.s, n: -self.n } }
        }
        fn demo(v: vec3) -> (vec3, vec3) {
            let b = Basis::standard().flipped();
            (b.to_local(v), Basis::to_local(b, v))
        }
        "#,
    );
    assert_eq!(eval(&p, "demo(vec3(1.0, 2.0, 3.0))"), "([2.0, 1.0, -3.0], [2.0, 1.0, -3.0])");
    let names: Vec<&str> = p.lowered.module.functions.iter().map(|f| f.name.as_str()).collect();
    assert!(names.contains(&"Basis::to_local") && names.contains(&"Basis::standard"), "{names:?}");
    let f = &p.lowered.module.functions[p.lowered.module.find("Basis::to_local").unwrap().0 as usize];
    let params: Vec<&str> = f.params.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(
        params,
        [
            "self.s.x", "self.s.y", "self.s.z", "self.t.x", "self.t.y", "self.t.z", "self.n.x", "self.n.y", "self.n.z",
            "v.x", "v.y", "v.z"
        ]
    );
}

#[test]
fn extern_functions_and_extern_type_methods() {
    let p = compile(
        r#"
        extern type Counter;
        impl Counter {
            extern fn next(self) -> u32;
            fn next_f32(self) -> f32 { f32(self.next()) * 0.5 }
        }
        extern fn make_counter(start: u32) -> Counter;
        extern fn swap(v: vec2) -> (f32, f32);
        fn use_counter() -> (f32, u32) { let c = make_counter(7u); let x = c.next_f32(); (x, c.next()) }
        fn use_swap(v: vec2) -> f32 { let (a, b) = swap(v); a - b }
        "#,
    );
    let ext = &p.lowered.module.externs;
    let decl = |name: &str| ext.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("no extern {name}: {ext:?}"));
    assert_eq!(decl("Counter::next").params, [drs_ir::Ty::U32]);
    assert_eq!(decl("swap").params, [drs_ir::Ty::F32, drs_ir::Ty::F32]);
    let state = Arc::new(Mutex::new(Vec::<u32>::new()));
    let s1 = state.clone();
    let s2 = state.clone();
    let out = eval_with(&p, "use_counter()", move |i| {
        assert!(i.bind_extern(
            "make_counter",
            Box::new(move |args| {
                s1.lock().unwrap().push(args[0]);
                vec![42]
            })
        ));
        assert!(i.bind_extern(
            "Counter::next",
            Box::new(move |args| {
                // The handle comes first.
                assert_eq!(args, [42]);
                let mut s = s2.lock().unwrap();
                let n = s[0];
                s[0] += 1;
                vec![n]
            })
        ));
    });
    assert_eq!(out, "(3.5, 8)");
    let out = eval_with(&p, "use_swap(vec2(1.0, 5.0))", |i| {
        i.bind_extern("swap", Box::new(|args| vec![args[1], args[0]]));
    });
    assert_eq!(out, "4.0");
}

#[test]
fn plugin_methods_read_params_from_buffers() {
    let p = compile(
        r#"
        texture Grid {
            param tint: Color = Color(1.0, 0.5, 0.25);
            param scale: f32 = 2.0;
            param cells: ivec2 = ivec2(4, 8);
            @no_diff param on: bool = true;

            fn eval(si: SurfaceInteraction) -> Color { if on { tint * eval_1(si) } else { Color(0.0) } }
            fn eval_1(si: SurfaceInteraction) -> f32 { scale * f32(cells.x + cells.y) + si.uv.x }
            fn mean() -> f32 { scale }
        }
        "#,
    );
    let grid = p.lowered.plugins.iter().find(|g| g.name == "Grid").expect("plugin layout");
    let names: Vec<String> = grid
        .params
        .iter()
        .flat_map(|q| q.buffers.iter().map(|&b| p.lowered.module.buffers[b as usize].name.clone()))
        .collect();
    assert_eq!(
        names,
        [
            "Grid.tint[0]",
            "Grid.tint[1]",
            "Grid.tint[2]",
            "Grid.scale[0]",
            "Grid.cells[0]",
            "Grid.cells[1]",
            "Grid.on[0]"
        ]
    );
    let defaults: Vec<String> = grid.params.iter().map(|q| q.default.as_ref().unwrap().to_string()).collect();
    assert_eq!(defaults, ["[1.0, 0.5, 0.25]", "2.0", "[4, 8]", "true"]);
    assert!(grid.params[3].no_diff);

    // Instance 1 of the plugin: buffers hold [instance 0, instance 1].
    let fill = |i: &mut drs_interp::Interpreter, on: bool| {
        let values: [[u32; 2]; 7] = [
            [0, 2.0f32.to_bits()],
            [0, 3.0f32.to_bits()],
            [0, 4.0f32.to_bits()],
            [0, 0.5f32.to_bits()],
            [0, 1],
            [0, 2],
            [0, on as u32],
        ];
        for (b, v) in values.iter().enumerate() {
            i.buffers[b] = v.to_vec();
        }
    };
    let f = p.find_fn("Grid::eval").unwrap();
    let layout = drs_lower::FnLayout::of(&p.program, f);
    assert!(layout.instance);
    let mut args = vec![1u32];
    let si = layout.params[0].1.scalar_types().len();
    args.extend(std::iter::repeat_n(0, si));
    // si.uv.x is the 5th..: find it by name.
    let ir = &p.lowered.module.functions[p.lowered.functions[&f].0 as usize];
    let uv_x = ir.params.iter().position(|q| q.name == "si.uv.x").unwrap();
    args[uv_x] = 1.0f32.to_bits();
    let out = run_bits(&p, "Grid::eval", &args, |i| fill(i, true));
    // eval_1 = 0.5 * (1 + 2) + 1 = 2.5; tint * 2.5.
    let out: Vec<f32> = out.into_iter().map(f32::from_bits).collect();
    assert_eq!(out, [5.0, 7.5, 10.0]);
    let out = run_bits(&p, "Grid::eval", &args, |i| fill(i, false));
    assert_eq!(out, [0, 0, 0]);
    // The sibling call passes the instance along.
    let text = drs_ir::print_function(&p.lowered.module, ir);
    assert!(text.contains("call Grid::eval_1(%0,"), "{text}");
}

#[test]
fn calls_through_plugin_references_and_textures_are_dispatch_externs() {
    let p = compile(
        r#"
        fn shade(b: Bsdf, t: Texture<Color>, s: Texture<f32>, si: SurfaceInteraction, wo: vec3) -> (Color, f32, u32) {
            let ctx = BsdfContext::new(TRANSPORT_RADIANCE);
            (b.eval(ctx, si, wo) * t.eval(si), s.eval(si) + t.mean(), b.flags())
        }
        "#,
    );
    let ext = &p.lowered.module.externs;
    let decl = |name: &str| ext.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("no extern {name}: {ext:?}"));
    let si_len =
        drs_lower::Layout::of(&p.program, &p.program.functions[p.find_fn("shade").unwrap()].params[3].ty).len();
    assert_eq!(decl("bsdf::eval").params.len(), 1 + 3 + si_len + 3);
    assert_eq!(decl("bsdf::eval").results.len(), 3);
    assert_eq!(decl("texture::eval").results.len(), 3);
    assert_eq!(decl("texture::eval_1").results, [drs_ir::Ty::F32]);
    assert_eq!(decl("texture::mean").params, [drs_ir::Ty::U32]);
    assert_eq!(decl("bsdf::flags").params, [drs_ir::Ty::U32]);

    let handles = Arc::new(Mutex::new(Vec::new()));
    let (h1, h2, h3, h4, h5) = (handles.clone(), handles.clone(), handles.clone(), handles.clone(), handles.clone());
    let out = eval_with(
        &p,
        "shade(#10, #20, #30, SurfaceInteraction { t: 0.0, time: 0.0, p: 0.0, n: 0.0, uv: 0.0, \
         sh_frame: Frame { s: 0.0, t: 0.0, n: 0.0 }, dp_du: 0.0, dp_dv: 0.0, wi: 0.0, shape_id: 0u, prim_index: 0u, \
         bsdf: #1, emitter: #2, valid: true }, vec3(0.0, 0.0, 1.0))",
        move |i| {
            i.bind_extern(
                "bsdf::eval",
                Box::new(move |a| {
                    h1.lock().unwrap().push(("bsdf::eval", a[0]));
                    vec![2.0f32.to_bits(); 3]
                }),
            );
            i.bind_extern(
                "texture::eval",
                Box::new(move |a| {
                    h2.lock().unwrap().push(("texture::eval", a[0]));
                    vec![0.5f32.to_bits(), 1.0f32.to_bits(), 1.5f32.to_bits()]
                }),
            );
            i.bind_extern(
                "texture::eval_1",
                Box::new(move |a| {
                    h3.lock().unwrap().push(("texture::eval_1", a[0]));
                    vec![0.25f32.to_bits()]
                }),
            );
            i.bind_extern(
                "texture::mean",
                Box::new(move |a| {
                    h4.lock().unwrap().push(("texture::mean", a[0]));
                    vec![1.0f32.to_bits()]
                }),
            );
            i.bind_extern(
                "bsdf::flags",
                Box::new(move |a| {
                    h5.lock().unwrap().push(("bsdf::flags", a[0]));
                    vec![6]
                }),
            );
        },
    );
    assert_eq!(out, "([1.0, 2.0, 3.0], 1.25, 6)");
    assert_eq!(
        *handles.lock().unwrap(),
        [
            ("bsdf::eval", 10),
            ("texture::eval", 20),
            ("texture::eval_1", 30),
            ("texture::mean", 20),
            ("bsdf::flags", 10)
        ]
    );
}

#[test]
fn derivative_calls_lower_and_failing_derivatives_are_reported() {
    let src = r#"
        fn square(x: f32) -> f32 { x * x }
        fn slope(x: f32) -> f32 { let (y, dy) = fwd_diff(square)(x, 1.0); dy }
        fn power(x: f32) -> f32 {
            var p = 1.0;
            var i = 0;
            while i < 3 { p = p * x; i += 1; }
            p
        }
        fn power_slope(x: f32) -> f32 { bwd_diff(power)(x, 1.0) }
        fn uses_power_slope(x: f32) -> f32 { power_slope(x) + 1.0 }
        fn independent(x: f32) -> f32 { square(x) + slope(x) }
    "#;
    let p = drs_lower::lower_source("test.drs", src, &options()).unwrap();
    drs_ir::verify_module(&p.lowered.module).unwrap();
    assert_eq!(eval(&p, "slope(3.0)"), "6.0");
    assert_eq!(eval(&p, "independent(3.0)"), "15.0");
    // The reverse derivative of the unbounded loop fails at the loop, and so do its callers.
    let errors = &p.lowered.errors;
    assert_eq!(errors.len(), 3, "{}", p.render_errors());
    assert!(
        matches!(&errors[0], LowerError::Unsupported { function, message, .. }
            if function == "power" && message.contains("@max_iters")),
        "{:?}",
        errors[0]
    );
    assert!(p.render_errors().starts_with("test.drs:7:13:"), "{}", p.render_errors());
    assert!(matches!(&errors[1], LowerError::Dependency { function, .. } if function == "power_slope"));
    assert!(matches!(&errors[2], LowerError::Dependency { function, .. } if function == "uses_power_slope"));
    assert!(p.find_fn("power").is_some(), "the primal lowers");
}

#[test]
fn same_named_functions_of_two_modules_get_qualified_names() {
    // `sqr` exists in the stdlib's math module; a user `sqr` coexists with it.
    let p = compile(
        r#"
        import math;
        fn sqr(x: f32) -> f32 { x * x * x }
        fn both(x: f32) -> (f32, f32) { (sqr(x), math::sqr(x)) }
        "#,
    );
    assert_eq!(eval(&p, "both(2.0)"), "(8.0, 4.0)");
    let names: Vec<&str> =
        p.lowered.module.functions.iter().map(|f| f.name.as_str()).filter(|n| n.ends_with("sqr")).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // The user's function keeps the name; the stdlib's is qualified by its module.
    assert!(names.contains(&"math::sqr") && names.contains(&"sqr"), "{names:?}");
}
