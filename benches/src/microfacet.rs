//! A microfacet BSDF kernel written directly in IR, for backend benchmarks: sample a visible
//! normal of the GGX distribution (Heitz 2018, "Sampling the GGX Distribution of Visible
//! Normals"), then evaluate GGX `D`, the separable Smith `G` and Schlick's Fresnel for it.
//! Only basic arithmetic and `sqrt` (sine and cosine are polynomials), so it needs no math
//! expansion.

use drs_ir::*;

/// Parameters of `microfacet`, per lane.
pub const PARAMS: [&str; 7] = ["wi.x", "wi.y", "wi.z", "u1", "u2", "alpha", "f0"];

/// `microfacet(wi, u1, u2, alpha, f0) -> (m.x, m.y, m.z, wo.x, wo.y, wo.z, D, G, F, weight)`.
pub fn module() -> Module {
    let mut module = Module::default();
    let mut f = Function::new("microfacet");
    let p: Vec<Value> = PARAMS.iter().map(|n| f.add_param(*n, Ty::F32)).collect();
    f.result_types = vec![Ty::F32; 10];
    let sigs = Signatures::of(&module);
    let mut b = Builder::new(&mut f, &sigs);
    let (wx, wy, wz, u1, u2, alpha, f0) = (p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    let zero = b.f32(0.0);
    let below = b.cmp(CmpOp::Le, wz, zero);
    let results = b.if_(
        below,
        // Light from below the surface: no reflection.
        |_| vec![zero; 10],
        |b| sample_and_eval(b, [wx, wy, wz], u1, u2, alpha, f0),
    );
    b.finish(results);
    module.add_function(f);
    module
}

fn c(b: &mut Builder, x: f32) -> Value {
    b.f32(x)
}

fn dot3(b: &mut Builder, a: [Value; 3], v: [Value; 3]) -> Value {
    let x = b.mul(a[0], v[0]);
    let y = b.fma(a[1], v[1], x);
    b.fma(a[2], v[2], y)
}

fn normalize(b: &mut Builder, v: [Value; 3]) -> [Value; 3] {
    let l2 = dot3(b, v, v);
    let l = b.unary(UnaryOp::Sqrt, l2);
    let one = c(b, 1.0);
    let inv = b.div(one, l);
    [b.mul(v[0], inv), b.mul(v[1], inv), b.mul(v[2], inv)]
}

/// sin and cos of `x` in [-π, π] by odd/even polynomials (Taylor to degree 11/12, error
/// below 1e-4 on the interval).
fn sin_cos(b: &mut Builder, x: Value) -> (Value, Value) {
    let x2 = b.mul(x, x);
    let mut s = c(b, -2.5052108e-8);
    for k in [2.7557319e-6, -1.984127e-4, 8.333333e-3, -0.16666667, 1.0] {
        let kk = c(b, k);
        s = b.fma(s, x2, kk);
    }
    let s = b.mul(s, x);
    let mut co = c(b, 2.0876757e-9);
    for k in [-2.755732e-7, 2.4801588e-5, -1.3888889e-3, 4.1666668e-2, -0.5, 1.0] {
        let kk = c(b, k);
        co = b.fma(co, x2, kk);
    }
    (s, co)
}

/// Smith's masking `G1 = 2 / (1 + sqrt(1 + α² tan²θ))` for a direction with cosine `z`.
fn smith_g1(b: &mut Builder, z: Value, a2: Value) -> Value {
    let z2 = b.mul(z, z);
    let one = c(b, 1.0);
    let s2 = b.sub(one, z2);
    let t2 = b.div(s2, z2);
    let r = b.fma(a2, t2, one);
    let r = b.unary(UnaryOp::Sqrt, r);
    let d = b.add(one, r);
    let two = c(b, 2.0);
    b.div(two, d)
}

fn sample_and_eval(b: &mut Builder, wi: [Value; 3], u1: Value, u2: Value, alpha: Value, f0: Value) -> Vec<Value> {
    let zero = c(b, 0.0);
    let one = c(b, 1.0);
    // Stretch the view direction to the hemisphere configuration.
    let sx = b.mul(alpha, wi[0]);
    let sy = b.mul(alpha, wi[1]);
    let vh = normalize(b, [sx, sy, wi[2]]);
    // Orthonormal basis around vh.
    let lensq = b.mul(vh[0], vh[0]);
    let lensq = b.fma(vh[1], vh[1], lensq);
    let pos = b.cmp(CmpOp::Gt, lensq, zero);
    let len = b.unary(UnaryOp::Sqrt, lensq);
    let inv = b.div(one, len);
    let ny = b.unary(UnaryOp::Neg, vh[1]);
    let t1x = b.mul(ny, inv);
    let t1y = b.mul(vh[0], inv);
    let t1x = b.select(pos, t1x, one);
    let t1y = b.select(pos, t1y, zero);
    let t1 = [t1x, t1y, zero];
    // T2 = cross(vh, T1), with T1.z = 0.
    let t2x = b.mul(vh[2], t1[1]);
    let t2x = b.unary(UnaryOp::Neg, t2x);
    let t2y = b.mul(vh[2], t1[0]);
    let a = b.mul(vh[1], t1[0]);
    let t2z = b.mul(vh[0], t1[1]);
    let t2z = b.sub(t2z, a);
    let t2 = [t2x, t2y, t2z];
    // Polar sample on the disk, warped to the projected hemisphere.
    let r = b.unary(UnaryOp::Sqrt, u1);
    let two_pi = c(b, std::f32::consts::TAU);
    let pi = c(b, std::f32::consts::PI);
    let neg_pi = b.unary(UnaryOp::Neg, pi);
    let phi = b.fma(u2, two_pi, neg_pi);
    let (s, co) = sin_cos(b, phi);
    // phi was shifted by -π: cos(φ) = -cos(φ - π), sin(φ) = -sin(φ - π).
    let p1 = b.mul(r, co);
    let p1 = b.unary(UnaryOp::Neg, p1);
    let p2 = b.mul(r, s);
    let p2 = b.unary(UnaryOp::Neg, p2);
    let half = c(b, 0.5);
    let sh = b.add(one, vh[2]);
    let sh = b.mul(half, sh);
    let p1sq = b.mul(p1, p1);
    let rest = b.sub(one, p1sq);
    let rest = b.unary(UnaryOp::Sqrt, rest);
    let oms = b.sub(one, sh);
    let a = b.mul(oms, rest);
    let p2 = b.fma(sh, p2, a);
    // Reproject onto the hemisphere.
    let p2sq = b.mul(p2, p2);
    let h = b.sub(one, p1sq);
    let h = b.sub(h, p2sq);
    let h = b.binary(BinaryOp::Max, h, zero);
    let h = b.unary(UnaryOp::Sqrt, h);
    let mut nh = [zero; 3];
    for k in 0..3 {
        let x = b.mul(p1, t1[k]);
        let x = b.fma(p2, t2[k], x);
        nh[k] = b.fma(h, vh[k], x);
    }
    // Unstretch.
    let mx = b.mul(alpha, nh[0]);
    let my = b.mul(alpha, nh[1]);
    let mz = b.binary(BinaryOp::Max, nh[2], zero);
    let m = normalize(b, [mx, my, mz]);
    // Reflect wi about m.
    let dwm = dot3(b, wi, m);
    let two = c(b, 2.0);
    let k2 = b.mul(two, dwm);
    let wo: Vec<Value> = (0..3)
        .map(|k| {
            let x = b.mul(k2, m[k]);
            b.sub(x, wi[k])
        })
        .collect();
    // GGX D(m) = α² / (π ((m.z²)(α² − 1) + 1)²).
    let a2 = b.mul(alpha, alpha);
    let mz2 = b.mul(m[2], m[2]);
    let am1 = b.sub(a2, one);
    let t = b.fma(mz2, am1, one);
    let t2v = b.mul(t, t);
    let den = b.mul(pi, t2v);
    let d = b.div(a2, den);
    // Separable Smith G; zero for wo below the surface.
    let g1i = smith_g1(b, wi[2], a2);
    let woz_pos = b.cmp(CmpOp::Gt, wo[2], zero);
    let g1o = smith_g1(b, wo[2], a2);
    let g1o = b.select(woz_pos, g1o, zero);
    let g = b.mul(g1i, g1o);
    // Schlick's Fresnel with the cosine between wi and m.
    let cm = b.binary(BinaryOp::Max, dwm, zero);
    let om = b.sub(one, cm);
    let om2 = b.mul(om, om);
    let om4 = b.mul(om2, om2);
    let om5 = b.mul(om4, om);
    let omf = b.sub(one, f0);
    let fr = b.fma(omf, om5, f0);
    // Sample weight F G / G1(wi) = F G1(wo).
    let weight = b.mul(fr, g1o);
    vec![m[0], m[1], m[2], wo[0], wo[1], wo[2], d, g, fr, weight]
}

/// Deterministic inputs for `n` lanes, `[param][lane]` bits: directions mostly above the
/// surface (a few below), roughness 0.05..0.8.
pub fn inputs(n: usize) -> Vec<u32> {
    let mut out = vec![0u32; PARAMS.len() * n];
    let mut state = 0x853c_49e6_748f_ea9bu64;
    let mut rnd = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 40) as f32) / (1u64 << 24) as f32
    };
    for l in 0..n {
        let z = rnd() * 1.05 - 0.05;
        let phi = rnd() * std::f32::consts::TAU;
        let s = (1.0 - z * z).max(0.0).sqrt();
        let vals = [s * phi.cos(), s * phi.sin(), z, rnd(), rnd(), 0.05 + 0.75 * rnd(), 0.04 + 0.2 * rnd()];
        for (p, v) in vals.iter().enumerate() {
            out[p * n + l] = v.to_bits();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_cranelift::{Jit, Lanes};

    #[test]
    fn the_kernel_agrees_with_the_interpreter_in_every_mode() {
        let m = module();
        verify_module(&m).unwrap();
        let n = 203;
        let args = inputs(n);
        let mut it = drs_interp::Interpreter::new(&m);
        let mut want = vec![0u32; 10 * n];
        for l in 0..n {
            let a: Vec<u32> = (0..PARAMS.len()).map(|p| args[p * n + l]).collect();
            let r = it.call(FuncId(0), &a).unwrap();
            for (k, x) in r.into_iter().enumerate() {
                want[k * n + l] = x;
            }
        }
        // Sanity of the physics: D ≥ 0, weights in [0, 1] for lanes above the surface.
        for l in 0..n {
            let d = f32::from_bits(want[6 * n + l]);
            let w = f32::from_bits(want[9 * n + l]);
            assert!(d >= 0.0 && (0.0..=1.0001).contains(&w), "lane {l}: D {d} weight {w}");
        }
        for mode in Lanes::ALL {
            let jit = Jit::compile(&m, mode).unwrap();
            let mut got = vec![0u32; 10 * n];
            jit.function("microfacet").unwrap().call_batch(n, &args, &mut got, &[], &jit.externs()).unwrap();
            assert_eq!(got, want, "{mode:?}");
        }
    }
}
