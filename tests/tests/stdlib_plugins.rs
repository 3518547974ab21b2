//! The standard library's emitters, textures and integrators, run by the reference
//! interpreter and checked against analytic results.
//!
//! A small host world stands in for the runtime: a call through a plugin reference
//! (`emitter::sample_direction`, `bsdf::eval`, `texture::eval`, ...) runs the method of the
//! plugin instance its handle names, as the runtime's kernel linker will dispatch it; handle 0
//! is the null instance of every kind (all results zero). The scene, the sampler and shape
//! sampling are host functions each test provides.

use drs_interp::Interpreter;
use drs_ir::{FuncId, Module};
use drs_lower::{FnLayout, HostValue, Layout, LoweredProgram};
use drs_sema::LoadOptions;
use drs_tests::Uniforms;
use std::f64::consts::PI;
use std::sync::{Arc, Mutex};

// ------------------------------------------------------------------------------- harness

/// The whole standard library, lowered; every function must lower.
fn stdlib() -> LoweredProgram {
    let mut files = Vec::new();
    files.extend(drs_tests::drs_files_under(&drs_sema::bundled_stdlib_dir()));
    files.sort();
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let lp = drs_lower::lower_files(&files, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(lp.lowered.is_complete(), "{}", lp.render_errors());
    lp
}

const PLUGIN_KINDS: [&str; 6] = ["bsdf", "emitter", "texture", "medium", "phase", "integrator"];

/// A host function of the test: the extern's name and arguments; `None` if not provided.
type Host = dyn Fn(&str, &[u32]) -> Option<Vec<u32>> + Send + Sync;

/// Plugin instances with their parameter buffers, and the host functions of one test.
#[derive(Clone)]
struct World {
    module: Arc<Module>,
    buffers: Arc<Vec<Vec<u32>>>,
    /// The (plugin, instance) each handle names; index 0 is the null instance.
    handles: Arc<Vec<(String, u32)>>,
    host: Arc<Host>,
}

impl World {
    /// An interpreter with this world's buffers and every extern bound.
    fn interpreter(&self) -> Interpreter<'_> {
        let mut interp = Interpreter::new(&self.module);
        interp.buffers = (*self.buffers).clone();
        for e in &self.module.externs {
            let world = self.clone();
            let (name, results) = (e.name.clone(), e.results.len());
            interp.bind_extern(&e.name, Box::new(move |args| world.call_extern(&name, results, args)));
        }
        interp
    }

    fn call_extern(&self, name: &str, results: usize, args: &[u32]) -> Vec<u32> {
        match name.split_once("::") {
            Some((kind, method)) if PLUGIN_KINDS.contains(&kind) => self.dispatch(method, results, args),
            _ => (self.host)(name, args).unwrap_or_else(|| panic!("the test world does not provide `{name}`")),
        }
    }

    /// A call through a plugin reference: `args[0]` is the handle.
    fn dispatch(&self, method: &str, results: usize, args: &[u32]) -> Vec<u32> {
        if args[0] == 0 {
            return vec![0; results];
        }
        let (plugin, instance) = &self.handles[args[0] as usize];
        let name = format!("{plugin}::{method}");
        let f = self.module.find(&name).unwrap_or_else(|| panic!("no function `{name}`"));
        let mut call_args = vec![*instance];
        call_args.extend_from_slice(&args[1..]);
        self.interpreter().call(f, &call_args).unwrap_or_else(|t| panic!("{name}: {t}"))
    }
}

/// Builds a [`World`]: plugin instances with parameters (defaults where not given).
struct WorldBuilder<'a> {
    lp: &'a LoweredProgram,
    buffers: Vec<Vec<u32>>,
    handles: Vec<(String, u32)>,
}

impl<'a> WorldBuilder<'a> {
    fn new(lp: &'a LoweredProgram) -> Self {
        WorldBuilder {
            lp,
            buffers: vec![Vec::new(); lp.lowered.module.buffers.len()],
            handles: vec![("null".into(), 0)],
        }
    }

    /// Adds an instance of `plugin`; params not in `params` take their defaults (texture and
    /// plugin references: the null handle). Returns its handle.
    fn instance(&mut self, plugin: &str, params: &[(&str, HostValue)]) -> u32 {
        let layout = self.lp.lowered.plugins.iter().find(|p| p.name == plugin).expect("the plugin exists");
        for (name, _) in params {
            assert!(layout.params.iter().any(|p| p.name == *name), "`{plugin}` has no param `{name}`");
        }
        let instance = self.handles.iter().filter(|(p, _)| p == plugin).count();
        for param in &layout.params {
            let given = params.iter().find(|(n, _)| *n == param.name).map(|(_, v)| v.clone());
            let value = given.or_else(|| param.default.clone().filter(|_| !matches!(param.layout, Layout::Handle(_))));
            let bits = match value {
                Some(v) => param.layout.flatten(&v).unwrap_or_else(|e| panic!("{plugin}.{}: {e}", param.name)),
                None => vec![0; param.layout.len()],
            };
            for (&buffer, bits) in param.buffers.iter().zip(bits) {
                let buffer = &mut self.buffers[buffer as usize];
                buffer.resize(buffer.len().max(instance + 1), 0);
                buffer[instance] = bits;
            }
        }
        self.handles.push((plugin.to_string(), instance as u32));
        (self.handles.len() - 1) as u32
    }

