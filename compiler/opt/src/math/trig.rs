//! `sin(x)`, `cos(x)` and `tan(x)`.
//!
//! Range reduction (Cody–Waite with FMA, in double-float): `r = x - k C` for `C = π` (sin),
//! `C = π/2` (cos, tan) and an integer `k`; `C = C1 + C2 + C3` in three f32 parts (72 bits).
//! `k C1` and `k C2` are formed exactly with FMA two-products, `x - k C1` is exact (Sterbenz),
//! and the rest is summed in double-float, so `r` is accurate to about `|x| 2^-72` absolute.
//! `k` is `round(x / C)` corrected with the exact remainder of the product `x (1/C)`, so
//! `|r| <= C/2` up to an ulp.
//!
//! Kernels (SLEEF's `xsinf_u1` / `xcosf_u1` / `xtanf_u1`): `sin r` on `[-π/2, π/2]` by an odd
//! polynomial of degree 9 whose leading terms are evaluated in double-float; `cos x` as
//! `±sin(x - k π/2)` for odd `k`; `tan r` on `[-π/4, π/4]` by an odd polynomial of degree 15 in
//! double-float, and `tan x = -1 / tan r` for odd `k`.
//!
//! Documented range: the error bound of `docs/math.md` holds for `|x| <= 2^17` (measured
//! exhaustively below that); above, the reduction keeps 72 bits of π, which is accurate for
//! most arguments but not near multiples of π/2 (no Payne–Hanek reduction). sin and cos are
//! clamped to `[-1, 1]` so that huge arguments give bounded results. sin/tan of ±0 and of
//! `|x| < 2^-12` return `x` (correctly rounded there); ±inf and NaN give NaN.

use super::emit::{Df, Emit, Ops};
use drs_ir::{CmpOp, Ty};

const PI: [f32; 3] = [3.1415927410125732, -8.742277657347586e-08, -3.4302490200117637e-15];
const PIO2: [f32; 3] = [PI[0] * 0.5, PI[1] * 0.5, PI[2] * 0.5];
/// 1/π and 2/π as double-floats.
const INV_PI: (f32, f32) = (0.31830987334251404, 1.2841276486597053e-08);
const TWO_OVER_PI: (f32, f32) = (0.6366197466850281, 2.5682552973194106e-08);

/// `round(x * inv + bias)` where `inv` is a double-float, corrected with the exact remainder
/// of the product so that the distance from `x * inv + bias` to the result is at most 1/2 (up
/// to a few ulps of `x * inv`).
fn nearest_multiple<E: Emit>(e: &mut E, x: E::V, inv: (f32, f32), bias: f32) -> E::V {
    let ih = e.f(inv.0);
    let p = e.df_mul_ff(x, ih);
    let il = e.f(inv.1);
    let lo = e.fma(x, il, p.1);
    let b = e.f(bias);
    let (ph, pl) = e.df_add2_ff(p.0, b);
    let lo = e.add(lo, pl);
    let k = e.round(ph);
    // frac = (ph - k) + lo, exact enough; step k by one when it is past a half
    let d = e.sub(ph, k);
    let frac = e.add(d, lo);
    let up = e.fcmpc(CmpOp::Gt, frac, 0.5);
    let down = e.fcmpc(CmpOp::Lt, frac, -0.5);
    let kp = e.addc(k, 1.0);
    let km = e.addc(k, -1.0);
    let k = e.sel(up, kp, k);
    e.sel(down, km, k)
}

/// `x - k (c[0] + c[1] + c[2])` as a normalised double-float, for an integral f32 `k`.
fn reduce<E: Emit>(e: &mut E, x: E::V, k: E::V, c: [f32; 3]) -> Df<E::V> {
    let c1 = e.f(c[0]);
    let p1 = e.df_mul_ff(k, c1);
    let h = e.sub(x, p1.0);
    let c2 = e.f(c[1]);
    let p2 = e.df_mul_ff(k, c2);
    let (th, tl) = e.df_add2_ff(p1.1, p2.0);
    let c3 = e.f(c[2]);
    let k3 = e.fma(k, c3, p2.1);
    let tl = e.add(tl, k3);
    let nth = e.neg(th);
    let (rh, err) = e.df_add2_ff(h, nth);
    let rl = e.sub(err, tl);
    e.df_add2_ff(rh, rl)
}

