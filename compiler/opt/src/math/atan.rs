//! `atan(x)` and `atan2(y, x)`.
//!
//! Method (SLEEF's `atan2kf_u1`): fold the angle into the octant `[0, π/4]` by swapping and
//! negating `x` and `y` (quadrant count `q`), take the double-float quotient `s = y / x`,
//! evaluate `atan s = s + s^3 P(s^2)` with a minimax `P` of degree 8 whose leading terms are
//! in double-float, and add `q π/2` in double-float.
//!
//! Special values follow C99 F.9.1.3/F.9.1.4: atan(±inf) = ±π/2, atan(±0) = ±0;
//! atan2(±0, x >= +0) = ±0, atan2(±0, x <= -0) = ±π, atan2(y, ±0) = ±π/2 (y != 0),
//! atan2(±inf, +inf) = ±π/4, atan2(±inf, -inf) = ±3π/4, atan2(±y, +inf) = ±0,
//! atan2(±y, -inf) = ±π, NaN in either argument gives NaN.

use super::emit::{Df, Emit, Ops};
use drs_ir::CmpOp;

fn atan2k<E: Emit>(e: &mut E, y: Df<E::V>, x: Df<E::V>) -> Df<E::V> {
    let xneg = e.fcmpc(CmpOp::Lt, x.0, 0.0);
    let m2 = e.i(-2);
    let z = e.i(0);
    let q = e.isel(xneg, m2, z);
    let nx = e.df_neg(x);
    let x = (e.sel(xneg, nx.0, x.0), e.sel(xneg, nx.1, x.1));
    let p = e.fcmp(CmpOp::Lt, x.0, y.0);
    let q1 = e.iaddc(q, 1);
    let q = e.isel(p, q1, q);
    let nx = e.df_neg(x);
    let s = (e.sel(p, nx.0, y.0), e.sel(p, nx.1, y.1));
    let t = (e.sel(p, y.0, x.0), e.sel(p, y.1, x.1));
    let s = e.df_div(s, t);
    let t = e.df_squ(s);
    let t = e.df_normalize(t);
    let u = e.horner(
        t.0,
        &[
            -0.00176397908944636583328247,
            0.0107900900766253471374512,
            -0.0309564601629972457885742,
            0.0577365085482597351074219,
            -0.0838950723409652709960938,
            0.109463557600975036621094,
            -0.142626821994781494140625,
            0.199983194470405578613281,
        ],
    );
    let ut = e.mul(u, t.0);
    let c = e.f(-0.333332866430282592773438);
    let a = e.df_add_ff(c, ut);
    let t = e.df_mul_df_df(t, a);
    let one = e.f(1.0);
    let a = e.df_add_f_df(one, t);
    let t = e.df_mul_df_df(s, a);
    let qf = e.to_float(q);
    let pio2 = e.dfc(1.5707963705062866211, -4.3711388286737928865e-08);
    let base = e.df_mul_df_f(pio2, qf);
    e.df_add_df_df(base, t)
}

pub fn atan<E: Emit>(e: &mut E, d: E::V) -> E::V {
    let ad = e.abs(d);
    let zero = e.f(0.0);
    let one = e.f(1.0);
    let r = atan2k(e, (ad, zero), (one, zero));
    let r = e.df_sum(r);
    let inf = e.is_inf(d);
    let r = e.selc(inf, std::f32::consts::FRAC_PI_2, r);
    let r = e.mulsign(r, d);
    let a = e.abs(d);
    let tiny = e.fcmpc(CmpOp::Lt, a, 2.44140625e-4);
    e.sel(tiny, d, r)
}

/// `isinf(d) ? m : 0` where `m` already carries the sign of `d` (SLEEF's `visinf2`).
fn inf_or_zero<E: Emit>(e: &mut E, d: E::V, m: E::V) -> E::V {
    let inf = e.is_inf(d);
    let z = e.f(0.0);
    e.sel(inf, m, z)
}

pub fn atan2<E: Emit>(e: &mut E, y: E::V, x: E::V) -> E::V {
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    let ax = e.abs(x);
    let o = e.fcmpc(CmpOp::Lt, ax, 2.9387372783541830947e-39);
    let xs = e.mulc(x, 16777216.0);
    let x = e.sel(o, xs, x);
    let ys = e.mulc(y, 16777216.0);
    let y = e.sel(o, ys, y);

    let ay = e.abs(y);
    let zero = e.f(0.0);
    let d = atan2k(e, (ay, zero), (x, zero));
    let r = e.df_sum(d);
    let r = e.mulsign(r, x);

    let pio2 = e.f(FRAC_PI_2);
    let xinf = e.is_inf(x);
    let xzero = e.fcmpc(CmpOp::Eq, x, 0.0);
    let c = e.or(xinf, xzero);
    let m = e.mulsign(pio2, x);
    let m = inf_or_zero(e, x, m);
    let v = e.sub(pio2, m);
    let r = e.sel(c, v, r);

    let yinf = e.is_inf(y);
    let pio4 = e.f(FRAC_PI_4);
    let m = e.mulsign(pio4, x);
    let m = inf_or_zero(e, x, m);
    let v = e.sub(pio2, m);
    let r = e.sel(yinf, v, r);

    let yzero = e.fcmpc(CmpOp::Eq, y, 0.0);
    let xneg = e.signbit(x);
    let pi = e.f(PI);
    let v = e.sel(xneg, pi, zero);
    let r = e.sel(yzero, v, r);

    let r = e.mulsign(r, y);
    let xnan = e.is_nan(x);
    let ynan = e.is_nan(y);
    let nan = e.or(xnan, ynan);
    e.selc(nan, f32::NAN, r)
}