    fn build(self, host: impl Fn(&str, &[u32]) -> Option<Vec<u32>> + Send + Sync + 'static) -> World {
        World {
            module: Arc::new(self.lp.lowered.module.clone()),
            buffers: Arc::new(self.buffers),
            handles: Arc::new(self.handles),
            host: Arc::new(host),
        }
    }
}

/// Calls the function at `path` (a plugin method on the instance behind `handle`) with host
/// values as arguments.
fn call(lp: &LoweredProgram, world: &World, path: &str, handle: u32, args: &[HostValue]) -> HostValue {
    let f = lp.find_fn(path).unwrap_or_else(|| panic!("no function `{path}`"));
    let layout = FnLayout::of(&lp.program, f);
    let mut bits = Vec::new();
    if layout.instance {
        bits.push(world.handles[handle as usize].1);
    }
    assert_eq!(args.len(), layout.params.len(), "arguments of `{path}`");
    for ((name, l), v) in layout.params.iter().zip(args) {
        bits.extend(l.flatten(v).unwrap_or_else(|e| panic!("`{path}` argument `{name}`: {e}")));
    }
    let id: FuncId = lp.lowered.functions[&f];
    let out = world.interpreter().call(id, &bits).unwrap_or_else(|t| panic!("{path}: {t}"));
    layout.ret.unflatten(&out)
}

/// The layout of parameter `index` of the function at `path`.
fn param_layout(lp: &LoweredProgram, path: &str, index: usize) -> Layout {
    let f = lp.find_fn(path).unwrap_or_else(|| panic!("no function `{path}`"));
    FnLayout::of(&lp.program, f).params[index].1.clone()
}

