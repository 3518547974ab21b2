//! `exp(x)` and `exp2(x)`.
//!
//! Method (Cody & Waite, "Software Manual for the Elementary Functions", 1980, ch. 6):
//! `x = q ln 2 + s` with `q = round(x / ln 2)` and `|s| <= ln 2 / 2`; `ln 2` is split into
//! `L2U + L2L` where `L2U` has 15 significant bits, so that `q * L2U` is exact and the first
//! FMA step is exact. `e^s` by a degree-7 minimax polynomial (coefficients of SLEEF's
//! `xexpf`, Shibata, "SLEEF", 2020), and the result is scaled by `2^q` in two exact
//! multiplications so that a subnormal result is rounded once. `exp2` reduces with
//! `s = x - round(x)` (exact) and a polynomial for `2^s`.
//!
//! Special values: NaN → NaN, +inf → +inf, -inf → +0, overflow → +inf, underflow →
//! subnormals, then +0.

use super::emit::{Emit, Ops};
use drs_ir::CmpOp;

pub(crate) const R_LN2: f32 = std::f32::consts::LOG2_E;
pub(crate) const L2U: f32 = 0.693145751953125;
pub(crate) const L2L: f32 = 1.428606765330187045e-06;

/// Rounds `q` (an f32 holding an integer or NaN) and clamps it to `[-160, 160]` so that the
/// exponent arithmetic of [`Ops::ldexp2`] stays in range; callers select the saturated
/// results outside that range. NaN becomes -160 (callers propagate NaN through `s`).
pub(crate) fn clamp_q<E: Emit>(e: &mut E, q: E::V) -> E::V {
    let lo = e.f(-160.0);
    let hi = e.f(160.0);
    let q = e.max(q, lo);
    e.min(q, hi)
}

pub fn exp<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let t = e.mulc(x, R_LN2);
    let q = e.round(t);
    let q = clamp_q(e, q);
    let nu = e.f(-L2U);
    let s = e.fma(q, nu, x);
    let nl = e.f(-L2L);
    let s = e.fma(q, nl, s);
    let u = e.horner(
        s,
        &[
            0.000198527617612853646278381,
            0.00139304355252534151077271,
            0.00833336077630519866943359,
            0.0416664853692054748535156,
            0.166666671633720397949219,
            0.5,
        ],
    );
    let s2 = e.mul(s, s);
    let u = e.fma(s2, u, s);
    let u = e.addc(u, 1.0);
    let qi = e.to_int(q);
    let u = e.ldexp2(u, qi);
    let under = e.fcmpc(CmpOp::Lt, x, -104.0);
    let u = e.selc(under, 0.0, u);
    let over = e.fcmpc(CmpOp::Gt, x, 100.0);
    e.selc(over, f32::INFINITY, u)
}

pub fn exp2<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let q = e.round(x);
    let q = clamp_q(e, q);
    let s = e.sub(x, q);
    let u = e.horner(
        s,
        &[0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0],
    );
    let one = e.f(1.0);
    let u = e.fma(u, s, one);
    let qi = e.to_int(q);
    let u = e.ldexp2(u, qi);
    let over = e.fcmpc(CmpOp::Ge, x, 128.0);
    let u = e.selc(over, f32::INFINITY, u);
    let under = e.fcmpc(CmpOp::Lt, x, -151.0);
    e.selc(under, 0.0, u)
}
