//! `asin(x)` and `acos(x)`.
//!
//! Method (Cephes `asinf`, with SLEEF's `xasinf_u1` / `xacosf_u1` double-float
//! evaluation): for `|x| < 1/2`, `asin x = x + x^3 P(x^2)` with a minimax `P`; for
//! `|x| >= 1/2` the identity `asin x = π/2 - 2 asin(sqrt((1 - |x|) / 2))`, where
//! `(1 - |x|) / 2` is exact and the square root is a double-float. `acos x = π/2 - asin x`
//! for `|x| < 1/2`, `2 asin(sqrt((1 - x)/2))` for `x >= 1/2` and `π - 2 asin(...)` for
//! `x <= -1/2`, all summed in double-float.
//!
//! Special values: `|x| > 1` and NaN give NaN; asin(±0) = ±0, acos(1) = +0.

use super::emit::{Df, Emit, Ops};
use drs_ir::CmpOp;

/// The shared part: `(o, x2, x, u)` where `o` is `|d| < 1/2`, `x2` the argument of the
/// polynomial, `x` the double-float `|d|` or `sqrt(x2)`, and `u = x^3 P(x2)`.
fn core<E: Emit>(e: &mut E, d: E::V) -> (E::V, E::V, Df<E::V>, E::V) {
    let ad = e.abs(d);
    let o = e.fcmpc(CmpOp::Lt, ad, 0.5);
    let dd = e.mul(d, d);
    let one = e.f(1.0);
    let om = e.sub(one, ad);
    let om = e.mulc(om, 0.5);
    let x2 = e.sel(o, dd, om);
    let sq = e.df_sqrt_f(x2);
    let zero = e.f(0.0);
    let x = (e.sel(o, ad, sq.0), e.sel(o, zero, sq.1));
    let unit = e.fcmpc(CmpOp::Eq, ad, 1.0);
    let x = (e.sel(unit, zero, x.0), e.sel(unit, zero, x.1));
    let u = e.horner(x2, &[0.4197454825e-1, 0.2424046025e-1, 0.4547423869e-1, 0.7495029271e-1, 0.1666677296e+0]);
    let xx = e.mul(x2, x.0);
    let u = e.mul(u, xx);
    (o, x2, x, u)
}

pub fn asin<E: Emit>(e: &mut E, d: E::V) -> E::V {
    let (o, _, x, u) = core(e, d);
    let pio4 = e.dfc(3.1415927410125732422 / 4.0, -8.7422776573475857731e-08 / 4.0);
    let y = e.df_sub_df_df(pio4, x);
    let y = e.df_sub_df_f(y, u);
    let small = e.add(u, x.0);
    let big = e.df_sum(y);
    let big = e.mulc(big, 2.0);
    let r = e.sel(o, small, big);
    e.mulsign(r, d)
}

pub fn acos<E: Emit>(e: &mut E, d: E::V) -> E::V {
    let (o, _, x, u) = core(e, d);
    let pio2 = e.dfc(3.1415927410125732422 / 2.0, -8.7422776573475857731e-08 / 2.0);
    let xs = e.mulsign(x.0, d);
    let us = e.mulsign(u, d);
    let a = e.df_add_ff(xs, us);
    let y = e.df_sub_df_df(pio2, a);
    let x = e.df_add_df_f(x, u);
    let x2 = e.df_scale(x, 2.0);
    let y = (e.sel(o, y.0, x2.0), e.sel(o, y.1, x2.1));
    let neg = e.fcmpc(CmpOp::Lt, d, 0.0);
    let no = e.unary(drs_ir::UnaryOp::Not, drs_ir::Ty::Bool, o);
    let flip = e.and(no, neg);
    let pi = e.dfc(3.1415927410125732422, -8.7422776573475857731e-08);
    let yp = e.df_sub_df_df(pi, y);
    let y = (e.sel(flip, yp.0, y.0), e.sel(flip, yp.1, y.1));
    e.df_sum(y)
}