/// A plugin instance's params: (name, value).
type Params = Vec<(&'static str, HostValue)>;

/// Host functions every world has: the null plugin references.
fn nulls(name: &str, _args: &[u32]) -> Option<Vec<u32>> {
    matches!(name, "null_bsdf" | "null_emitter" | "null_medium").then(|| vec![0])
}

// ---------------------------------------------------------------------- values on the host

fn f(x: f32) -> HostValue {
    HostValue::F32(x)
}

fn v2(x: f32, y: f32) -> HostValue {
    HostValue::List(vec![f(x), f(y)])
}

fn v3(v: [f32; 3]) -> HostValue {
    HostValue::List(v.iter().map(|&x| f(x)).collect())
}

fn strukt(name: &str, fields: Vec<(&str, HostValue)>) -> HostValue {
    HostValue::Struct(name.into(), fields.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn interaction(p: [f32; 3], n: [f32; 3]) -> HostValue {
    strukt("Interaction", vec![("t", f(0.0)), ("time", f(0.0)), ("p", v3(p)), ("n", v3(n))])
}

/// A surface interaction at p on a surface with normal +z (frame x, y, z), seen from wi (local).
fn surface(p: [f32; 3], uv: [f32; 2], wi: [f32; 3], bsdf: u32, emitter: u32, valid: bool) -> HostValue {
    strukt(
        "SurfaceInteraction",
        vec![
            ("t", f(if valid { 1.0 } else { f32::INFINITY })),
            ("time", f(0.0)),
            ("p", v3(p)),
            ("n", v3([0.0, 0.0, 1.0])),
            ("uv", v2(uv[0], uv[1])),
            (
                "sh_frame",
                strukt(
                    "Frame",
                    vec![("s", v3([1.0, 0.0, 0.0])), ("t", v3([0.0, 1.0, 0.0])), ("n", v3([0.0, 0.0, 1.0]))],
                ),
            ),
            ("dp_du", v3([1.0, 0.0, 0.0])),
            ("dp_dv", v3([0.0, 1.0, 0.0])),
            ("wi", v3(wi)),
            ("shape_id", HostValue::U32(0)),
            ("prim_index", HostValue::U32(0)),
            ("bsdf", HostValue::Handle(bsdf)),
            ("emitter", HostValue::Handle(emitter)),
            ("valid", HostValue::Bool(valid)),
        ],
    )
}

fn uv_point(u: f32, v: f32) -> HostValue {
    surface([0.0; 3], [u, v], [0.0, 0.0, 1.0], 0, 0, true)
}

fn field<'v>(v: &'v HostValue, name: &str) -> &'v HostValue {
    match v {
        HostValue::Struct(_, fields) => {
            &fields.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no field `{name}` in {v}")).1
        }
        other => panic!("not a struct: {other}"),
    }
}

fn item(v: &HostValue, i: usize) -> &HostValue {
    match v {
        HostValue::Tuple(items) | HostValue::List(items) => &items[i],
        other => panic!("not a tuple: {other}"),
    }
}

fn float(v: &HostValue) -> f32 {
    match v {
        HostValue::F32(x) => *x,
        other => panic!("not a float: {other}"),
    }
}

fn boolean(v: &HostValue) -> bool {
    match v {
        HostValue::Bool(b) => *b,
        other => panic!("not a bool: {other}"),
    }
}

fn floats3(v: &HostValue) -> [f32; 3] {
    [float(item(v, 0)), float(item(v, 1)), float(item(v, 2))]
}

fn assert_close(actual: f32, expected: f64, rel: f64, what: &str) {
    let err = (actual as f64 - expected).abs();
    assert!(err <= rel * expected.abs().max(1e-30), "{what}: {actual} but {expected} expected (relative error {rel})");
}

fn assert_close3(actual: [f32; 3], expected: [f64; 3], rel: f64, what: &str) {
    for c in 0..3 {
        assert_close(actual[c], expected[c], rel, &format!("{what}[{c}]"));
    }
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|x| x.to_bits()).collect()
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn wide(v: [f32; 3]) -> [f64; 3] {
    v.map(f64::from)
}

// ---------------------------------------------------------------------------- area light

/// The area light's shape: the rectangle [-1, 1] x [-1.5, 1.5] in the plane z = 1, facing -z
/// (area 6), sampled uniformly as the runtime's shape_sample_position does.
const LIGHT_HALF: [f32; 2] = [1.0, 1.5];
const LIGHT_Z: f32 = 1.0;
const LIGHT_AREA: f64 = 6.0;
const RADIANCE: [f32; 3] = [1.5, 2.5, 4.0];

fn rectangle_light_host(name: &str, args: &[u32]) -> Option<Vec<u32>> {
    let arg = |i: usize| f32::from_bits(args[i]);
    match name {
        // shape_sample_position(shape, time, sample) -> PositionSample
        "shape_sample_position" => {
            assert_eq!(args[0], 3, "the runtime's shape index reaches the host");
            let (x, y) = (LIGHT_HALF[0] * (2.0 * arg(2) - 1.0), LIGHT_HALF[1] * (2.0 * arg(3) - 1.0));
            let mut out = bits(&[x, y, LIGHT_Z, 0.0, 0.0, -1.0, arg(2), arg(3), arg(1), (1.0 / LIGHT_AREA) as f32]);
            out.push(0); // delta: false
            Some(out)
        }
        "shape_pdf_position" => Some(bits(&[(1.0 / LIGHT_AREA) as f32])),
        _ => nulls(name, args),
    }
}

fn area_light_world(lp: &LoweredProgram) -> (World, u32) {
    let mut b = WorldBuilder::new(lp);
    let texture = b.instance("SRgb", &[("value", v3(RADIANCE))]);
    let area = b.instance("Area", &[("radiance", HostValue::Handle(texture)), ("shape", HostValue::U32(3))]);
    (b.build(rectangle_light_host), area)
}

/// Solid angle of the rectangle [x1, x2] x [y1, y2] at height h above the reference point
/// (inclusion-exclusion over the corners of the rectangle with a corner above the point:
/// atan(x y / (h sqrt(x^2 + y^2 + h^2)))).
fn rectangle_solid_angle(x: [f64; 2], y: [f64; 2], h: f64) -> f64 {
    let corner = |x: f64, y: f64| (x * y / (h * (x * x + y * y + h * h).sqrt())).atan();
    corner(x[1], y[1]) - corner(x[0], y[1]) - corner(x[1], y[0]) + corner(x[0], y[0])
}

#[test]
fn area_light_samples_agree_with_its_density_and_radiance() {
    let lp = stdlib();
    let (world, area) = area_light_world(&lp);
    let mut rng = Uniforms(1);
    for _ in 0..200 {
        let x = [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-2.0, 0.9)];
        let it = interaction(x, [0.0, 0.0, 1.0]);
        let sample = v2(rng.next_f32(), rng.next_f32());
        let out = call(&lp, &world, "Area::sample_direction", area, &[it.clone(), sample]);
        let (ds, weight) = (item(&out, 0), floats3(item(&out, 1)));
        let pdf = float(field(ds, "pdf"));
        // Independent density: p_A |y - x|^2 / |cos theta_y| in f64.
        let y = wide(floats3(field(ds, "p")));
        let to_light = sub(y, wide(x));
        let dist2 = dot(to_light, to_light);
        let cos_light = to_light[2] / dist2.sqrt();
        assert_close(pdf, dist2 / (LIGHT_AREA * cos_light), 1e-5, "sample pdf");
        assert_close(float(field(ds, "dist")), dist2.sqrt(), 1e-6, "dist");
        let d = wide(floats3(field(ds, "d")));
        assert_close(dot(d, to_light) as f32, dist2.sqrt(), 1e-5, "d points at the sample");
        assert!(!boolean(field(ds, "delta")));
        let pdf_direction = float(&call(&lp, &world, "Area::pdf_direction", area, &[it.clone(), ds.clone()]));
        assert_close(pdf_direction, pdf as f64, 1e-6, "pdf_direction");
        let radiance = floats3(&call(&lp, &world, "Area::eval_direction", area, &[it, ds.clone()]));
        assert_eq!(radiance, RADIANCE);
        assert_close3(weight, wide(radiance).map(|r| r / pdf as f64), 1e-6, "weight = radiance / pdf");
    }
}

