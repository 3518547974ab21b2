//! `Tensor` plugin params through the compiler, run by the reference interpreter and checked
//! against Cranelift:
//! - `at` and `shape` read the instance's slice of the param's buffers (offset, clamped index,
//!   never another instance's data);
//! - their derivatives read `{buffer}.tangent` and scatter into `{buffer}.grad` at the element
//!   read, as for any param buffer;
//! - the stdlib `bitmap` texture: lookups with bilinear and nearest filtering in every wrap
//!   mode, `to_uv`, grey images, luminance and mean, against values computed by hand (and
//!   confirmed with Mitsuba 3.9.1's `bitmap` plugin on the same 3x2 image), and its derivative
//!   with respect to one texel against finite differences.

mod differential;

use differential::{Env, Stages};
use drs_ad::Mode;
use drs_interp::Interpreter;
use drs_ir::FuncId;
use drs_lower::{FnLayout, HostValue, LoweredProgram, TENSOR_BUFFERS};
use drs_sema::LoadOptions;

const PROBE: &str = r#"
import textures::bitmap;

// Reads of a tensor param, for the tests below.
texture Probe {
    param data: Tensor;

    fn eval(si: SurfaceInteraction) -> Color {
        Color(data.at(0u))
    }

    fn eval_1(si: SurfaceInteraction) -> f32 {
        data.at(0u)
    }

    fn mean() -> f32 {
        data.at(0u)
    }

    fn read(i: u32) -> f32 {
        data.at(i)
    }

    fn dims(i: u32) -> u32 {
        data.shape(i)
    }

    // x * t[i]^2: its derivative involves the element read.
    fn weighted_square(i: u32, x: f32) -> f32 {
        x * data.at(i) * data.at(i)
    }
}
"#;

fn lower() -> LoweredProgram {
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let lp = drs_lower::lower_source("probe.drs", PROBE, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(lp.lowered.is_complete(), "{}", lp.render_errors());
    lp
}

fn function(lp: &LoweredProgram, path: &str) -> FuncId {
    let f = lp.find_fn(path).unwrap_or_else(|| panic!("no function `{path}`"));
    lp.lowered.functions[&f]
}

/// The contents of the module's buffers, filled as the runtime fills them.
struct Buffers {
    bits: Vec<Vec<u32>>,
}

impl Buffers {
    fn new(lp: &LoweredProgram) -> Self {
        Buffers { bits: vec![Vec::new(); lp.lowered.module.buffers.len()] }
    }

    fn id(lp: &LoweredProgram, name: &str) -> usize {
        lp.lowered.module.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| panic!("no buffer `{name}`"))
    }

    /// The tensor param `plugin.param` with one tensor per instance.
    fn tensor(&mut self, lp: &LoweredProgram, plugin: &str, param: &str, instances: &[([u32; 3], Vec<f32>)]) {
        let layout = lp.lowered.plugins.iter().find(|p| p.name == plugin).expect("the plugin exists");
        let param = layout.params.iter().find(|p| p.name == param).expect("the param exists");
        assert_eq!(param.buffers.len(), TENSOR_BUFFERS.len());
        let [data, offset, s0, s1, s2] = [0, 1, 2, 3, 4].map(|k| param.buffers[k] as usize);
        for (shape, values) in instances {
            let start = self.bits[data].len() as u32;
            self.bits[offset].push(start);
            self.bits[data].extend(values.iter().map(|v| v.to_bits()));
            for (b, d) in [s0, s1, s2].into_iter().zip(shape) {
                self.bits[b].push(*d);
            }
        }
    }

    /// Scalar param `plugin.param` (its buffers `[k]`) for instance 0.
    fn scalars(&mut self, lp: &LoweredProgram, plugin: &str, param: &str, value: &HostValue) {
        let layout = lp.lowered.plugins.iter().find(|p| p.name == plugin).expect("the plugin exists");
        let param = layout.params.iter().find(|p| p.name == param).expect("the param exists");
        for (&b, bits) in param.buffers.iter().zip(param.layout.flatten(value).expect("the value fits")) {
            self.bits[b as usize] = vec![bits];
        }
    }

    fn interpreter<'m>(&self, module: &'m drs_ir::Module) -> Interpreter<'m> {
        let mut interp = Interpreter::new(module);
        for (b, bits) in self.bits.iter().enumerate() {
            interp.buffers[b] = bits.clone();
        }
        interp
    }
}

