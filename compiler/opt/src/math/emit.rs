//! The instruction set the math library is written against, with two implementations: one
//! appends IR to a [`Builder`] (the expansion), the other evaluates the same operations
//! directly on bits with the interpreter's exact op semantics ([`Eval`]), so that the
//! library can be measured over billions of inputs without interpreting IR, and is by
//! construction bit-identical to the IR it emits.
//!
//! Also: double-float ("DF", an unevaluated sum `hi + lo` of two f32) arithmetic built on
//! fused multiply-add, after Dekker, "A floating-point technique for extending the
//! available precision" (1971), in the FMA forms used by SLEEF's `df.h`.

use drs_interp as interp;
use drs_ir::{BinaryOp, Builder, CmpOp, Const, Ty, UnaryOp, Value};

/// The primitive operations. Every method maps to exactly one IR instruction.
pub trait Emit {
    type V: Copy;
    fn konst(&mut self, c: Const) -> Self::V;
    fn unary(&mut self, op: UnaryOp, ty: Ty, a: Self::V) -> Self::V;
    fn binary(&mut self, op: BinaryOp, ty: Ty, a: Self::V, b: Self::V) -> Self::V;
    fn fma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    fn cmp(&mut self, op: CmpOp, ty: Ty, a: Self::V, b: Self::V) -> Self::V;
    fn select(&mut self, ty: Ty, c: Self::V, a: Self::V, b: Self::V) -> Self::V;
    fn convert(&mut self, from: Ty, to: Ty, a: Self::V) -> Self::V;
    fn bitcast(&mut self, from: Ty, to: Ty, a: Self::V) -> Self::V;
    /// `if cond { then } else { els }`, each yielding values of the types `tys` (one IR `If`).
    fn if_else(
        &mut self,
        cond: Self::V,
        tys: &[Ty],
        then: impl FnOnce(&mut Self) -> Vec<Self::V>,
        els: impl FnOnce(&mut Self) -> Vec<Self::V>,
    ) -> Vec<Self::V>
    where
        Self: Sized;
}

impl Emit for Builder<'_> {
    type V = Value;
    fn konst(&mut self, c: Const) -> Value {
        Builder::konst(self, c)
    }
    fn unary(&mut self, op: UnaryOp, _ty: Ty, a: Value) -> Value {
        Builder::unary(self, op, a)
    }
    fn binary(&mut self, op: BinaryOp, _ty: Ty, a: Value, b: Value) -> Value {
        Builder::binary(self, op, a, b)
    }
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        Builder::fma(self, a, b, c)
    }
    fn cmp(&mut self, op: CmpOp, _ty: Ty, a: Value, b: Value) -> Value {
        Builder::cmp(self, op, a, b)
    }
    fn select(&mut self, _ty: Ty, c: Value, a: Value, b: Value) -> Value {
        Builder::select(self, c, a, b)
    }
    fn convert(&mut self, _from: Ty, to: Ty, a: Value) -> Value {
        Builder::convert(self, to, a)
    }
    fn bitcast(&mut self, _from: Ty, to: Ty, a: Value) -> Value {
        Builder::bitcast(self, to, a)
    }
    fn if_else(
        &mut self,
        cond: Value,
        _tys: &[Ty],
        then: impl FnOnce(&mut Self) -> Vec<Value>,
        els: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        Builder::if_(self, cond, then, els)
    }
}

/// Direct evaluation of one lane, with `drs_interp`'s op semantics.
pub struct Eval;

impl Emit for Eval {
    type V = u32;
    #[inline]
    fn konst(&mut self, c: Const) -> u32 {
        c.bits()
    }
    #[inline]
    fn unary(&mut self, op: UnaryOp, ty: Ty, a: u32) -> u32 {
        interp::unary(op, ty, a)
    }
    #[inline]
    fn binary(&mut self, op: BinaryOp, ty: Ty, a: u32, b: u32) -> u32 {
        interp::binary(op, ty, a, b)
    }
    #[inline]
    fn fma(&mut self, a: u32, b: u32, c: u32) -> u32 {
        f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)).to_bits()
    }
    #[inline]
    fn cmp(&mut self, op: CmpOp, ty: Ty, a: u32, b: u32) -> u32 {
        interp::compare(op, ty, a, b) as u32
    }
    #[inline]
    fn select(&mut self, _ty: Ty, c: u32, a: u32, b: u32) -> u32 {
        if c != 0 {
            a
        } else {
            b
        }
    }
    #[inline]
    fn convert(&mut self, from: Ty, to: Ty, a: u32) -> u32 {
        drs_ir::convert(from, to, a)
    }
    #[inline]
    fn bitcast(&mut self, _from: Ty, _to: Ty, a: u32) -> u32 {
        a
    }
    fn if_else(
        &mut self,
        cond: u32,
        _tys: &[Ty],
        then: impl FnOnce(&mut Self) -> Vec<u32>,
        els: impl FnOnce(&mut Self) -> Vec<u32>,
    ) -> Vec<u32> {
        if cond != 0 {
            then(self)
        } else {
            els(self)
        }
    }
}