#[test]
fn area_light_is_dark_from_behind() {
    let lp = stdlib();
    let (world, area) = area_light_world(&lp);
    let mut rng = Uniforms(2);
    for _ in 0..50 {
        let x = [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(1.1, 3.0)];
        let it = interaction(x, [0.0, 0.0, 1.0]);
        let out = call(&lp, &world, "Area::sample_direction", area, &[it.clone(), v2(rng.next_f32(), rng.next_f32())]);
        let ds = item(&out, 0);
        assert_eq!(float(field(ds, "pdf")), 0.0);
        assert_eq!(floats3(item(&out, 1)), [0.0; 3]);
        assert_eq!(float(&call(&lp, &world, "Area::pdf_direction", area, &[it.clone(), ds.clone()])), 0.0);
        assert_eq!(floats3(&call(&lp, &world, "Area::eval_direction", area, &[it, ds.clone()])), [0.0; 3]);
    }
    // Seen along the normal (wi.z > 0 in the local frame) it glows; from behind it does not.
    let front = surface([0.0; 3], [0.5, 0.5], [0.0, 0.6, 0.8], 0, area, true);
    let back = surface([0.0; 3], [0.5, 0.5], [0.0, 0.6, -0.8], 0, area, true);
    assert_eq!(floats3(&call(&lp, &world, "Area::eval", area, &[front])), RADIANCE);
    assert_eq!(floats3(&call(&lp, &world, "Area::eval", area, &[back])), [0.0; 3]);
}

/// E[1 / pdf] over the area light's direction samples is the solid angle it subtends; and
/// pdf_direction integrates to 1 over the directions that see it (which all lie in the upper
/// hemisphere of these reference points).
#[test]
fn area_light_density_integrates_to_one_over_its_solid_angle() {
    let lp = stdlib();
    let (world, area) = area_light_world(&lp);
    for (k, x) in [[0.0f32, 0.0, 0.0], [0.7, -2.0, -0.5], [2.5, 1.0, 0.5]].into_iter().enumerate() {
        let h = (LIGHT_Z - x[2]) as f64;
        let xs = [-LIGHT_HALF[0] as f64 - x[0] as f64, LIGHT_HALF[0] as f64 - x[0] as f64];
        let ys = [-LIGHT_HALF[1] as f64 - x[1] as f64, LIGHT_HALF[1] as f64 - x[1] as f64];
        let solid_angle = rectangle_solid_angle(xs, ys, h);
        let it = interaction(x, [0.0, 0.0, 1.0]);

        // Sampling: 64 x 64 stratified samples, so the estimate is within 0.5% of the truth.
        let n = 64;
        let mut sum = 0.0;
        for i in 0..n * n {
            let sample = v2(((i % n) as f32 + 0.5) / n as f32, ((i / n) as f32 + 0.5) / n as f32);
            let out = call(&lp, &world, "Area::sample_direction", area, &[it.clone(), sample]);
            sum += 1.0 / float(field(item(&out, 0), "pdf")) as f64;
        }
        let estimate = sum / (n * n) as f64;
        assert!(
            (estimate / solid_angle - 1.0).abs() < 5e-3,
            "point {k}: E[1/pdf] = {estimate}, solid angle {solid_angle}"
        );

        // The density over the upper hemisphere, 128 x 128 stratified uniform directions
        // (pdf 1 / 2 pi); directions that miss the light have density 0 without a call.
        let n = 128;
        let mut integral = 0.0;
        let mut rng = Uniforms(3 + k as u64);
        for i in 0..n * n {
            let u = ((i % n) as f64 + rng.next_f32() as f64) / n as f64;
            let v = ((i / n) as f64 + rng.next_f32() as f64) / n as f64;
            let (z, phi) = (u, 2.0 * PI * v);
            let r = (1.0 - z * z).max(0.0).sqrt();
            let d = [r * phi.cos(), r * phi.sin(), z];
            let t = h / z;
            let y = [x[0] as f64 + t * d[0], x[1] as f64 + t * d[1]];
            if y[0].abs() > LIGHT_HALF[0] as f64 || y[1].abs() > LIGHT_HALF[1] as f64 {
                continue;
            }
            let ds = strukt(
                "DirectionSample",
                vec![
                    ("p", v3([y[0] as f32, y[1] as f32, LIGHT_Z])),
                    ("n", v3([0.0, 0.0, -1.0])),
                    ("uv", v2(0.0, 0.0)),
                    ("time", f(0.0)),
                    ("pdf", f(0.0)),
                    ("delta", HostValue::Bool(false)),
                    ("d", v3(d.map(|c| c as f32))),
                    ("dist", f(t as f32)),
                    ("emitter", HostValue::Handle(area)),
                ],
            );
            integral += float(&call(&lp, &world, "Area::pdf_direction", area, &[it.clone(), ds])) as f64;
        }
        let integral = integral * 2.0 * PI / (n * n) as f64;
        assert!((integral - 1.0).abs() < 0.02, "point {k}: the density integrates to {integral}");
    }
}

// ------------------------------------------------------------------ other emitters, textures

