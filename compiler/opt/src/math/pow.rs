//! `pow(x, y)`.
//!
//! Method: `|x|^y = exp(y log|x|)` with `log|x|` as a double-float (the `log` reduction of
//! [`super::log`] carried in double-float throughout, SLEEF's `logkf`), the product `y log|x|`
//! as a double-float, and an `exp` of a double-float argument (SLEEF's `expkf`) whose
//! reduction subtracts `q ln 2` from both parts. The sign and the special cases follow C99
//! F.9.4.4 / IEEE 754-2008 `pow`:
//!
//! - `pow(x, ±0) = 1` for any `x`, even NaN; `pow(+1, y) = 1` for any `y`, even NaN;
//! - `pow(x, y)` is NaN for finite `x < 0` and finite non-integer `y`;
//! - `pow(x < 0, odd integer y) = -pow(|x|, y)`, even integer: `pow(|x|, y)`;
//! - `pow(±0, y < 0)` = ±inf for odd integer `y`, +inf otherwise; `pow(±0, y > 0)` = ±0 for
//!   odd integer `y`, +0 otherwise;
//! - `pow(-1, ±inf) = 1`; `pow(x, -inf)` = +inf for `|x| < 1`, +0 for `|x| > 1`;
//!   `pow(x, +inf)` = +0 for `|x| < 1`, +inf for `|x| > 1`;
//! - `pow(-inf, y)` = `pow(-0, -y)`; `pow(+inf, y)` = +0 for `y < 0`, +inf for `y > 0`;
//! - otherwise NaN in either argument gives NaN.

use super::emit::{Df, Emit, Ops};
use super::exp::{clamp_q, L2L, L2U, R_LN2};
use super::log::{atanh_arg, reduce};
use drs_ir::CmpOp;

/// `log d` as a double-float, for finite positive `d`.
fn logk<E: Emit>(e: &mut E, d: E::V) -> Df<E::V> {
    let (m, ef) = reduce(e, d);
    let x = atanh_arg(e, m);
    let x2 = e.df_squ(x);
    let t = e.horner(x2.0, &[0.240320354700088500976562, 0.285112679004669189453125, 0.400007992982864379882812]);
    let c = e.dfc(0.66666662693023681640625, 3.69183861259614332084311e-09);
    let ln2 = e.dfc(0.69314718246459960938, -1.904654323148236017e-09);
    let s = e.df_mul_df_f(ln2, ef);
    let x2x = e.df_scale(x, 2.0);
    let s = e.df_add_df_df(s, x2x);
    let x3 = e.df_mul_df_df(x2, x);
    let p = e.df_mul_df_f(x2, t);
    let p = e.df_add2_df_df(p, c);
    let p = e.df_mul_df_df(x3, p);
    e.df_add_df_df(s, p)
}

/// `exp d` for a double-float `d`.
fn expk<E: Emit>(e: &mut E, d: Df<E::V>) -> E::V {
    let u = e.df_sum(d);
    let u = e.mulc(u, R_LN2);
    let q = e.round(u);
    let q = clamp_q(e, q);
    let a = e.mulc(q, -L2U);
    let s = e.df_add2_df_f(d, a);
    let b = e.mulc(q, -L2L);
    let s = e.df_add2_df_f(s, b);
    let s = e.df_normalize(s);
    let u = e.horner(
        s.0,
        &[
            0.00136324646882712841033936,
            0.00836596917361021041870117,
            0.0416710823774337768554688,
            0.166665524244308471679688,
            0.499999850988388061523438,
        ],
    );
    let s2 = e.df_squ(s);
    let s2u = e.df_mul_df_f(s2, u);
    let t = e.df_add_df_df(s, s2u);
    let one = e.f(1.0);
    let t = e.df_add_f_df(one, t);
    let u = e.df_sum(t);
    let qi = e.to_int(q);
    let u = e.ldexp2(u, qi);
    let under = e.fcmpc(CmpOp::Lt, d.0, -104.0);
    let u = e.selc(under, 0.0, u);
    let over = e.fcmpc(CmpOp::Gt, d.0, 89.0);
    e.selc(over, f32::INFINITY, u)
}

pub fn pow<E: Emit>(e: &mut E, x: E::V, y: E::V) -> E::V {
    let ay = e.abs(y);
    let ty = e.trunc(y);
    let int = e.fcmp(CmpOp::Eq, ty, y);
    let huge = e.fcmpc(CmpOp::Gt, ay, 16777216.0);
    let yisint = e.or(int, huge);
    let yi = e.to_int(ty);
    let low = e.iand(yi, 1);
    let odd = e.icmpc(CmpOp::Eq, low, 1);
    let small = e.fcmpc(CmpOp::Lt, ay, 16777216.0);
    let odd = e.and(odd, yisint);
    let yisodd = e.and(odd, small);

    let ax = e.abs(x);
    let l = logk(e, ax);
    let ly = e.df_mul_df_f(l, y);
    let r = expk(e, ly);
    let rnan = e.is_nan(r);
    let r = e.selc(rnan, f32::INFINITY, r);

    // sign: x > 0: 1; x <= 0: integer y: ±1 (odd: -1), else NaN
    let pos = e.fcmpc(CmpOp::Gt, x, 0.0);
    let one = e.f(1.0);
    let m1 = e.f(-1.0);
    let nan = e.f(f32::NAN);
    let sgn = e.sel(yisodd, m1, one);
    let sgn = e.sel(yisint, sgn, nan);
    let sgn = e.sel(pos, one, sgn);
    let r = e.mul(r, sgn);

    // y = ±inf: efx = (|x| - 1) with the sign of y flipped when y < 0
    let ax1 = e.addc(ax, -1.0);
    let efx = e.mulsign(ax1, y);
    let efx_neg = e.fcmpc(CmpOp::Lt, efx, 0.0);
    let efx_zero = e.fcmpc(CmpOp::Eq, efx, 0.0);
    let inf = e.f(f32::INFINITY);
    let yinf_r = e.sel(efx_zero, one, inf);
    let yinf_r = e.selc(efx_neg, 0.0, yinf_r);
    let yinf = e.is_inf(y);
    let r = e.sel(yinf, yinf_r, r);

    // x = ±inf or ±0
    let xinf = e.is_inf(x);
    let xzero = e.fcmpc(CmpOp::Eq, x, 0.0);
    let xspecial = e.or(xinf, xzero);
    let yneg = e.signbit(y);
    let zero_or_inf = e.xor(yneg, xzero);
    let mag = e.selc(zero_or_inf, 0.0, inf);
    let sgnsrc = e.sel(yisodd, x, one);
    let xs_r = e.mulsign(mag, sgnsrc);
    let r = e.sel(xspecial, xs_r, r);

    let xnan = e.is_nan(x);
    let ynan = e.is_nan(y);
    let anynan = e.or(xnan, ynan);
    let r = e.sel(anynan, nan, r);

    let y0 = e.fcmpc(CmpOp::Eq, y, 0.0);
    let x1 = e.fcmpc(CmpOp::Eq, x, 1.0);
    let unit = e.or(y0, x1);
    e.sel(unit, one, r)
}
