//! Local derivatives of the differentiable operations, shared by both modes: forward mode
//! forms `dy = Σ ∂y/∂xi · dxi`, reverse mode adds `∂y/∂xi · ȳ` to each `x̄i`.
//!
//! Conventions at the edges (spec/derivatives.md): `min`/`max`/`select` pass the derivative
//! of the operand whose value they return (ties go where the value comes from: `min(a, b)`
//! is `a < b ? a : b`, so a tie differentiates along `b`); `abs` has derivative 0 at 0; `sqrt`
//! has derivative 0 at 0; `asin`/`acos` have derivative 0 where `|x| >= 1` (their derivative
//! is infinite at ±1 and they are undefined beyond, so a clamped argument differentiates as
//! the clamp says); `atan2` at the origin and `pow`'s exponent derivative for a base `<= 0`
//! are 0; rounding functions have derivative 0. Multiplications by partial derivatives
//! have a strong zero ([`Partial::Scale`]): a zero derivative stays zero, so a value that a
//! `select` discards never poisons derivatives with `0 · ∞` or `0 · NaN`.

use crate::emit::Emitter;
use drs_ir::{BinaryOp, CmpOp, MathOp, Op, UnaryOp, Value};
use std::f32::consts::LN_2;

/// The derivative of an operation's result with respect to one operand.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Partial {
    Zero,
    One,
    MinusOne,
    /// Multiplies by this value with a *strong zero*: a zero derivative stays zero even where
    /// the partial derivative is infinite or NaN (a pole such as `1/x` at 0, an overflow, or a
    /// primal value computed in a branch that `select` discards), instead of becoming NaN.
    Scale(Value),
    /// One where `cond == when`, else zero (applied with a select, so that an infinite or NaN
    /// derivative elsewhere never leaks through a multiplication by zero).
    Where {
        cond: Value,
        when: bool,
    },
}

impl Partial {
    /// `∂y/∂x · d` for a derivative `d`, or `None` when it is zero.
    pub(crate) fn apply(self, e: &mut Emitter, d: Value) -> Option<Value> {
        match self {
            Partial::Zero => None,
            Partial::One => Some(d),
            Partial::MinusOne => Some(e.neg(d)),
            Partial::Scale(s) => {
                let zero = e.f32(0.0);
                let is_zero = e.cmp(CmpOp::Eq, d, zero);
                let product = e.mul(d, s);
                Some(e.select(is_zero, zero, product))
            }
            Partial::Where { cond, when } => Some(e.where_(cond, d, when)),
        }
    }
}

/// The operands through which an operation is differentiable, in the order of
/// [`partials`]' result. `None` for operations that are not differentiable arithmetic.
pub(crate) fn operands(op: &Op) -> Option<Vec<Value>> {
    Some(match op {
        Op::Unary(_, a) => vec![*a],
        Op::Binary(_, a, b) => vec![*a, *b],
        Op::Fma(a, b, c) => vec![*a, *b, *c],
        Op::Select(c, a, b) => vec![*c, *a, *b],
        Op::Math(_, args) => args.clone(),
        Op::ReplaceGrad(a, b) => vec![*a, *b],
        _ => return None,
    })
}

/// The partial derivatives of `op`'s f32 result with respect to [`operands`]. `args` hold the
/// primal operands and `y` the primal result, as values of the function being emitted (code
/// computing the partials is emitted where they are needed).
pub(crate) fn partials(e: &mut Emitter, op: &Op, args: &[Value], y: Value) -> Vec<Partial> {
    use Partial::*;
    match op {
        Op::Unary(op, _) => vec![unary(e, *op, args[0], y)],
        Op::Binary(op, _, _) => binary(e, *op, args[0], args[1], y),
        Op::Fma(..) => vec![Scale(args[1]), Scale(args[0]), One],
        Op::Select(..) => vec![Zero, Where { cond: args[0], when: true }, Where { cond: args[0], when: false }],
        Op::Math(op, _) => math(e, *op, args, y),
        Op::ReplaceGrad(..) => vec![Zero, One],
        _ => unreachable!("`operands` lists the differentiable operations"),
    }
}

fn unary(e: &mut Emitter, op: UnaryOp, x: Value, y: Value) -> Partial {
    use Partial::*;
    match op {
        UnaryOp::Neg => MinusOne,
        UnaryOp::Abs => {
            // sign(x), with 0 at 0.
            let zero = e.f32(0.0);
            let one = e.f32(1.0);
            let minus_one = e.f32(-1.0);
            let pos = e.cmp(CmpOp::Gt, x, zero);
            let neg = e.cmp(CmpOp::Lt, x, zero);
            let s = e.select(neg, minus_one, zero);
            Scale(e.select(pos, one, s))
        }
        UnaryOp::Sqrt => {
            // 1 / (2 sqrt(x)), and 0 at 0.
            let zero = e.f32(0.0);
            let half = e.f32(0.5);
            let positive = e.cmp(CmpOp::Gt, y, zero);
            let d = e.div(half, y);
            Scale(e.select(positive, d, zero))
        }
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round | UnaryOp::Not => Zero,
    }
}