#[test]
fn constant_environment_samples_the_sphere_uniformly() {
    let lp = stdlib();
    let mut b = WorldBuilder::new(&lp);
    let texture = b.instance("SRgb", &[("value", v3(RADIANCE))]);
    let constant = b.instance("Constant", &[("radiance", HostValue::Handle(texture))]);
    let world = b.build(nulls);
    let mut rng = Uniforms(4);
    let mut mean_d = [0.0f64; 3];
    let n = 400;
    for _ in 0..n {
        let x = [rng.range(-5.0, 5.0), rng.range(-5.0, 5.0), rng.range(-5.0, 5.0)];
        let it = interaction(x, [0.0, 1.0, 0.0]);
        let out = call(
            &lp,
            &world,
            "Constant::sample_direction",
            constant,
            &[it.clone(), v2(rng.next_f32(), rng.next_f32())],
        );
        let (ds, weight) = (item(&out, 0), floats3(item(&out, 1)));
        assert_close(float(field(ds, "pdf")), 1.0 / (4.0 * PI), 1e-6, "pdf");
        assert_close3(weight, wide(RADIANCE).map(|r| r * 4.0 * PI), 1e-6, "weight");
        assert!(!boolean(field(ds, "delta")));
        let d = wide(floats3(field(ds, "d")));
        assert_close(dot(d, d) as f32, 1.0, 1e-5, "|d|");
        // The sample point lies far along d, beyond any scene of ordinary size.
        let dist = float(field(ds, "dist")) as f64;
        assert!(dist >= 1e9, "dist {dist}");
        let to_p = sub(wide(floats3(field(ds, "p"))), wide(x));
        assert_close(dot(to_p, d) as f32, dist, 1e-6, "p = x + d dist");
        for c in 0..3 {
            mean_d[c] += d[c] / n as f64;
        }
        assert_close(
            float(&call(&lp, &world, "Constant::pdf_direction", constant, &[it.clone(), ds.clone()])),
            1.0 / (4.0 * PI),
            1e-6,
            "pdf_direction",
        );
        assert_eq!(floats3(&call(&lp, &world, "Constant::eval_direction", constant, &[it, ds.clone()])), RADIANCE);
    }
    // Uniform on the sphere: the mean direction is near 0 (standard error 1 / sqrt(3 n)).
    assert!(dot(mean_d, mean_d).sqrt() < 4.0 / (3.0 * n as f64).sqrt(), "mean direction {mean_d:?}");
    // Any escaping ray sees the radiance.
    let miss = surface([0.0; 3], [0.0, 0.0], [0.3, -0.4, 0.866], 0, constant, false);
    assert_eq!(floats3(&call(&lp, &world, "Constant::eval", constant, &[miss])), RADIANCE);
}

#[test]
fn point_light_follows_the_inverse_square_law() {
    let lp = stdlib();
    let intensity = [3.0f32, 5.0, 7.0];
    let position = [0.5f32, -1.0, 2.0];
    let mut b = WorldBuilder::new(&lp);
    let point = b.instance("Point", &[("intensity", v3(intensity)), ("position", v3(position))]);
    let world = b.build(nulls);
    let mut rng = Uniforms(5);
    for _ in 0..100 {
        let x = [rng.range(-4.0, 4.0), rng.range(-4.0, 4.0), rng.range(-4.0, 4.0)];
        let it = interaction(x, [0.0, 0.0, 1.0]);
        let out =
            call(&lp, &world, "Point::sample_direction", point, &[it.clone(), v2(rng.next_f32(), rng.next_f32())]);
        let (ds, weight) = (item(&out, 0), floats3(item(&out, 1)));
        let to_light = sub(wide(position), wide(x));
        let dist2 = dot(to_light, to_light);
        assert_close3(weight, wide(intensity).map(|i| i / dist2), 1e-5, "weight = I / r^2");
        assert_eq!(float(field(ds, "pdf")), 1.0);
        assert!(boolean(field(ds, "delta")));
        assert_eq!(floats3(field(ds, "p")), position);
        assert_close(float(field(ds, "dist")), dist2.sqrt(), 1e-6, "dist");
        let d = wide(floats3(field(ds, "d")));
        assert_close(dot(d, to_light) as f32, dist2.sqrt(), 1e-5, "d points at the light");
        let radiance = floats3(&call(&lp, &world, "Point::eval_direction", point, &[it.clone(), ds.clone()]));
        assert_close3(radiance, wide(intensity).map(|i| i / dist2), 1e-5, "eval_direction");
        assert_eq!(float(&call(&lp, &world, "Point::pdf_direction", point, &[it, ds.clone()])), 0.0);
    }
}

#[test]
fn directional_light_comes_from_one_direction() {
    let lp = stdlib();
    let irradiance = [2.0f32, 1.0, 0.5];
    let mut b = WorldBuilder::new(&lp);
    let sun = b.instance("Directional", &[("irradiance", v3(irradiance)), ("direction", v3([0.0, 3.0, -4.0]))]);
    let world = b.build(nulls);
    let x = [1.0f32, 2.0, 3.0];
    let it = interaction(x, [0.0, 0.0, 1.0]);
    let out = call(&lp, &world, "Directional::sample_direction", sun, &[it.clone(), v2(0.3, 0.7)]);
    let (ds, weight) = (item(&out, 0), floats3(item(&out, 1)));
    assert_eq!(weight, irradiance);
    assert_eq!(float(field(ds, "pdf")), 1.0);
    assert!(boolean(field(ds, "delta")));
    // Toward the light: against the (normalised) direction of travel.
    assert_close3(floats3(field(ds, "d")), [0.0, -0.6, 0.8], 1e-6, "d");
    let to_p = sub(wide(floats3(field(ds, "p"))), wide(x));
    assert_close(to_p[2] as f32, 0.8 * float(field(ds, "dist")) as f64, 1e-6, "p far toward the light");
    assert_eq!(floats3(&call(&lp, &world, "Directional::eval_direction", sun, &[it.clone(), ds.clone()])), irradiance);
    assert_eq!(float(&call(&lp, &world, "Directional::pdf_direction", sun, &[it, ds.clone()])), 0.0);
}