fn f32s(values: &[u32]) -> Vec<f32> {
    values.iter().map(|&b| f32::from_bits(b)).collect()
}

/// Two instances: [1, 2, 3] (shape 3) and a 2x2 grey image [10, 20, 30, 40].
fn two_instances(lp: &LoweredProgram) -> Buffers {
    let mut buffers = Buffers::new(lp);
    buffers.tensor(lp, "Probe", "data", &[([3, 1, 1], vec![1.0, 2.0, 3.0]), ([2, 2, 1], vec![10.0, 20.0, 30.0, 40.0])]);
    buffers
}

#[test]
fn at_and_shape_read_the_instance_slice() {
    let lp = lower();
    let buffers = two_instances(&lp);
    let module = &lp.lowered.module;
    let (read, dims) = (function(&lp, "Probe::read"), function(&lp, "Probe::dims"));
    let mut interp = buffers.interpreter(module);
    let mut at = |instance: u32, i: u32| f32::from_bits(interp.call(read, &[instance, i]).unwrap()[0]);
    assert_eq!([at(0, 0), at(0, 1), at(0, 2)], [1.0, 2.0, 3.0]);
    assert_eq!([at(1, 0), at(1, 3)], [10.0, 40.0]);
    // Past the end: the instance's last element, never the next instance's first.
    assert_eq!([at(0, 3), at(0, u32::MAX), at(1, 4), at(1, 1 << 31)], [3.0, 3.0, 40.0, 40.0]);
    let mut interp = buffers.interpreter(module);
    let mut shape = |instance: u32, i: u32| interp.call(dims, &[instance, i]).unwrap()[0];
    assert_eq!([shape(0, 0), shape(0, 1), shape(0, 2)], [3, 1, 1]);
    assert_eq!([shape(1, 0), shape(1, 1), shape(1, 2), shape(1, 3), shape(1, 99)], [2, 2, 1, 1, 1]);
}

#[test]
fn tensor_reads_agree_across_backends() {
    let lp = lower();
    let buffers = two_instances(&lp);
    let stages = Stages::new(lp.lowered.module.clone(), drs_opt::OptLevel::Default, None).unwrap();
    let env = Env { buffers: buffers.bits.clone(), stateful: Vec::new() };
    let inputs: Vec<Vec<u32>> =
        [0u32, 1].iter().flat_map(|&k| [0u32, 1, 2, 3, 4, 7, u32::MAX].map(move |i| vec![k, i])).collect();
    stages.check("Probe::read", &inputs, &env).unwrap();
    stages.check("Probe::dims", &inputs, &env).unwrap();
}

/// Forward mode: the tangent of `data.at(i)` is element `offset + i` of `Probe.data.tangent`;
/// reverse mode: its adjoint is added to that element of `Probe.data.grad` (and the clamped
/// index reads and scatters at the instance's last element).
#[test]
fn tensor_read_derivatives_use_the_element_read() {
    let mut lp = lower();
    let primal = lp.find_fn("Probe::weighted_square").unwrap();
    let fwd = lp.derivative(primal, Mode::Fwd).unwrap();
    let bwd = lp.derivative(primal, Mode::Bwd).unwrap();
    let mut buffers = two_instances(&lp);
    buffers.bits.resize(lp.lowered.module.buffers.len(), Vec::new());
    let tangent = Buffers::id(&lp, "Probe.data.tangent");
    let grad = Buffers::id(&lp, "Probe.data.grad");
    let module = &lp.lowered.module;
    let x = 0.5f32;
    // Instance 1 (offset 3), i = 2: y = x * 30^2; dy/d(texel 5) = 2 x 30 = 30.
    for (seeded, expected) in [(5usize, 30.0f32), (4, 0.0), (6, 0.0)] {
        let mut b = Buffers { bits: buffers.bits.clone() };
        b.bits[tangent] = (0..7).map(|k| if k == seeded { 1.0f32 } else { 0.0 }.to_bits()).collect();
        let out = b.interpreter(module).call(fwd, &[1, 2, x.to_bits(), 0.0f32.to_bits()]).unwrap();
        assert_eq!(f32s(&out), [900.0 * x, expected], "tangent seeded at element {seeded}");
    }
    let mut b = Buffers { bits: buffers.bits.clone() };
    b.bits[grad] = vec![0; 7];
    let mut interp = b.interpreter(module);
    let dx = interp.call(bwd, &[1, 2, x.to_bits(), 2.0f32.to_bits()]).unwrap();
    assert_eq!(f32s(&dx), [2.0 * 900.0], "the adjoint of x");
    assert_eq!(f32s(&interp.buffers[grad]), [0.0, 0.0, 0.0, 0.0, 0.0, 2.0 * 2.0 * x * 30.0, 0.0]);
    // Clamped: index 9 of instance 0 reads and scatters at its last element (2).
    let mut b = Buffers { bits: buffers.bits.clone() };
    b.bits[grad] = vec![0; 7];
    let mut interp = b.interpreter(module);
    interp.call(bwd, &[0, 9, x.to_bits(), 1.0f32.to_bits()]).unwrap();
    assert_eq!(f32s(&interp.buffers[grad]), [0.0, 0.0, 2.0 * x * 3.0, 0.0, 0.0, 0.0, 0.0]);
}