/// `sin t` for a double-float `t` in `[-π/2, π/2]` (SLEEF `xsinf_u1`'s kernel).
fn sin_kernel<E: Emit>(e: &mut E, t: Df<E::V>) -> E::V {
    let s = e.df_squ(t);
    let u = e.horner(s.0, &[2.6083159809786593541503e-06, -0.0001981069071916863322258, 0.00833307858556509017944336]);
    let us = e.mul(u, s.0);
    let c = e.f(-0.166666597127914428710938);
    let a = e.df_add_ff(c, us);
    let a = e.df_mul_df_df(a, s);
    let one = e.f(1.0);
    let x = e.df_add_f_df(one, a);
    e.df_mul_to_f(t, x)
}

/// Flips the sign of `v` when `cond`.
fn negate_if<E: Emit>(e: &mut E, cond: E::V, v: E::V) -> E::V {
    let n = e.neg(v);
    e.sel(cond, n, v)
}

fn clamp_unit<E: Emit>(e: &mut E, v: E::V) -> E::V {
    // max/min pass a NaN first operand through unchanged... they do not: `max(NaN, -1)` is
    // -1. So clamp with selects that keep NaN.
    let hi = e.fcmpc(CmpOp::Gt, v, 1.0);
    let v = e.selc(hi, 1.0, v);
    let lo = e.fcmpc(CmpOp::Lt, v, -1.0);
    e.selc(lo, -1.0, v)
}

fn tiny<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let a = e.abs(x);
    e.fcmpc(CmpOp::Lt, a, 2.44140625e-4) // 2^-12
}

/// Arguments above this go through the Payne–Hanek reduction.
const LARGE: f32 = 16777216.0; // 2^24

/// `0 < |x| <= LARGE` is false and `x` finite: the branch condition of the large reduction.
fn is_large<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let a = e.abs(x);
    let big = e.fcmpc(CmpOp::Gt, a, LARGE);
    let fin = e.fcmpc(CmpOp::Lt, a, f32::INFINITY);
    e.and(big, fin)
}

/// The bits of 2/π, 32 per word, after one zero word: `2/π = sum T[k+1] 2^(-32(k+1))`.
const TWO_OVER_PI_BITS: [u32; 8] =
    [0, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab];

/// `(hi, lo)` of the 64-bit product `m v` for `m < 2^24`, with 32-bit operations only.
fn mul64<E: Emit>(e: &mut E, m: E::V, v: E::V) -> (E::V, E::V) {
    use drs_ir::BinaryOp::{Add, And, Mul, Shr};
    let lo = e.ubin(Mul, m, v);
    let mh = e.ubinc(Shr, m, 12);
    let ml = e.ubinc(And, m, 0xfff);
    let vh = e.ubinc(Shr, v, 16);
    let vl = e.ubinc(And, v, 0xffff);
    // A = m vl < 2^40: floor(A / 2^32) = (mh vl + (ml vl >> 12)) >> 20
    let a_lo = e.ubin(Mul, m, vl);
    let t = e.ubin(Mul, ml, vl);
    let t = e.ubinc(Shr, t, 12);
    let a_hi = e.ubin(Mul, mh, vl);
    let a_hi = e.ubin(Add, a_hi, t);
    let a_hi = e.ubinc(Shr, a_hi, 20);
    // B = m vh < 2^40: floor(B 2^16 / 2^32) = (mh vh + (ml vh >> 12)) >> 4
    let t = e.ubin(Mul, ml, vh);
    let t = e.ubinc(Shr, t, 12);
    let b = e.ubin(Mul, mh, vh);
    let b = e.ubin(Add, b, t);
    let b_hi = e.ubinc(Shr, b, 4);
    // carry out of (B 2^16 mod 2^32) + (A mod 2^32)
    let c = e.ucmp(CmpOp::Lt, lo, a_lo);
    let one = e.u(1);
    let zero = e.u(0);
    let c = e.usel(c, one, zero);
    let hi = e.ubin(Add, b_hi, a_hi);
    (e.ubin(Add, hi, c), lo)
}