#[test]
fn emitter_flags_are_mitsubas() {
    let lp = stdlib();
    let mut b = WorldBuilder::new(&lp);
    let plugins = ["Area", "Point", "Constant", "Directional"];
    let handles: Vec<u32> = plugins.iter().map(|p| b.instance(p, &[])).collect();
    let world = b.build(nulls);
    // EMITTER_SURFACE, EMITTER_DELTA_POSITION, EMITTER_INFINITE, EMITTER_INFINITE | EMITTER_DELTA_DIRECTION.
    let expected = [0x8u32, 0x1, 0x4, 0x6];
    for ((plugin, handle), flags) in plugins.iter().zip(handles).zip(expected) {
        assert_eq!(call(&lp, &world, &format!("{plugin}::flags"), handle, &[]), HostValue::U32(flags), "{plugin}");
    }
}

#[test]
fn constant_textures_give_their_value() {
    let lp = stdlib();
    let mut b = WorldBuilder::new(&lp);
    let uniform = b.instance("Uniform", &[("value", f(0.25))]);
    let rgb = b.instance("SRgb", &[("value", v3([0.2, 0.4, 0.9]))]);
    let world = b.build(nulls);
    let si = uv_point(0.3, 0.6);
    assert_eq!(floats3(&call(&lp, &world, "Uniform::eval", uniform, std::slice::from_ref(&si))), [0.25; 3]);
    assert_eq!(float(&call(&lp, &world, "Uniform::eval_1", uniform, std::slice::from_ref(&si))), 0.25);
    assert_eq!(float(&call(&lp, &world, "Uniform::mean", uniform, &[])), 0.25);
    assert_eq!(floats3(&call(&lp, &world, "SRgb::eval", rgb, std::slice::from_ref(&si))), [0.2, 0.4, 0.9]);
    // Mitsuba's RGB-mode scalar value of a colour: the channel mean.
    assert_close(float(&call(&lp, &world, "SRgb::eval_1", rgb, &[si])), 0.5, 1e-6, "eval_1");
    assert_close(float(&call(&lp, &world, "SRgb::mean", rgb, &[])), 0.5, 1e-6, "mean");
}

#[test]
fn checkerboard_alternates_in_half_squares() {
    let lp = stdlib();
    let (c0, c1) = ([0.9f32, 0.6, 0.3], [0.1f32, 0.2, 0.3]);
    let mut b = WorldBuilder::new(&lp);
    let board = b.instance("Checkerboard", &[("color0", v3(c0)), ("color1", v3(c1))]);
    let defaults = b.instance("Checkerboard", &[]);
    let world = b.build(nulls);
    // (u, v, takes color0): equal halves of the fractional parts give color0; the pattern
    // repeats with period 1, negative coordinates included.
    let cases = [
        (0.25, 0.25, true),
        (0.75, 0.25, false),
        (0.25, 0.75, false),
        (0.75, 0.75, true),
        (1.25, 3.25, true),
        (-0.25, 0.25, false),
        (-0.25, -0.25, true),
        (0.5, 0.5, true),
    ];
    for (u, v, first) in cases {
        let si = uv_point(u, v);
        let expected = if first { c0 } else { c1 };
        assert_eq!(
            floats3(&call(&lp, &world, "Checkerboard::eval", board, std::slice::from_ref(&si))),
            expected,
            "({u}, {v})"
        );
        let mean = wide(expected).iter().sum::<f64>() / 3.0;
        assert_close(float(&call(&lp, &world, "Checkerboard::eval_1", board, &[si])), mean, 1e-6, "eval_1");
    }
    assert_close(float(&call(&lp, &world, "Checkerboard::mean", board, &[])), 0.4, 1e-6, "mean");
    // Mitsuba's defaults: 0.4 and 0.2.
    assert_close3(
        floats3(&call(&lp, &world, "Checkerboard::eval", defaults, &[uv_point(0.1, 0.1)])),
        [0.4; 3],
        1e-7,
        "color0",
    );
    assert_close3(
        floats3(&call(&lp, &world, "Checkerboard::eval", defaults, &[uv_point(0.6, 0.1)])),
        [0.2; 3],
        1e-7,
        "color1",
    );
}

// ----------------------------------------------------------------------------- integrators

/// A diffuse plane z = 0 (albedo ALBEDO, uv = (x, y)) lit by one emitter, which is also the
/// environment when it is at infinity; a camera at height 1.
const ALBEDO: [f32; 3] = [0.8, 0.5, 0.2];

struct PlaneScene {
    world: World,
    integrator: u32,
}