/// A double-float: the unevaluated sum `.0 + .1`, `|.1| <= ulp(.0) / 2` when normalised.
pub type Df<V> = (V, V);

/// Typed shorthands over [`Emit`] and the double-float operations.
pub trait Ops: Emit {
    // --- f32 ---
    fn f(&mut self, x: f32) -> Self::V {
        self.konst(Const::f32(x))
    }
    fn i(&mut self, x: i32) -> Self::V {
        self.konst(Const::I32(x))
    }
    fn add(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Add, Ty::F32, a, b)
    }
    fn sub(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Sub, Ty::F32, a, b)
    }
    fn mul(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Mul, Ty::F32, a, b)
    }
    fn div(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Div, Ty::F32, a, b)
    }
    fn min(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Min, Ty::F32, a, b)
    }
    fn max(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Max, Ty::F32, a, b)
    }
    fn addc(&mut self, a: Self::V, c: f32) -> Self::V {
        let c = self.f(c);
        self.add(a, c)
    }
    fn mulc(&mut self, a: Self::V, c: f32) -> Self::V {
        let c = self.f(c);
        self.mul(a, c)
    }
    /// `a * b + c` with a constant `c` (one Horner step).
    fn fmac(&mut self, a: Self::V, b: Self::V, c: f32) -> Self::V {
        let c = self.f(c);
        self.fma(a, b, c)
    }
    fn neg(&mut self, a: Self::V) -> Self::V {
        self.unary(UnaryOp::Neg, Ty::F32, a)
    }
    fn abs(&mut self, a: Self::V) -> Self::V {
        self.unary(UnaryOp::Abs, Ty::F32, a)
    }
    fn sqrt(&mut self, a: Self::V) -> Self::V {
        self.unary(UnaryOp::Sqrt, Ty::F32, a)
    }
    fn round(&mut self, a: Self::V) -> Self::V {
        self.unary(UnaryOp::Round, Ty::F32, a)
    }
    fn trunc(&mut self, a: Self::V) -> Self::V {
        self.unary(UnaryOp::Trunc, Ty::F32, a)
    }
    fn copysign(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::CopySign, Ty::F32, a, b)
    }
    /// `a` with its sign flipped when `b`'s sign bit is set (SLEEF's `mulsign`).
    fn mulsign(&mut self, a: Self::V, b: Self::V) -> Self::V {
        let ab = self.bits(a);
        let bb = self.bits(b);
        let m = self.i(i32::MIN);
        let s = self.binary(BinaryOp::And, Ty::I32, bb, m);
        let r = self.binary(BinaryOp::Xor, Ty::I32, ab, s);
        self.f32_from_bits(r)
    }
    /// Evaluates the polynomial with coefficients `c` (highest degree first) at `x` by Horner's
    /// rule with FMA.
    fn horner(&mut self, x: Self::V, c: &[f32]) -> Self::V {
        let mut u = self.f(c[0]);
        for &k in &c[1..] {
            u = self.fmac(u, x, k);
        }
        u
    }
    fn fcmp(&mut self, op: CmpOp, a: Self::V, b: Self::V) -> Self::V {
        self.cmp(op, Ty::F32, a, b)
    }
    fn fcmpc(&mut self, op: CmpOp, a: Self::V, c: f32) -> Self::V {
        let c = self.f(c);
        self.cmp(op, Ty::F32, a, c)
    }
    fn sel(&mut self, c: Self::V, a: Self::V, b: Self::V) -> Self::V {
        self.select(Ty::F32, c, a, b)
    }
    fn selc(&mut self, c: Self::V, a: f32, b: Self::V) -> Self::V {
        let a = self.f(a);
        self.select(Ty::F32, c, a, b)
    }
    fn is_nan(&mut self, a: Self::V) -> Self::V {
        self.cmp(CmpOp::Ne, Ty::F32, a, a)
    }
    fn is_inf(&mut self, a: Self::V) -> Self::V {
        let x = self.abs(a);
        self.fcmpc(CmpOp::Eq, x, f32::INFINITY)
    }
    fn signbit(&mut self, a: Self::V) -> Self::V {
        let b = self.bits(a);
        let z = self.i(0);
        self.cmp(CmpOp::Lt, Ty::I32, b, z)
    }
    // --- bool ---
    fn and(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::And, Ty::Bool, a, b)
    }
    fn or(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Or, Ty::Bool, a, b)
    }
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Xor, Ty::Bool, a, b)
    }
    // --- integers ---
    fn u(&mut self, x: u32) -> Self::V {
        self.konst(Const::U32(x))
    }
    fn ubin(&mut self, op: BinaryOp, a: Self::V, b: Self::V) -> Self::V {
        self.binary(op, Ty::U32, a, b)
    }
    /// `a op c` for a u32 constant `c`.
    fn ubinc(&mut self, op: BinaryOp, a: Self::V, c: u32) -> Self::V {
        let c = self.u(c);
        self.binary(op, Ty::U32, a, c)
    }
    fn ucmp(&mut self, op: CmpOp, a: Self::V, b: Self::V) -> Self::V {
        self.cmp(op, Ty::U32, a, b)
    }
    fn usel(&mut self, c: Self::V, a: Self::V, b: Self::V) -> Self::V {
        self.select(Ty::U32, c, a, b)
    }
    /// A u32 holding at most 24 significant bits, as an exact f32.
    fn u24_to_float(&mut self, a: Self::V) -> Self::V {
        self.convert(Ty::U32, Ty::F32, a)
    }
    /// The bits of an f32 as i32.
    fn bits(&mut self, a: Self::V) -> Self::V {
        self.bitcast(Ty::F32, Ty::I32, a)
    }
    fn f32_from_bits(&mut self, a: Self::V) -> Self::V {
        self.bitcast(Ty::I32, Ty::F32, a)
    }
    fn iadd(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Add, Ty::I32, a, b)
    }
    fn isub(&mut self, a: Self::V, b: Self::V) -> Self::V {
        self.binary(BinaryOp::Sub, Ty::I32, a, b)
    }
    fn iaddc(&mut self, a: Self::V, c: i32) -> Self::V {
        let c = self.i(c);
        self.iadd(a, c)
    }
    fn iand(&mut self, a: Self::V, c: i32) -> Self::V {
        let c = self.i(c);
        self.binary(BinaryOp::And, Ty::I32, a, c)
    }
    fn ishl(&mut self, a: Self::V, c: i32) -> Self::V {
        let c = self.i(c);
        self.binary(BinaryOp::Shl, Ty::I32, a, c)
    }
    /// Arithmetic shift right.
    fn isra(&mut self, a: Self::V, c: i32) -> Self::V {
        let c = self.i(c);
        self.binary(BinaryOp::Shr, Ty::I32, a, c)
    }
    fn icmpc(&mut self, op: CmpOp, a: Self::V, c: i32) -> Self::V {
        let c = self.i(c);
        self.cmp(op, Ty::I32, a, c)
    }
    fn isel(&mut self, c: Self::V, a: Self::V, b: Self::V) -> Self::V {
        self.select(Ty::I32, c, a, b)
    }
    /// f32 → i32, truncating and saturating (callers pass integral values in range).
    fn to_int(&mut self, a: Self::V) -> Self::V {
        self.convert(Ty::F32, Ty::I32, a)
    }
    fn to_float(&mut self, a: Self::V) -> Self::V {
        self.convert(Ty::I32, Ty::F32, a)
    }
    /// `2^q` for `-126 <= q <= 127`, built in the exponent field.
    fn pow2i(&mut self, q: Self::V) -> Self::V {
        let e = self.iaddc(q, 0x7f);
        let e = self.ishl(e, 23);
        self.f32_from_bits(e)
    }
    /// `d * 2^q` for `|q| <= 252` in two exact steps (SLEEF's `vldexp2`); callers clamp `q`.
    fn ldexp2(&mut self, d: Self::V, q: Self::V) -> Self::V {
        let h = self.isra(q, 1);
        let rest = self.isub(q, h);
        let a = self.pow2i(h);
        let b = self.pow2i(rest);
        let t = self.mul(d, a);
        self.mul(t, b)
    }
    /// `d * 2^q` by adding to the exponent field; `d * 2^q` must be normal.
    fn ldexp3(&mut self, d: Self::V, q: Self::V) -> Self::V {
        let b = self.bits(d);
        let s = self.ishl(q, 23);
        let r = self.iadd(b, s);
        self.f32_from_bits(r)
    }
    /// The unbiased exponent field of `d` (for normal `d`).
    fn ilogb2k(&mut self, d: Self::V) -> Self::V {
        let b = self.bits(d);
        let e = self.isra(b, 23);
        let e = self.iand(e, 0xff);
        self.iaddc(e, -0x7f)
    }

    // --- double-float ---
    fn dfc(&mut self, hi: f32, lo: f32) -> Df<Self::V> {
        (self.f(hi), self.f(lo))
    }
    fn df_neg(&mut self, x: Df<Self::V>) -> Df<Self::V> {
        (self.neg(x.0), self.neg(x.1))
    }
    fn df_normalize(&mut self, t: Df<Self::V>) -> Df<Self::V> {
        let s = self.add(t.0, t.1);
        let d = self.sub(t.0, s);
        (s, self.add(d, t.1))
    }
    fn df_scale(&mut self, d: Df<Self::V>, s: f32) -> Df<Self::V> {
        (self.mulc(d.0, s), self.mulc(d.1, s))
    }
    fn df_sum(&mut self, d: Df<Self::V>) -> Self::V {
        self.add(d.0, d.1)
    }
    /// `x + y`, `|x| >= |y|`.
    fn df_add_ff(&mut self, x: Self::V, y: Self::V) -> Df<Self::V> {
        let s = self.add(x, y);
        let d = self.sub(x, s);
        (s, self.add(d, y))
    }
    /// `x + y` for any magnitudes (Knuth's two-sum).
    fn df_add2_ff(&mut self, x: Self::V, y: Self::V) -> Df<Self::V> {
        let s = self.add(x, y);
        let v = self.sub(s, x);
        let sv = self.sub(s, v);
        let a = self.sub(x, sv);
        let b = self.sub(y, v);
        (s, self.add(a, b))
    }
    /// `x + y` (DF), any magnitudes.
    fn df_add2_f_df(&mut self, x: Self::V, y: Df<Self::V>) -> Df<Self::V> {
        let (s, e) = self.df_add2_ff(x, y.0);
        (s, self.add(e, y.1))
    }
    /// `x (DF) + y`, `|x| >= |y|`.
    fn df_add_df_f(&mut self, x: Df<Self::V>, y: Self::V) -> Df<Self::V> {
        let s = self.add(x.0, y);
        let d = self.sub(x.0, s);
        let d = self.add(d, y);
        (s, self.add(d, x.1))
    }
    /// `x (DF) + y`, any magnitudes.
    fn df_add2_df_f(&mut self, x: Df<Self::V>, y: Self::V) -> Df<Self::V> {
        let (s, e) = self.df_add2_ff(x.0, y);
        (s, self.add(e, x.1))
    }
    /// `x + y (DF)`, `|x| >= |y|`.
    fn df_add_f_df(&mut self, x: Self::V, y: Df<Self::V>) -> Df<Self::V> {
        let s = self.add(x, y.0);
        let d = self.sub(x, s);
        let d = self.add(d, y.0);
        (s, self.add(d, y.1))
    }
    /// `x + y`, both DF, `|x| >= |y|`.
    fn df_add_df_df(&mut self, x: Df<Self::V>, y: Df<Self::V>) -> Df<Self::V> {
        let s = self.add(x.0, y.0);
        let d = self.sub(x.0, s);
        let d = self.add(d, y.0);
        let d = self.add(d, x.1);
        (s, self.add(d, y.1))
    }
    /// `x + y`, both DF, any magnitudes.
    fn df_add2_df_df(&mut self, x: Df<Self::V>, y: Df<Self::V>) -> Df<Self::V> {
        let (s, e) = self.df_add2_ff(x.0, y.0);
        let l = self.add(x.1, y.1);
        (s, self.add(e, l))
    }
    /// `x (DF) - y`, `|x| >= |y|`.
    fn df_sub_df_f(&mut self, x: Df<Self::V>, y: Self::V) -> Df<Self::V> {
        let s = self.sub(x.0, y);
        let t = self.sub(x.0, s);
        let t = self.sub(t, y);
        (s, self.add(t, x.1))
    }
    /// `x - y`, both DF, `|x| >= |y|`.
    fn df_sub_df_df(&mut self, x: Df<Self::V>, y: Df<Self::V>) -> Df<Self::V> {
        let s = self.sub(x.0, y.0);
        let t = self.sub(x.0, s);
        let t = self.sub(t, y.0);
        let t = self.add(t, x.1);
        (s, self.sub(t, y.1))
    }
    /// The exact product `x * y` (FMA two-product).
    fn df_mul_ff(&mut self, x: Self::V, y: Self::V) -> Df<Self::V> {
        let s = self.mul(x, y);
        let ns = self.neg(s);
        (s, self.fma(x, y, ns))
    }
    fn df_mul_df_f(&mut self, x: Df<Self::V>, y: Self::V) -> Df<Self::V> {
        let s = self.mul(x.0, y);
        let ns = self.neg(s);
        let e = self.fma(x.0, y, ns);
        (s, self.fma(x.1, y, e))
    }
    fn df_mul_df_df(&mut self, x: Df<Self::V>, y: Df<Self::V>) -> Df<Self::V> {
        let s = self.mul(x.0, y.0);
        let ns = self.neg(s);
        let e = self.fma(x.0, y.0, ns);
        let e = self.fma(x.1, y.0, e);
        (s, self.fma(x.0, y.1, e))
    }
    /// `x * y` rounded to one f32.
    fn df_mul_to_f(&mut self, x: Df<Self::V>, y: Df<Self::V>) -> Self::V {
        let a = self.mul(x.0, y.1);
        let b = self.fma(x.1, y.0, a);
        self.fma(x.0, y.0, b)
    }
    fn df_squ(&mut self, x: Df<Self::V>) -> Df<Self::V> {
        let s = self.mul(x.0, x.0);
        let ns = self.neg(s);
        let e = self.fma(x.0, x.0, ns);
        let h2 = self.add(x.0, x.0);
        (s, self.fma(h2, x.1, e))
    }
    /// `1 / d`.
    fn df_rec_f(&mut self, d: Self::V) -> Df<Self::V> {
        let one = self.f(1.0);
        let s = self.div(one, d);
        let nd = self.neg(d);
        let e = self.fma(nd, s, one);
        (s, self.mul(s, e))
    }
    /// `1 / d` (DF).
    fn df_rec_df(&mut self, d: Df<Self::V>) -> Df<Self::V> {
        let one = self.f(1.0);
        let s = self.div(one, d.0);
        let nh = self.neg(d.0);
        let nl = self.neg(d.1);
        let e = self.fma(nh, s, one);
        let e = self.fma(nl, s, e);
        (s, self.mul(s, e))
    }
    /// `n / d`, both DF.
    fn df_div(&mut self, n: Df<Self::V>, d: Df<Self::V>) -> Df<Self::V> {
        let one = self.f(1.0);
        let t = self.div(one, d.0);
        let s = self.mul(n.0, t);
        let ns = self.neg(s);
        let u = self.fma(t, n.0, ns);
        let nh = self.neg(d.0);
        let nl = self.neg(d.1);
        let v = self.fma(nh, t, one);
        let v = self.fma(nl, t, v);
        let w = self.fma(n.1, t, u);
        (s, self.fma(s, v, w))
    }
    /// `sqrt(d)` as DF (one Newton step on the f32 root).
    fn df_sqrt_f(&mut self, d: Self::V) -> Df<Self::V> {
        let t = self.sqrt(d);
        let tt = self.df_mul_ff(t, t);
        let tt = self.df_neg(tt);
        let r = self.df_add2_f_df(d, tt);
        let rt = self.df_rec_f(t);
        let q = self.df_mul_df_df(r, rt);
        // sqrt(d) ~ t + (d - t^2) / (2t)
        let q = self.df_scale(q, 0.5);
        self.df_add_f_df(t, q)
    }
}

impl<E: Emit> Ops for E {}