/// Payne–Hanek reduction (Payne & Hanek, "Radian reduction for trigonometric functions",
/// SIGNUM Newsletter 18(1), 1983) of a finite `a >= 2^24`: `a = (4n + q) π/2 + r` with
/// `q` in 0..4 (i32) and `|r| <= π/4` (double-float). `a = m 2^(E-23)`; the 96 bits of 2/π
/// that matter at exponent `E` are cut out of [`TWO_OVER_PI_BITS`] (word chosen by a
/// chain of selects, bit offset by a funnel shift), multiplied by the 24-bit `m` modulo 2^96
/// with 32-bit integer operations, and the fixed-point product gives `q` (its top two bits)
/// and the fraction (94 bits), which is centred and converted to a double-float exactly.
fn payne_hanek<E: Emit>(e: &mut E, a: E::V) -> (E::V, Df<E::V>) {
    use drs_ir::BinaryOp::{Add, And, Or, Shl, Shr, Sub, Xor};
    let bits = e.bitcast(Ty::F32, Ty::U32, a);
    // window start, in bits of TWO_OVER_PI_BITS: E + 7 = biased exponent - 120 (>= 31)
    let be = e.ubinc(Shr, bits, 23);
    let start = e.ubinc(Sub, be, 120);
    let w = e.ubinc(Shr, start, 5);
    let o = e.ubinc(And, start, 31);
    let mant = e.ubinc(And, bits, 0x7f_ffff);
    let m = e.ubinc(Or, mant, 0x80_0000);
    // the words T[w + j], j = 0..4, with w in 0..=4
    let is: Vec<E::V> = (1..=4u32)
        .map(|k| {
            let kk = e.u(k);
            e.ucmp(CmpOp::Eq, w, kk)
        })
        .collect();
    let words: Vec<E::V> = (0..4usize)
        .map(|j| {
            let mut v = e.u(TWO_OVER_PI_BITS[j]);
            for k in 1..=4usize {
                let t = e.u(TWO_OVER_PI_BITS[k + j]);
                v = e.usel(is[k - 1], t, v);
            }
            v
        })
        .collect();
    // V_j = (T[w+j] << o) | (T[w+j+1] >> (32 - o)), with the o = 0 case giving T[w+j]
    let ro = e.u(31);
    let ro = e.ubin(Sub, ro, o);
    let v: Vec<E::V> = (0..3)
        .map(|j| {
            let hi = e.ubin(Shl, words[j], o);
            let lo = e.ubinc(Shr, words[j + 1], 1);
            let lo = e.ubin(Shr, lo, ro);
            e.ubin(Or, hi, lo)
        })
        .collect();
    // P = m V mod 2^96 = (p0, p1, p2)
    let (h2, p2) = mul64(e, m, v[2]);
    let (h1, l1) = mul64(e, m, v[1]);
    let l0 = e.ubin(drs_ir::BinaryOp::Mul, m, v[0]);
    let p1 = e.ubin(Add, l1, h2);
    let c1 = e.ucmp(CmpOp::Lt, p1, l1);
    let one = e.u(1);
    let zero = e.u(0);
    let c1 = e.usel(c1, one, zero);
    let p0 = e.ubin(Add, l0, h1);
    let p0 = e.ubin(Add, p0, c1);
    // q = top two bits; fraction = the other 94; centre it: f >= 1/2 -> f - 1, q + 1
    let q = e.ubinc(Shr, p0, 30);
    let f0 = e.ubinc(And, p0, 0x3fff_ffff);
    let half = e.ubinc(Shr, f0, 29);
    let neg = e.ucmp(CmpOp::Eq, half, one);
    // two's complement of the 94-bit fraction
    let n2 = e.ubinc(Xor, p2, u32::MAX);
    let n2 = e.ubin(Add, n2, one);
    let c = e.ucmp(CmpOp::Eq, p2, zero);
    let cu = e.usel(c, one, zero);
    let n1 = e.ubinc(Xor, p1, u32::MAX);
    let n1 = e.ubin(Add, n1, cu);
    let z1 = e.ucmp(CmpOp::Eq, p1, zero);
    let c = e.and(c, z1);
    let cu = e.usel(c, one, zero);
    let n0 = e.ubinc(Xor, f0, u32::MAX);
    let n0 = e.ubin(Add, n0, cu);
    let n0 = e.ubinc(And, n0, 0x3fff_ffff);
    let g0 = e.usel(neg, n0, f0);
    let g1 = e.usel(neg, n1, p1);
    let g2 = e.usel(neg, n2, p2);
    let q1 = e.ubin(Add, q, one);
    let q = e.usel(neg, q1, q);
    let q = e.ubinc(And, q, 3);
    let q = e.bitcast(Ty::U32, Ty::I32, q);
    // |f| = g0 2^-30 + g1 2^-62 + g2 2^-94, summed exactly in 16-bit pieces
    let mut terms = Vec::new();
    for (word, scale) in [(g0, -30), (g1, -62), (g2, -94)] {
        let hi = e.ubinc(Shr, word, 16);
        let lo = e.ubinc(And, word, 0xffff);
        let hi = e.u24_to_float(hi);
        let lo = e.u24_to_float(lo);
        terms.push(e.mulc(hi, 2f32.powi(scale + 16)));
        if scale > -94 {
            terms.push(e.mulc(lo, 2f32.powi(scale)));
        }
    }
    let zero_f = e.f(0.0);
    let mut g = (terms[0], zero_f);
    for &t in &terms[1..] {
        g = e.df_add2_df_f(g, t);
    }
    let g = e.df_normalize(g);
    let pio2 = e.dfc(1.5707963705062866, -4.371139000186243e-08);
    let r = e.df_mul_df_df(g, pio2);
    let nr = e.df_neg(r);
    let r = (e.sel(neg, nr.0, r.0), e.sel(neg, nr.1, r.1));
    (q, r)
}

