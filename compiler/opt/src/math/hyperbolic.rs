//! `sinh(x)`, `cosh(x)` and `tanh(x)`.
//!
//! Method: `e^|x|` as a double-float `t 2^q` (the `exp` reduction of [`super::exp`] with a
//! polynomial evaluated in double-float, SLEEF's `expk2f`), then
//! `sinh = (d - 1/d) / 2`, `cosh = (d + 1/d) / 2`, `tanh = (d - 1/d) / (d + 1/d)` in
//! double-float with `d = e^|x|`, which keeps the cancellation of `d - 1/d` harmless. For
//! `|x| > 12`, `e^-|x|` is below half an ulp and `sinh = cosh = e^|x| / 2` is formed as
//! `t 2^(q-1)`, which also gives the right values between `ln(FLT_MAX)` and
//! `ln(2 FLT_MAX)`, where `e^|x|` itself overflows. For `|x| < 2^-12`, sinh and tanh return
//! `x` (correctly rounded there).
//!
//! Special values: sinh(±0) = ±0, tanh(±0) = ±0, cosh(±0) = 1, sinh(±inf) = ±inf,
//! cosh(±inf) = +inf, tanh(±inf) = ±1, NaN gives NaN.

use super::emit::{Df, Emit, Ops};
use super::exp::{clamp_q, L2L, L2U, R_LN2};
use drs_ir::CmpOp;

/// `e^y = t 2^q` for `y >= 0` (or NaN), with `t` a double-float in about `[0.7, 1.42]` and `q`
/// an i32 in `[-160, 160]`.
fn expk2<E: Emit>(e: &mut E, y: E::V) -> (Df<E::V>, E::V) {
    let u = e.mulc(y, R_LN2);
    let q = e.round(u);
    let q = clamp_q(e, q);
    let zero = e.f(0.0);
    let a = e.mulc(q, -L2U);
    let s = e.df_add2_df_f((y, zero), a);
    let b = e.mulc(q, -L2L);
    let s = e.df_add2_df_f(s, b);
    let u = e.horner(s.0, &[0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1]);
    let su = e.df_mul_df_f(s, u);
    let c = e.f(0.166666659414234244790680580464e+0);
    let t = e.df_add2_df_f(su, c);
    let st = e.df_mul_df_df(s, t);
    let half = e.f(0.5);
    let t = e.df_add2_df_f(st, half);
    let s2 = e.df_squ(s);
    let s2t = e.df_mul_df_df(s2, t);
    let t = e.df_add2_df_df(s, s2t);
    let one = e.f(1.0);
    let t = e.df_add_f_df(one, t);
    (t, e.to_int(q))
}

/// `e^y` as a double-float, for `0 <= y <= 12`.
fn exp_df<E: Emit>(e: &mut E, t: Df<E::V>, q: E::V) -> Df<E::V> {
    (e.ldexp2(t.0, q), e.ldexp2(t.1, q))
}

/// `e^y / 2` rounded, for large `y`.
fn half_exp<E: Emit>(e: &mut E, t: Df<E::V>, q: E::V) -> E::V {
    let v = e.df_sum(t);
    let q1 = e.iaddc(q, -1);
    e.ldexp2(v, q1)
}

fn is_tiny<E: Emit>(e: &mut E, y: E::V) -> E::V {
    e.fcmpc(CmpOp::Lt, y, 2.44140625e-4)
}

pub fn sinh<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let y = e.abs(x);
    let (t, q) = expk2(e, y);
    let d = exp_df(e, t, q);
    let r = e.df_rec_df(d);
    let d = e.df_sub_df_df(d, r);
    let small = e.df_sum(d);
    let small = e.mulc(small, 0.5);
    let large = half_exp(e, t, q);
    let big = e.fcmpc(CmpOp::Gt, y, 12.0);
    let v = e.sel(big, large, small);
    let huge = e.fcmpc(CmpOp::Gt, y, 90.0);
    let v = e.selc(huge, f32::INFINITY, v);
    let v = e.mulsign(v, x);
    let tiny = is_tiny(e, y);
    let v = e.sel(tiny, x, v);
    let nan = e.is_nan(x);
    e.sel(nan, x, v)
}

pub fn cosh<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let y = e.abs(x);
    let (t, q) = expk2(e, y);
    let d = exp_df(e, t, q);
    let r = e.df_rec_df(d);
    let d = e.df_add_df_df(d, r);
    let small = e.df_sum(d);
    let small = e.mulc(small, 0.5);
    let large = half_exp(e, t, q);
    let big = e.fcmpc(CmpOp::Gt, y, 12.0);
    let v = e.sel(big, large, small);
    let huge = e.fcmpc(CmpOp::Gt, y, 90.0);
    let v = e.selc(huge, f32::INFINITY, v);
    let nan = e.is_nan(x);
    e.sel(nan, x, v)
}

pub fn tanh<E: Emit>(e: &mut E, x: E::V) -> E::V {
    let y = e.abs(x);
    let (t, q) = expk2(e, y);
    let d = exp_df(e, t, q);
    let r = e.df_rec_df(d);
    let nr = e.df_neg(r);
    let num = e.df_add_df_df(d, nr);
    let den = e.df_add_df_df(d, r);
    let v = e.df_div(num, den);
    let v = e.df_sum(v);
    let sat = e.fcmpc(CmpOp::Gt, y, 8.664339742);
    let v = e.selc(sat, 1.0, v);
    let v = e.mulsign(v, x);
    let tiny = is_tiny(e, y);
    let v = e.sel(tiny, x, v);
    let nan = e.is_nan(x);
    e.sel(nan, x, v)
}