/// The plane scene with an emitter built by `emitter` and the integrator `integrator` with
/// its params; `environment` tells whether the emitter is the scene's environment.
fn plane_scene(
    lp: &LoweredProgram,
    emitter: impl FnOnce(&mut WorldBuilder) -> u32,
    environment: bool,
    integrator: (&str, &[(&str, HostValue)]),
    seed: u64,
) -> PlaneScene {
    let mut b = WorldBuilder::new(lp);
    let albedo = b.instance("SRgb", &[("value", v3(ALBEDO))]);
    let diffuse = b.instance("Diffuse", &[("reflectance", HostValue::Handle(albedo))]);
    let light = emitter(&mut b);
    let integrator = b.instance(integrator.0, integrator.1);
    let si_layout = param_layout(lp, "Area::eval", 0);
    let rng = Mutex::new(Uniforms(seed));
    let env = if environment { light } else { 0 };
    let world = b.build(move |name, args| {
        let arg = |i: usize| f32::from_bits(args[i]);
        let result = match name {
            // intersect(scene, ray { o, d, maxt, time })
            "Scene::intersect" => {
                let (o, d) = ([arg(1), arg(2), arg(3)], [arg(4), arg(5), arg(6)]);
                let si = if o[2] > 0.0 && d[2] < 0.0 {
                    let t = -o[2] / d[2];
                    let p = [o[0] + t * d[0], o[1] + t * d[1], 0.0];
                    surface(p, [p[0], p[1]], [-d[0], -d[1], -d[2]], diffuse, 0, true)
                } else {
                    surface([0.0; 3], [0.0, 0.0], [-d[0], -d[1], -d[2]], 0, env, false)
                };
                si_layout.flatten(&si).expect("a surface interaction")
            }
            "Scene::ray_test" => {
                let hit = arg(3) > 0.0 && arg(6) < 0.0 && -arg(3) / arg(6) < arg(7);
                vec![hit as u32]
            }
            "Scene::sample_emitter" => vec![light, 1f32.to_bits(), args[1]],
            "Scene::emitter_selection_pdf" => bits(&[if args[1] == light { 1.0 } else { 0.0 }]),
            "Scene::environment" => vec![env],
            "Scene::emitter_count" => vec![1],
            "Sampler::next_1d" => bits(&[rng.lock().unwrap().next_f32()]),
            "Sampler::next_2d" => {
                let mut rng = rng.lock().unwrap();
                bits(&[rng.next_f32(), rng.next_f32()])
            }
            _ => return nulls(name, args),
        };
        Some(result)
    });
    PlaneScene { world, integrator }
}

fn ray(o: [f32; 3], d: [f32; 3]) -> HostValue {
    strukt("Ray", vec![("o", v3(o)), ("d", v3(d)), ("maxt", f(f32::MAX)), ("time", f(0.0))])
}

/// Renders one camera ray `n` times: the mean and standard error per channel, and whether
/// every sample was valid (all samples must agree on validity).
fn render(
    lp: &LoweredProgram,
    scene: &PlaneScene,
    plugin: &str,
    camera_ray: &HostValue,
    n: usize,
) -> ([f64; 3], [f64; 3], bool) {
    let (mut sum, mut sum2) = ([0.0f64; 3], [0.0f64; 3]);
    let mut valid = None;
    for _ in 0..n {
        let args = [HostValue::Handle(0), HostValue::Handle(0), camera_ray.clone()];
        let out = call(lp, &scene.world, &format!("{plugin}::sample"), scene.integrator, &args);
        let color = wide(floats3(item(&out, 0)));
        let v = boolean(item(&out, 1));
        assert_eq!(*valid.get_or_insert(v), v, "validity differs between samples");
        for c in 0..3 {
            sum[c] += color[c];
            sum2[c] += color[c] * color[c];
        }
    }
    let n = n as f64;
    let mean = sum.map(|s| s / n);
    let stderr = [0, 1, 2].map(|c| ((sum2[c] / n - mean[c] * mean[c]).max(0.0) / n).sqrt());
    (mean, stderr, valid.unwrap_or(false))
}

fn constant_sky(radiance: [f32; 3]) -> impl FnOnce(&mut WorldBuilder) -> u32 {
    move |b| {
        let texture = b.instance("SRgb", &[("value", v3(radiance))]);
        b.instance("Constant", &[("radiance", HostValue::Handle(texture))])
    }
}

const SKY: [f32; 3] = [1.0, 2.0, 0.5];
const DOWN: [f32; 3] = [0.0, 0.0, -1.0];
const CAMERA: [f32; 3] = [0.2, -0.1, 1.0];

/// Under a uniform sky of radiance L a Lambertian plane of albedo R reflects L R toward
/// every direction (the reflection equation with f = R / pi). The estimate of each
/// configuration of techniques must be within 4 standard errors of it.
#[test]
fn integrators_reflect_a_uniform_sky_off_a_diffuse_plane() {
    let lp = stdlib();
    let expected: [f64; 3] = [0, 1, 2].map(|c| (SKY[c] * ALBEDO[c]) as f64);
    let samples = |e: i32, b: i32| vec![("emitter_samples", HostValue::I32(e)), ("bsdf_samples", HostValue::I32(b))];
    // (integrator, params, whether the estimator has zero variance): cosine-weighted BSDF
    // sampling alone importance-samples this integrand exactly.
    let configurations: [(&str, Params, bool); 5] = [
        ("Path", vec![], false),
        ("Direct", vec![], false),
        ("Direct", samples(0, 1), true),
        ("Direct", samples(1, 0), false),
        ("Direct", samples(3, 2), false),
    ];
    for (seed, (plugin, params, exact)) in configurations.iter().enumerate() {
        let scene = plane_scene(&lp, constant_sky(SKY), true, (plugin, params), 10 + seed as u64);
        let (mean, stderr, valid) = render(&lp, &scene, plugin, &ray(CAMERA, DOWN), 4000);
        assert!(valid, "{plugin} {params:?}: the plane is a valid sample");
        for c in 0..3 {
            assert!(
                (mean[c] - expected[c]).abs() <= 4.0 * stderr[c] + 1e-6 * expected[c],
                "{plugin} {params:?}: channel {c}: {} ± {} but {} expected",
                mean[c],
                stderr[c],
                expected[c]
            );
            assert_eq!(stderr[c] < 1e-6 * expected[c], *exact, "{plugin} {params:?}: standard error {}", stderr[c]);
        }
    }
}