/// Payne–Hanek for a signed `x`: `x = (4n + q) π/2 + r`, `q` in 0..4, `|r| <= π/4`.
fn large_reduction<E: Emit>(e: &mut E, x: E::V) -> (E::V, Df<E::V>) {
    let a = e.abs(x);
    let (q, r) = payne_hanek(e, a);
    let s = e.signbit(x);
    let z = e.i(0);
    let nq = e.isub(z, q);
    let nq = e.iand(nq, 3);
    let q = e.isel(s, nq, q);
    let nr = e.df_neg(r);
    (q, (e.sel(s, nr.0, r.0), e.sel(s, nr.1, r.1)))
}

/// `r + c π/2` (double-float) for `c` = ±1, chosen by `up` (+1) or not (-1).
fn shift_quarter<E: Emit>(e: &mut E, r: Df<E::V>, up: E::V) -> Df<E::V> {
    let p = e.dfc(PIO2_DF.0, PIO2_DF.1);
    let m = e.df_neg(p);
    let c = (e.sel(up, p.0, m.0), e.sel(up, p.1, m.1));
    let s = e.df_add2_df_df(r, c);
    e.df_normalize(s)
}

const PIO2_DF: (f32, f32) = (1.5707963705062866, -4.371139000186243e-08);

pub fn sin<E: Emit>(e: &mut E, x: E::V) -> E::V {
    // (odd: k is odd, r) with x = k π + r, |r| <= π/2
    let large = is_large(e, x);
    let out = e.if_else(
        large,
        &[Ty::Bool, Ty::F32, Ty::F32],
        |e| {
            let (q, r) = large_reduction(e, x);
            // q even: k = q/2, r; q odd: k = (q±1)/2 and r ∓ π/2, towards r's sign
            let low = e.iand(q, 1);
            let qodd = e.icmpc(CmpOp::Eq, low, 1);
            let rneg = e.fcmpc(CmpOp::Lt, r.0, 0.0);
            let shifted = shift_quarter(e, r, rneg);
            let rs = (e.sel(qodd, shifted.0, r.0), e.sel(qodd, shifted.1, r.1));
            let qp = e.iaddc(q, 1);
            let qm = e.iaddc(q, -1);
            let qq = e.isel(rneg, qm, qp);
            let qq = e.isel(qodd, qq, q);
            let k = e.isra(qq, 1);
            let kl = e.iand(k, 1);
            let odd = e.icmpc(CmpOp::Eq, kl, 1);
            vec![odd, rs.0, rs.1]
        },
        |e| {
            let k = nearest_multiple(e, x, INV_PI, 0.0);
            let r = reduce(e, x, k, PI);
            let q = e.to_int(k);
            let low = e.iand(q, 1);
            let odd = e.icmpc(CmpOp::Eq, low, 1);
            vec![odd, r.0, r.1]
        },
    );
    let u = sin_kernel(e, (out[1], out[2]));
    let u = negate_if(e, out[0], u);
    let u = clamp_unit(e, u);
    let t = tiny(e, x);
    e.sel(t, x, u)
}