fn binary(e: &mut Emitter, op: BinaryOp, a: Value, b: Value, y: Value) -> Vec<Partial> {
    use Partial::*;
    match op {
        BinaryOp::Add => vec![One, One],
        BinaryOp::Sub => vec![One, MinusOne],
        BinaryOp::Mul => vec![Scale(b), Scale(a)],
        BinaryOp::Div => {
            // y = a / b: dy/da = 1 / b, dy/db = -y / b.
            let one = e.f32(1.0);
            let inv = e.div(one, b);
            let q = e.div(y, b);
            vec![Scale(inv), Scale(e.neg(q))]
        }
        BinaryOp::Rem => {
            // fmod(a, b) = a - b trunc(a / b).
            let q = e.div(a, b);
            let t = e.unary(UnaryOp::Trunc, q);
            vec![One, Scale(e.neg(t))]
        }
        BinaryOp::Min => {
            let cond = e.cmp(CmpOp::Lt, a, b);
            vec![Where { cond, when: true }, Where { cond, when: false }]
        }
        BinaryOp::Max => {
            let cond = e.cmp(CmpOp::Gt, a, b);
            vec![Where { cond, when: true }, Where { cond, when: false }]
        }
        BinaryOp::CopySign => {
            // |a| with b's sign: ±1 by the product of the signs.
            let one = e.f32(1.0);
            let sa = e.binary(BinaryOp::CopySign, one, a);
            let sb = e.binary(BinaryOp::CopySign, one, b);
            vec![Scale(e.mul(sa, sb)), Zero]
        }
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr => vec![Zero, Zero],
    }
}

fn math(e: &mut Emitter, op: MathOp, args: &[Value], y: Value) -> Vec<Partial> {
    use Partial::*;
    let x = args[0];
    let one = e.f32(1.0);
    let d = match op {
        MathOp::Sin => e.math(MathOp::Cos, vec![x]),
        MathOp::Cos => {
            let s = e.math(MathOp::Sin, vec![x]);
            e.neg(s)
        }
        MathOp::Tan => {
            // 1 + tan²
            let y2 = e.mul(y, y);
            e.add(one, y2)
        }
        MathOp::Asin | MathOp::Acos => {
            // ±1 / sqrt(1 - x²) inside (-1, 1), 0 elsewhere.
            let zero = e.f32(0.0);
            let x2 = e.mul(x, x);
            let r = e.sub(one, x2);
            let inside = e.cmp(CmpOp::Gt, r, zero);
            let s = e.unary(UnaryOp::Sqrt, r);
            let d = e.div(one, s);
            let d = if op == MathOp::Acos { e.neg(d) } else { d };
            e.select(inside, d, zero)
        }
        MathOp::Atan => {
            let x2 = e.mul(x, x);
            let r = e.add(one, x2);
            e.div(one, r)
        }
        MathOp::Atan2 => {
            // atan2(y, x): (x, -y) / (x² + y²), zero at the origin.
            let (yy, xx) = (args[0], args[1]);
            let zero = e.f32(0.0);
            let x2 = e.mul(xx, xx);
            let y2 = e.mul(yy, yy);
            let r2 = e.add(x2, y2);
            let nonzero = e.cmp(CmpOp::Gt, r2, zero);
            let dy = e.div(xx, r2);
            let ny = e.neg(yy);
            let dx = e.div(ny, r2);
            let dy = e.select(nonzero, dy, zero);
            let dx = e.select(nonzero, dx, zero);
            return vec![Scale(dy), Scale(dx)];
        }
        MathOp::Sinh => e.math(MathOp::Cosh, vec![x]),
        MathOp::Cosh => e.math(MathOp::Sinh, vec![x]),
        MathOp::Tanh => {
            let y2 = e.mul(y, y);
            e.sub(one, y2)
        }
        MathOp::Exp => y,
        MathOp::Exp2 => {
            let ln2 = e.f32(LN_2);
            e.mul(y, ln2)
        }
        MathOp::Log => e.div(one, x),
        MathOp::Log2 => {
            let ln2 = e.f32(LN_2);
            let r = e.mul(x, ln2);
            e.div(one, r)
        }
        MathOp::Pow => {
            // pow(x, p): ∂x = p pow(x, p - 1) (0 when p = 0), ∂p = y log(x) (0 when x <= 0).
            let p = args[1];
            let zero = e.f32(0.0);
            let pm1 = e.sub(p, one);
            let pw = e.math(MathOp::Pow, vec![x, pm1]);
            let dx = e.mul(p, pw);
            let p_zero = e.cmp(CmpOp::Eq, p, zero);
            let dx = e.select(p_zero, zero, dx);
            let lg = e.math(MathOp::Log, vec![x]);
            let dp = e.mul(y, lg);
            let x_pos = e.cmp(CmpOp::Gt, x, zero);
            let dp = e.select(x_pos, dp, zero);
            return vec![Scale(dx), Scale(dp)];
        }
    };
    vec![Scale(d)]
}
