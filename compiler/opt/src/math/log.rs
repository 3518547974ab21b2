//! `log(x)` and `log2(x)`.
//!
//! Method: `x = m 2^e` with `m` in `[0.75, 1.5)` (exponent of `x * 4/3` read from the bits;
//! subnormals are first scaled by `2^64`); `log m = 2 atanh(z)`, `z = (m - 1) / (m + 1)`,
//! `|z| <= 0.2`, computed as a double-float quotient; `2 atanh z = 2z + z^3 P(z^2)` with a
//! minimax `P` (coefficients of SLEEF's `xlogf_u1` / `xlog2f`); `e ln 2` and the leading
//! terms are summed in double-float arithmetic, so the only f32 rounding of size is the
//! last one.
//!
//! Special values (C99 F.9.3.7): log(±0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
//! log(NaN) = NaN, log(1) = +0.

use super::emit::{Df, Emit, Ops};
use drs_ir::CmpOp;

/// `(m, e)` with `d = m 2^e`, `m` in `[0.75, 1.5)`, `e` as f32; for finite positive `d`.
pub(crate) fn reduce<E: Emit>(e: &mut E, d: E::V) -> (E::V, E::V) {
    let o = e.fcmpc(CmpOp::Lt, d, f32::MIN_POSITIVE);
    let big = e.mulc(d, 1.8446744e19); // 2^64
    let d = e.sel(o, big, d);
    let t = e.mulc(d, 1.0 / 0.75);
    let ex = e.ilogb2k(t);
    let nex = e.unary(drs_ir::UnaryOp::Neg, drs_ir::Ty::I32, ex);
    let m = e.ldexp3(d, nex);
    let ex64 = e.iaddc(ex, -64);
    let ex = e.isel(o, ex64, ex);
    (m, e.to_float(ex))
}

/// `(m - 1) / (m + 1)` as a double-float.
pub(crate) fn atanh_arg<E: Emit>(e: &mut E, m: E::V) -> Df<E::V> {
    let m1 = e.f(-1.0);
    let p1 = e.f(1.0);
    let n = e.df_add2_ff(m1, m);
    let d = e.df_add2_ff(p1, m);
    e.df_div(n, d)
}

/// Applies the special cases shared by `log` and `log2` to the result `r` for input `d`.
fn specials<E: Emit>(e: &mut E, d: E::V, r: E::V) -> E::V {
    let pinf = e.fcmpc(CmpOp::Eq, d, f32::INFINITY);
    let r = e.selc(pinf, f32::INFINITY, r);
    let neg = e.fcmpc(CmpOp::Lt, d, 0.0);
    let nan = e.is_nan(d);
    let bad = e.or(neg, nan);
    let r = e.selc(bad, f32::NAN, r);
    let zero = e.fcmpc(CmpOp::Eq, d, 0.0);
    e.selc(zero, f32::NEG_INFINITY, r)
}

pub fn log<E: Emit>(e: &mut E, d: E::V) -> E::V {
    let (m, ef) = reduce(e, d);
    let ln2 = e.dfc(0.69314718246459960938, -1.904654323148236017e-09);
    let s = e.df_mul_df_f(ln2, ef);
    let x = atanh_arg(e, m);
    let x2 = e.mul(x.0, x.0);
    let t = e.horner(x2, &[0.3027294874e+0, 0.3996108174e+0, 0.6666694880e+0]);
    let x2x = e.df_scale(x, 2.0);
    let s = e.df_add_df_df(s, x2x);
    let c = e.mul(x2, x.0);
    let c = e.mul(c, t);
    let s = e.df_add_df_f(s, c);
    let r = e.df_sum(s);
    specials(e, d, r)
}

pub fn log2<E: Emit>(e: &mut E, d: E::V) -> E::V {
    let (m, ef) = reduce(e, d);
    let x = atanh_arg(e, m);
    let x2 = e.mul(x.0, x.0);
    let t = e.horner(x2, &[0.4374550283e+0, 0.5764790177e+0, 0.9618012905120]);
    let k = e.dfc(2.8853900432586669922, 3.2734474483568488616e-08);
    let xk = e.df_mul_df_df(x, k);
    let s = e.df_add2_f_df(ef, xk);
    let c = e.mul(x2, x.0);
    let c = e.mul(c, t);
    let s = e.df_add2_df_f(s, c);
    let r = e.df_sum(s);
    specials(e, d, r)
}