pub fn cos<E: Emit>(e: &mut E, x: E::V) -> E::V {
    // (flip, r) with x = dq π/2 + r for an odd dq, |r| <= π/2, cos x = (flip ? -1 : 1) sin r
    let large = is_large(e, x);
    let out = e.if_else(
        large,
        &[Ty::Bool, Ty::F32, Ty::F32],
        |e| {
            let (q, r) = large_reduction(e, x);
            // q odd: dq = q; q even: dq = q ± 1 and r ∓ π/2, towards r's sign
            let low = e.iand(q, 1);
            let qodd = e.icmpc(CmpOp::Eq, low, 1);
            let rneg = e.fcmpc(CmpOp::Lt, r.0, 0.0);
            let shifted = shift_quarter(e, r, rneg);
            let rs = (e.sel(qodd, r.0, shifted.0), e.sel(qodd, r.1, shifted.1));
            let qp = e.iaddc(q, 1);
            let qm = e.iaddc(q, -1);
            let dq = e.isel(rneg, qm, qp);
            let dq = e.isel(qodd, q, dq);
            let bit = e.iand(dq, 2);
            let flip = e.icmpc(CmpOp::Eq, bit, 0);
            vec![flip, rs.0, rs.1]
        },
        |e| {
            // dq = 2 round(x/π - 1/2) + 1
            let k = nearest_multiple(e, x, INV_PI, -0.5);
            let two = e.f(2.0);
            let one = e.f(1.0);
            let dq = e.fma(k, two, one);
            let r = reduce(e, x, dq, PIO2);
            let q = e.to_int(dq);
            let bit = e.iand(q, 2);
            let flip = e.icmpc(CmpOp::Eq, bit, 0);
            vec![flip, r.0, r.1]
        },
    );
    let u = sin_kernel(e, (out[1], out[2]));
    let u = negate_if(e, out[0], u);
    clamp_unit(e, u)
}

pub fn tan<E: Emit>(e: &mut E, x: E::V) -> E::V {
    // (odd, r) with x = k π/2 + r, |r| <= π/4
    let large = is_large(e, x);
    let out = e.if_else(
        large,
        &[Ty::Bool, Ty::F32, Ty::F32],
        |e| {
            let (q, r) = large_reduction(e, x);
            let low = e.iand(q, 1);
            let odd = e.icmpc(CmpOp::Eq, low, 1);
            vec![odd, r.0, r.1]
        },
        |e| {
            let k = nearest_multiple(e, x, TWO_OVER_PI, 0.0);
            let r = reduce(e, x, k, PIO2);
            let q = e.to_int(k);
            let low = e.iand(q, 1);
            let odd = e.icmpc(CmpOp::Eq, low, 1);
            vec![odd, r.0, r.1]
        },
    );
    let (odd, r) = (out[0], (out[1], out[2]));
    let nr = e.df_neg(r);
    let s = (e.sel(odd, nr.0, r.0), e.sel(odd, nr.1, r.1));
    let t = s;
    let s = e.df_squ(s);
    let s = e.df_normalize(s);
    let u = e.horner(
        s.0,
        &[
            0.00446636462584137916564941,
            -8.3920182078145444393158e-05,
            0.0109639242291450500488281,
            0.0212360303848981857299805,
            0.0540687143802642822265625,
        ],
    );
    let us = e.mul(u, s.0);
    let c = e.f(0.133325666189193725585938);
    let xx = e.df_add_ff(c, us);
    let sx = e.df_mul_df_df(s, xx);
    let c = e.f(0.33333361148834228515625);
    let a = e.df_add_f_df(c, sx);
    let a = e.df_mul_df_df(a, s);
    let one = e.f(1.0);
    let xx = e.df_add_f_df(one, a);
    let xx = e.df_mul_df_df(t, xx);
    let rec = e.df_rec_df(xx);
    let xx = (e.sel(odd, rec.0, xx.0), e.sel(odd, rec.1, xx.1));
    let u = e.df_sum(xx);
    let tn = tiny(e, x);
    e.sel(tn, x, u)
}