// ----------------------------------------------------------------------------- bitmap

/// The 3x2 RGB image of the bitmap tests: texel (y, x) channel c is ((y * 3 + x) * 3 + c) / 20.
fn image_3x2() -> ([u32; 3], Vec<f32>) {
    ([2, 3, 3], (0..18).map(|k| k as f32 / 20.0).collect())
}

struct BitmapSetup {
    filter_type: u32,
    wrap_mode: u32,
    /// Columns of `to_uv`.
    to_uv: [[f32; 3]; 3],
    image: ([u32; 3], Vec<f32>),
}

impl BitmapSetup {
    fn new(wrap_mode: u32) -> Self {
        BitmapSetup {
            filter_type: 0,
            wrap_mode,
            to_uv: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            image: image_3x2(),
        }
    }

    fn buffers(&self, lp: &LoweredProgram) -> Buffers {
        let mut b = Buffers::new(lp);
        b.tensor(lp, "Bitmap", "data", std::slice::from_ref(&self.image));
        b.scalars(lp, "Bitmap", "raw", &HostValue::Bool(false));
        b.scalars(lp, "Bitmap", "filter_type", &HostValue::U32(self.filter_type));
        b.scalars(lp, "Bitmap", "wrap_mode", &HostValue::U32(self.wrap_mode));
        let column = |c: [f32; 3]| HostValue::List(c.iter().map(|&x| HostValue::F32(x)).collect());
        b.scalars(lp, "Bitmap", "to_uv", &HostValue::List(self.to_uv.iter().map(|&c| column(c)).collect()));
        b
    }
}

/// The arguments of a texture method taking `si`: instance 0 and a surface interaction whose
/// only non-zero fields are `uv`.
fn si_args(lp: &LoweredProgram, path: &str, uv: [f32; 2]) -> Vec<u32> {
    let f = lp.find_fn(path).unwrap();
    let layout = FnLayout::of(&lp.program, f);
    let names = layout.params[0].1.component_names("si");
    let mut args = vec![0u32];
    for name in names {
        args.push(match name.as_str() {
            "si.uv.x" => uv[0].to_bits(),
            "si.uv.y" => uv[1].to_bits(),
            _ => 0,
        });
    }
    args
}

fn eval(lp: &LoweredProgram, buffers: &Buffers, method: &str, uv: [f32; 2]) -> Vec<f32> {
    let path = format!("Bitmap::{method}");
    let f = function(lp, &path);
    f32s(&buffers.interpreter(&lp.lowered.module).call(f, &si_args(lp, &path, uv)).unwrap())
}

fn assert_close(actual: &[f32], expected: &[f32], what: &str) {
    let close = actual.len() == expected.len() && actual.iter().zip(expected).all(|(a, e)| (a - e).abs() < 2e-6);
    assert!(close, "{what}: {actual:?}, expected {expected:?}");
}

const REPEAT: u32 = 0;
const MIRROR: u32 = 1;
const CLAMP: u32 = 2;

