//! Exact semantics of the derivative controls: custom derivatives replace the automatic
//! ones (also when nested either way), `detach` and `replace_grad` change derivatives
//! exactly as specified, `@no_diff` removes a parameter, scene parameters accumulate their
//! adjoints into gradient buffers and take tangents from tangent buffers, calls through
//! plugin references use the host derivatives, and a reverse derivative of an unbounded
//! loop is an error at the loop.

use drs_interp::Interpreter;
use drs_lower::{HostValue, LoweredProgram};
use drs_sema::LoadOptions;

fn lower(text: &str) -> LoweredProgram {
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let lp = drs_lower::lower_source("test.drs", text, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(lp.lowered.is_complete(), "{}", lp.render_errors());
    lp
}

fn eval(lp: &LoweredProgram, call: &str) -> HostValue {
    lp.eval_call(call, |_| {}).unwrap_or_else(|e| panic!("{call}: {e}"))
}

fn floats(v: &HostValue) -> Vec<f32> {
    match v {
        HostValue::F32(x) => vec![*x],
        HostValue::Tuple(items) | HostValue::List(items) => items.iter().flat_map(floats).collect(),
        HostValue::Struct(_, fields) => fields.iter().flat_map(|(_, v)| floats(v)).collect(),
        other => panic!("not a float value: {other:?}"),
    }
}

const CUSTOM: &str = r#"
fn square_bwd(x: f32, dy: f32) -> f32 {
    42.0 * dy
}

fn square_fwd(x: f32, dx: f32) -> (f32, f32) {
    (x * x, 7.0 * dx)
}

@custom_bwd(square_bwd)
@custom_fwd(square_fwd)
fn square(x: f32) -> f32 {
    x * x
}

fn outer(x: f32) -> f32 {
    square(2.0 * x) + x
}

// A custom derivative that uses an automatic one.
fn cube_bwd(x: f32, dy: f32) -> f32 {
    bwd_diff(outer)(x, dy) * 0.0 + 3.0 * x * x * dy
}

@custom_bwd(cube_bwd)
fn cube(x: f32) -> f32 {
    x * x * x
}

fn direct_bwd() -> f32 { bwd_diff(square)(3.0, 1.0) }
fn direct_fwd() -> (f32, f32) { fwd_diff(square)(3.0, 1.0) }
fn nested_bwd() -> f32 { bwd_diff(outer)(1.0, 1.0) }
fn nested_fwd() -> (f32, f32) { fwd_diff(outer)(1.0, 1.0) }
fn custom_using_auto() -> f32 { bwd_diff(cube)(2.0, 1.0) }
"#;

#[test]
fn custom_derivatives_replace_the_automatic_ones() {
    let lp = lower(CUSTOM);
    // bwd_diff(square) is square_bwd itself: 42 dy.
    assert_eq!(floats(&eval(&lp, "direct_bwd()")), [42.0]);
    assert_eq!(floats(&eval(&lp, "direct_fwd()")), [9.0, 7.0]);
    // outer(x) = square(2x) + x: d/dx = 2 * (custom 42) + 1 in reverse, 2 * 7 + 1 forward.
    assert_eq!(floats(&eval(&lp, "nested_bwd()")), [85.0]);
    assert_eq!(floats(&eval(&lp, "nested_fwd()")), [5.0, 15.0]);
    assert_eq!(floats(&eval(&lp, "custom_using_auto()")), [12.0]);
}

#[test]
fn custom_bwd_body_is_not_differentiated() {
    // The body of `square` is never reverse-differentiated: no function named
    // `bwd_diff(square)` exists, the caller's derivative calls `square_bwd`.
    let lp = lower(CUSTOM);
    let names: Vec<&str> = lp.lowered.module.functions.iter().map(|f| f.name.as_str()).collect();
    assert!(!names.contains(&"bwd_diff(square)"), "{names:?}");
    assert!(names.contains(&"bwd_diff(outer)"), "{names:?}");
    let outer = &lp.lowered.module.functions[lp.lowered.module.find("bwd_diff(outer)").unwrap().0 as usize];
    let calls_custom = drs_ir::print_function(&lp.lowered.module, outer).contains("square_bwd");
    assert!(calls_custom, "bwd_diff(outer) does not call square_bwd");
}

const CONTROLS: &str = r#"
fn detached(x: f32) -> f32 {
    detach(x * x) + 3.0 * x
}

fn straight(x: f32) -> f32 {
    replace_grad(x * x, 5.0 * x)
}

fn partly(@no_diff k: f32, x: f32) -> f32 {
    k * x * x
}

fn through_no_diff(x: f32) -> f32 {
    partly(x, x)
}

fn detach_fwd() -> (f32, f32) { fwd_diff(detached)(2.0, 1.0) }
fn detach_bwd() -> f32 { bwd_diff(detached)(2.0, 1.0) }
fn replace_fwd() -> (f32, f32) { fwd_diff(straight)(3.0, 1.0) }
fn replace_bwd() -> f32 { bwd_diff(straight)(3.0, 2.0) }
fn no_diff_bwd() -> f32 { bwd_diff(partly)(2.0, 3.0, 1.0) }
fn no_diff_call() -> f32 { bwd_diff(through_no_diff)(2.0, 1.0) }
"#;

#[test]
fn detach_replace_grad_and_no_diff_are_exact() {
    let lp = lower(CONTROLS);
    // detach(x²) + 3x: value 4 + 6, derivative 3.
    assert_eq!(floats(&eval(&lp, "detach_fwd()")), [10.0, 3.0]);
    assert_eq!(floats(&eval(&lp, "detach_bwd()")), [3.0]);
    // replace_grad(x², 5x): value 9, derivative 5.
    assert_eq!(floats(&eval(&lp, "replace_fwd()")), [9.0, 5.0]);
    assert_eq!(floats(&eval(&lp, "replace_bwd()")), [10.0]);
    // k x² with k @no_diff: only d/dx = 2 k x = 12.
    assert_eq!(floats(&eval(&lp, "no_diff_bwd()")), [12.0]);
    // partly(x, x) = x³ with the first x not differentiated: 2 x · x = 8.
    assert_eq!(floats(&eval(&lp, "no_diff_call()")), [8.0]);
}

const PARAMS: &str = r#"
texture Tint {
    param value: Color = 0.5;
    param gain: f32 = 2.0;
    @no_diff param bias: f32 = 0.25;

    fn eval(si: SurfaceInteraction) -> Color {
        value * (gain * gain) + Color(bias)
    }

    fn eval_1(si: SurfaceInteraction) -> f32 {
        luminance(eval(si))
    }

    fn mean() -> f32 {
        gain
    }
}

// A function that shades through a texture reference: the derivative calls the host
// derivative of `texture::eval`.
fn shade(t: Texture<Color>, si: SurfaceInteraction, k: f32) -> Color {
    t.eval(si) * k
}
"#;

#[test]
fn parameter_reads_scatter_gradients_and_read_tangents() {
    let mut lp = lower(PARAMS);
    let module = &lp.lowered.module;
    let eval = module.find("Tint::eval").unwrap();
    let mut d = drs_ad::Differentiator::new(&mut lp.lowered.module, &mut lp.lowered.ad);
    let bwd = d.derivative(eval, drs_ad::Mode::Bwd).unwrap();
    let fwd = d.derivative(eval, drs_ad::Mode::Fwd).unwrap();
    let module = &lp.lowered.module;
    let buffer =
        |name: &str| module.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| panic!("no buffer {name}"));
    // Two instances: value = (1, 2, 3) / (0.5, 0.5, 0.5), gain = 3 / 1.
    let mut interp = Interpreter::new(module);
    let set = |interp: &mut Interpreter, name: &str, values: &[f32]| {
        interp.buffers[buffer(name)] = values.iter().map(|v| v.to_bits()).collect();
    };
    for (k, v) in [[1.0f32, 0.5], [2.0, 0.5], [3.0, 0.5]].iter().enumerate() {
        set(&mut interp, &format!("Tint.value[{k}]"), v);
        set(&mut interp, &format!("Tint.value[{k}].grad"), &[0.0, 0.0]);
        set(&mut interp, &format!("Tint.value[{k}].tangent"), &[0.0, 0.0]);
    }
    set(&mut interp, "Tint.gain[0]", &[3.0, 1.0]);
    set(&mut interp, "Tint.gain[0].grad", &[0.0, 0.0]);
    set(&mut interp, "Tint.gain[0].tangent", &[1.0, 0.0]);
    set(&mut interp, "Tint.bias[0]", &[0.25, 0.25]);
    assert!(!module.buffers.iter().any(|b| b.name == "Tint.bias[0].grad"), "a @no_diff parameter has no gradient");
    let si_len = module.function(eval).params.len() - 1;
    let mut args = vec![0u32; 1 + si_len];
    // Instance 0, output adjoint (1, 10, 100).
    args.extend([1.0f32, 10.0, 100.0].map(f32::to_bits));
    interp.call(bwd, &args).unwrap();
    let read = |interp: &Interpreter, name: &str| -> Vec<f32> {
        interp.buffers[buffer(name)].iter().map(|b| f32::from_bits(*b)).collect()
    };
    // d(value_k gain²)/d value_k = gain² = 9; d/d gain = 2 gain Σ value_k adj_k = 6 · 321.
    assert_eq!(read(&interp, "Tint.value[0].grad"), [9.0, 0.0]);
    assert_eq!(read(&interp, "Tint.value[1].grad"), [90.0, 0.0]);
    assert_eq!(read(&interp, "Tint.value[2].grad"), [900.0, 0.0]);
    assert_eq!(read(&interp, "Tint.gain[0].grad"), [6.0 * 321.0, 0.0]);
    // Accumulates: a second call adds again.
    interp.call(bwd, &args).unwrap();
    assert_eq!(read(&interp, "Tint.value[0].grad"), [18.0, 0.0]);
    // Forward mode with the tangent seeded on gain (instance 0): d/dgain = 2 gain value.
    let fwd_args = vec![0u32; module.function(fwd).params.len()];
    let out = interp.call(fwd, &fwd_args).unwrap();
    let tangents: Vec<f32> = out[3..].iter().map(|b| f32::from_bits(*b)).collect();
    assert_eq!(tangents, [6.0, 12.0, 18.0]);
}