/// A point light of intensity I at distance r from the plane point straight below the camera
/// gives exactly (R / pi) cos(theta) I / r^2; BSDF sampling never finds it, and taking more
/// emitter samples averages them (Mitsuba's `direct` adds them up: issue 1861).
#[test]
fn integrators_light_a_diffuse_plane_by_a_point_light() {
    let lp = stdlib();
    let (intensity, position) = ([4.0f32, 2.0, 1.0], [0.5f32, -0.3, 2.0]);
    let hit = [CAMERA[0] as f64, CAMERA[1] as f64, 0.0];
    let to_light = sub(wide(position), hit);
    let dist2 = dot(to_light, to_light);
    let cos_theta = to_light[2] / dist2.sqrt();
    let expected: [f64; 3] = [0, 1, 2].map(|c| ALBEDO[c] as f64 / PI * cos_theta * intensity[c] as f64 / dist2);
    let configurations: [(&str, Params); 4] = [
        ("Path", vec![]),
        ("Path", vec![("max_depth", HostValue::I32(2))]),
        ("Direct", vec![]),
        ("Direct", vec![("emitter_samples", HostValue::I32(4))]),
    ];
    for (plugin, params) in &configurations {
        let light = move |b: &mut WorldBuilder| {
            b.instance("Point", &[("intensity", v3(intensity)), ("position", v3(position))])
        };
        let scene = plane_scene(&lp, light, false, (plugin, params), 20);
        let (mean, stderr, valid) = render(&lp, &scene, plugin, &ray(CAMERA, DOWN), 8);
        assert!(valid, "{plugin} {params:?}");
        assert_eq!(stderr, [0.0; 3], "{plugin} {params:?}: delta light, deterministic");
        assert_close3(mean.map(|m| m as f32), expected, 1e-5, &format!("{plugin} {params:?}"));
    }
}

/// What the camera sees directly, and the depth and visibility switches.
#[test]
fn integrators_show_or_hide_the_emitters_the_camera_sees() {
    let lp = stdlib();
    let up = ray(CAMERA, [0.0, 0.6, 0.8]);
    let down = ray(CAMERA, DOWN);
    let hide = || vec![("hide_emitters", HostValue::Bool(true))];
    let depth = |n: i32| vec![("max_depth", HostValue::I32(n))];
    // (integrator, params, camera ray, expected colour, expected validity)
    let cases: [(&str, Params, &HostValue, [f32; 3], bool); 7] = [
        ("Path", vec![], &up, SKY, true),
        ("Path", hide(), &up, [0.0; 3], false),
        ("Path", depth(0), &down, [0.0; 3], false),
        // Depth 1: emitters seen directly only; the plane emits nothing.
        ("Path", depth(1), &down, [0.0; 3], true),
        ("Path", depth(1), &up, SKY, true),
        // Mitsuba's `direct` shows the environment but counts only surface hits as valid.
        ("Direct", vec![], &up, SKY, false),
        ("Direct", hide(), &up, [0.0; 3], false),
    ];
    for (plugin, params, camera_ray, colour, validity) in cases {
        let scene = plane_scene(&lp, constant_sky(SKY), true, (plugin, &params), 30);
        let (mean, stderr, valid) = render(&lp, &scene, plugin, camera_ray, 4);
        assert_eq!(stderr, [0.0; 3], "{plugin} {params:?}");
        assert_eq!(mean.map(|m| m as f32), colour, "{plugin} {params:?} {camera_ray}");
        assert_eq!(valid, validity, "{plugin} {params:?} {camera_ray}");
    }
}

/// Forward mode differentiates the integrators; reverse mode is refused, with the loop that
/// prevents it (their loops run as many times as the scene asks: reverse-mode path tracing is
/// the job of an integrator with a custom adjoint, path replay).
#[test]
fn integrators_have_forward_derivatives_only() {
    let mut lp = stdlib();
    // Path's loop is the shared path tracer's, in integrators/common.drs.
    for (name, file) in [("Path::sample", "integrators/common.drs"), ("Direct::sample", "integrators/direct.drs")] {
        let f = lp.find_fn(name).unwrap_or_else(|| panic!("no `{name}`"));
        lp.derivative(f, drs_ad::Mode::Fwd).unwrap_or_else(|e| panic!("{}", e.render(&lp.sources)));
        drs_ir::verify_module(&lp.lowered.module).unwrap_or_else(|e| panic!("fwd_diff({name}): {e}"));
        let error = lp.derivative(f, drs_ad::Mode::Bwd).expect_err("an unbounded loop").render(&lp.sources);
        assert!(error.contains(file) && error.contains("@max_iters"), "{name}: {error}");
    }
}