/// Bilinear lookups in every wrap mode. Worked example, repeat at uv (0.1, 0.2): the texel
/// position is uv * (3, 2) - 0.5 = (-0.2, -0.1), so the corners are x in {-1 -> 2, 0}, y in
/// {-1 -> 1, 0} with weights fx = 0.8, fy = 0.9; channel 0 is
/// 0.2 * 0.1 * t(1,2) + 0.8 * 0.1 * t(1,0) + 0.2 * 0.9 * t(0,2) + 0.8 * 0.9 * t(0,0)
/// = 0.02 * 0.75 + 0.08 * 0.45 + 0.18 * 0.3 + 0 = 0.105.
#[test]
fn bitmap_bilinear_lookups_in_every_wrap_mode() {
    let lp = lower();
    let cases: [(u32, [f32; 2], [f32; 3]); 9] = [
        (REPEAT, [0.1, 0.2], [0.105, 0.155, 0.205]),
        (REPEAT, [-0.3, 0.7], [0.645, 0.695, 0.745]),
        (REPEAT, [2.7, 1.9], [0.555, 0.605, 0.655]),
        // Mirror: -1 reads 0 (all four corners are texel (0, 0) here), width reads width - 1.
        (MIRROR, [0.1, 0.2], [0.0, 0.05, 0.1]),
        (MIRROR, [-0.3, 0.7], [0.465, 0.515, 0.565]),
        (MIRROR, [2.7, 1.9], [0.24, 0.29, 0.34]),
        (CLAMP, [-0.3, 0.7], [0.405, 0.455, 0.505]),
        (CLAMP, [1.4, -0.2], [0.3, 0.35, 0.4]),
        (CLAMP, [2.7, 1.9], [0.75, 0.8, 0.85]),
    ];
    for (wrap, uv, expected) in cases {
        let buffers = BitmapSetup::new(wrap).buffers(&lp);
        assert_close(&eval(&lp, &buffers, "eval", uv), &expected, &format!("wrap {wrap} at {uv:?}"));
    }
    // At a texel centre the lookup is the texel itself, in every mode.
    for wrap in [REPEAT, MIRROR, CLAMP] {
        let buffers = BitmapSetup::new(wrap).buffers(&lp);
        assert_close(&eval(&lp, &buffers, "eval", [2.5 / 3.0, 0.25]), &[0.3, 0.35, 0.4], "texel (0, 2)");
    }
}

#[test]
fn bitmap_nearest_to_uv_luminance_and_mean() {
    let lp = lower();
    // Nearest: floor(uv * size) = (0, 1): texel (1, 0).
    let mut setup = BitmapSetup::new(REPEAT);
    setup.filter_type = 1;
    let buffers = setup.buffers(&lp);
    assert_close(&eval(&lp, &buffers, "eval", [0.1, 0.9]), &[0.45, 0.5, 0.55], "nearest");
    assert_close(&eval(&lp, &buffers, "eval", [-0.9, 1.9]), &[0.45, 0.5, 0.55], "nearest, repeated");
    // to_uv = translate(0.5, 0.25) * scale(2, 3): (0.1, 0.2) -> (0.7, 0.85), texel position
    // (1.6, 1.2): corners x {1, 2}, y {1, 0 (repeat)}, fx = 0.6, fy = 0.2.
    let mut setup = BitmapSetup::new(REPEAT);
    setup.to_uv = [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.5, 0.25, 1.0]];
    let buffers = setup.buffers(&lp);
    assert_close(&eval(&lp, &buffers, "eval", [0.1, 0.2]), &[0.6, 0.65, 0.7], "to_uv");
    // eval_1 of a colour image: Mitsuba's luminance of the colour; mean: of the luminances.
    let buffers = BitmapSetup::new(REPEAT).buffers(&lp);
    let luminance = |c: [f32; 3]| 0.212671 * c[0] + 0.715160 * c[1] + 0.072169 * c[2];
    assert_close(&eval(&lp, &buffers, "eval_1", [0.1, 0.2]), &[luminance([0.105, 0.155, 0.205])], "eval_1");
    let mean = (0..6).map(|t| luminance([0, 1, 2].map(|c| (t * 3 + c) as f32 / 20.0))).sum::<f32>() / 6.0;
    let f = function(&lp, "Bitmap::mean");
    let got = f32s(&buffers.interpreter(&lp.lowered.module).call(f, &[0]).unwrap());
    assert_close(&got, &[mean], "mean");
    assert_close(&got, &[0.41797491], "mean (Mitsuba's value)");
    // A grey image is the same in every channel: eval broadcasts, eval_1 and mean are the value.
    let mut setup = BitmapSetup::new(REPEAT);
    setup.image = ([2, 3, 1], (0..6).map(|k| k as f32 / 10.0).collect());
    let buffers = setup.buffers(&lp);
    // (0.1, 0.2): corners as in the worked example: 0.02 * 0.5 + 0.08 * 0.3 + 0.18 * 0.2 = 0.07.
    assert_close(&eval(&lp, &buffers, "eval", [0.1, 0.2]), &[0.07; 3], "grey eval");
    assert_close(&eval(&lp, &buffers, "eval_1", [0.1, 0.2]), &[0.07], "grey eval_1");
    let got = f32s(&buffers.interpreter(&lp.lowered.module).call(f, &[0]).unwrap());
    assert_close(&got, &[0.25], "grey mean");
}