#[test]
fn calls_through_plugin_references_use_host_derivatives() {
    let mut lp = lower(PARAMS);
    let shade = lp.lowered.module.find("shade").unwrap();
    let mut d = drs_ad::Differentiator::new(&mut lp.lowered.module, &mut lp.lowered.ad);
    let bwd = d.derivative(shade, drs_ad::Mode::Bwd).unwrap();
    let module = &lp.lowered.module;
    let host =
        module.externs.iter().find(|e| e.name == "bwd_diff(texture::eval)").expect("the host derivative is declared");
    // texture::eval(handle, si...) -> Color: the host derivative takes the arguments and the
    // colour's adjoint, and returns an adjoint per argument.
    let primal = module.externs.iter().find(|e| e.name == "texture::eval").unwrap();
    assert_eq!(host.params.len(), primal.params.len() + 3);
    assert_eq!(host.results, primal.params);
    let mut interp = Interpreter::new(module);
    interp.bind_extern("texture::eval", Box::new(|_args: &[u32]| vec![2f32.to_bits(); 3]));
    // The host derivative records the adjoint of the colour it receives after the arguments.
    let n = primal.params.len();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    interp.bind_extern(
        "bwd_diff(texture::eval)",
        Box::new(move |args: &[u32]| {
            record.lock().unwrap().push(args[n..].iter().map(|b| f32::from_bits(*b)).collect::<Vec<f32>>());
            vec![0u32; n]
        }),
    );
    let f = module.function(shade);
    let mut args = vec![0u32; f.params.len()];
    *args.last_mut().unwrap() = 0.5f32.to_bits(); // k
    args.extend([1.0f32, 0.0, 0.0].map(f32::to_bits));
    let out = interp.call(bwd, &args).unwrap();
    // d/dk = t.eval(si) · adj = 2 (red channel only); the texture receives k · adj.
    assert_eq!(f32::from_bits(*out.last().unwrap()), 2.0);
    assert_eq!(*seen.lock().unwrap(), [vec![0.5, 0.0, 0.0]]);
}

#[test]
fn reverse_derivative_of_an_unbounded_loop_is_an_error_at_the_loop() {
    let text = r#"
fn accumulate(x: f32) -> f32 {
    var s = x;
    var i = 0;
    while i < 10 {
        s = s * x;
        i += 1;
    }
    s
}

fn gradient(x: f32) -> f32 {
    bwd_diff(accumulate)(x, 1.0)
}

fn forward_is_fine(x: f32) -> (f32, f32) {
    fwd_diff(accumulate)(x, 1.0)
}
"#;
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let lp = drs_lower::lower_source("loop.drs", text, &options).unwrap();
    let errors = lp.render_errors();
    assert!(errors.contains("loop.drs:5:5:"), "{errors}");
    assert!(errors.contains("@max_iters"), "{errors}");
    assert!(errors.contains("@custom_bwd"), "{errors}");
    assert!(errors.contains("`gradient`"), "the caller fails too: {errors}");
    assert!(lp.find_fn("forward_is_fine").is_some(), "forward mode of any loop works");
    assert!(lp.find_fn("accumulate").is_some(), "the primal still lowers");
}