#[test]
fn bitmap_lookups_agree_across_backends() {
    let lp = lower();
    let stages = Stages::new(lp.lowered.module.clone(), drs_opt::OptLevel::Default, None).unwrap();
    for (filter, wrap) in [(0, REPEAT), (0, MIRROR), (0, CLAMP), (1, MIRROR)] {
        let mut setup = BitmapSetup::new(wrap);
        setup.filter_type = filter;
        let env = Env { buffers: setup.buffers(&lp).bits, stateful: Vec::new() };
        let inputs: Vec<Vec<u32>> = (0..32)
            .map(|k| {
                let uv = [k as f32 * 0.37 - 3.0, (k * k % 17) as f32 * 0.29 - 2.0];
                si_args(&lp, "Bitmap::eval", uv)
            })
            .collect();
        stages.check("Bitmap::eval", &inputs, &env).unwrap();
    }
}

/// `eval` is linear in the texels: the forward tangent and the reverse gradient with respect
/// to one texel equal the central difference (up to rounding), in every wrap mode.
#[test]
fn bitmap_derivative_matches_finite_differences() {
    let mut lp = lower();
    let primal = lp.find_fn("Bitmap::eval").unwrap();
    let fwd = lp.derivative(primal, Mode::Fwd).unwrap();
    let bwd = lp.derivative(primal, Mode::Bwd).unwrap();
    let tangent = Buffers::id(&lp, "Bitmap.data.tangent");
    let grad = Buffers::id(&lp, "Bitmap.data.grad");
    let eval_id = function(&lp, "Bitmap::eval");
    let module = &lp.lowered.module;
    // The corners of this lookup are texels (1, 2), (1, 0), (0, 2) and (0, 0) when repeating,
    // all four (0, 0) when mirroring or clamping.
    let args = si_args(&lp, "Bitmap::eval", [-0.1, 0.1]);
    let tangent_count = module.function(fwd).params.len() - args.len();
    // Texel (0, 0), channel 1.
    let element = 1;
    for wrap in [REPEAT, MIRROR, CLAMP] {
        let mut buffers = BitmapSetup::new(wrap).buffers(&lp);
        buffers.bits.resize(module.buffers.len(), Vec::new());
        let h = 1e-2f32;
        let value_with = |delta: f32| {
            let mut b = Buffers { bits: buffers.bits.clone() };
            b.bits[Buffers::id(&lp, "Bitmap.data")][element] = (0.05 + delta).to_bits();
            f32s(&b.interpreter(module).call(eval_id, &args).unwrap())
        };
        let (plus, minus) = (value_with(h), value_with(-h));
        let difference: Vec<f32> = plus.iter().zip(&minus).map(|(p, m)| (p - m) / (2.0 * h)).collect();
        assert!(difference[1] > 0.1 && difference[0] == 0.0, "wrap {wrap}: {difference:?}");

        let mut b = Buffers { bits: buffers.bits.clone() };
        b.bits[tangent] = (0..18).map(|k| if k == element { 1.0f32 } else { 0.0 }.to_bits()).collect();
        let mut fwd_args = args.clone();
        fwd_args.extend(std::iter::repeat_n(0.0f32.to_bits(), tangent_count));
        let out = f32s(&b.interpreter(module).call(fwd, &fwd_args).unwrap());
        assert_close(&out[3..], &difference, &format!("wrap {wrap}: forward tangent"));

        let mut b = Buffers { bits: buffers.bits.clone() };
        b.bits[grad] = vec![0; 18];
        let mut bwd_args = args.clone();
        bwd_args.extend([0.0f32, 1.0, 0.0].map(f32::to_bits));
        let mut interp = b.interpreter(module);
        interp.call(bwd, &bwd_args).unwrap();
        let gradient = f32s(&interp.buffers[grad]);
        assert_close(&[gradient[element]], &[difference[1]], &format!("wrap {wrap}: reverse gradient"));
        let total: f32 = gradient.iter().sum();
        assert_close(&[total], &[1.0], &format!("wrap {wrap}: the bilinear weights of channel 1 sum to 1"));
    }
}
