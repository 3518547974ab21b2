//! The operations of f32 mode on one lane's bits: exactly the semantics of [`drs_ir::Op`]
//! (IEEE f32 without fast-math, wrapping integers, Rust's `f32` functions for `Math`). The
//! optimiser's constant folding calls these too, so a folded value is what the interpreter
//! computes.

use crate::Bits;
use drs_ir::{BinaryOp, CmpOp, MathOp, Ty, UnaryOp};
use std::cmp::Ordering;

fn fl(bits: Bits) -> f32 {
    f32::from_bits(bits)
}

pub fn unary(op: UnaryOp, ty: Ty, a: Bits) -> Bits {
    match (op, ty) {
        (UnaryOp::Neg, Ty::F32) => a ^ 0x8000_0000,
        (UnaryOp::Neg, _) => (a as i32).wrapping_neg() as Bits,
        (UnaryOp::Not, Ty::Bool) => (a == 0) as Bits,
        (UnaryOp::Not, _) => !a,
        (UnaryOp::Abs, _) => a & 0x7fff_ffff,
        (UnaryOp::Sqrt, _) => fl(a).sqrt().to_bits(),
        (UnaryOp::Floor, _) => fl(a).floor().to_bits(),
        (UnaryOp::Ceil, _) => fl(a).ceil().to_bits(),
        (UnaryOp::Trunc, _) => fl(a).trunc().to_bits(),
        (UnaryOp::Round, _) => fl(a).round().to_bits(),
    }
}

pub fn binary(op: BinaryOp, ty: Ty, a: Bits, b: Bits) -> Bits {
    use BinaryOp::*;
    match ty {
        Ty::F32 => {
            let (x, y) = (fl(a), fl(b));
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                Rem => x % y,
                Min => {
                    if x < y {
                        x
                    } else {
                        y
                    }
                }
                Max => {
                    if x > y {
                        x
                    } else {
                        y
                    }
                }
                CopySign => x.copysign(y),
                And | Or | Xor | Shl | Shr => unreachable!("the verifier rejects {op:?} on f32"),
            };
            r.to_bits()
        }
        Ty::I32 => {
            let (x, y) = (a as i32, b as i32);
            let r = match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                Div if y == 0 => 0,
                Div => x.wrapping_div(y),
                Rem if y == 0 => x,
                Rem => x.wrapping_rem(y),
                Min => x.min(y),
                Max => x.max(y),
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
                Shl => x.wrapping_shl(b),
                Shr => x.wrapping_shr(b),
                CopySign => unreachable!("the verifier rejects copysign on integers"),
            };
            r as Bits
        }
        Ty::U32 => match op {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div if b == 0 => 0,
            Div => a / b,
            Rem if b == 0 => a,
            Rem => a % b,
            Min => a.min(b),
            Max => a.max(b),
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            Shl => a.wrapping_shl(b),
            Shr => a.wrapping_shr(b),
            CopySign => unreachable!("the verifier rejects copysign on integers"),
        },
        Ty::Bool => match op {
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            _ => unreachable!("the verifier rejects {op:?} on bool"),
        },
    }
}

pub fn compare(op: CmpOp, ty: Ty, a: Bits, b: Bits) -> bool {
    let ord: Option<Ordering> = match ty {
        Ty::F32 => fl(a).partial_cmp(&fl(b)),
        Ty::I32 => Some((a as i32).cmp(&(b as i32))),
        Ty::U32 | Ty::Bool => Some(a.cmp(&b)),
    };
    holds(op, ord)
}

/// Whether `op` holds for operands ordered as `ord` (`None`: unordered, a NaN operand).
pub(crate) fn holds(op: CmpOp, ord: Option<Ordering>) -> bool {
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

/// The reference value of a transcendental function (Rust's `f32` methods).
pub fn math(op: MathOp, x: &[f32]) -> f32 {
    match op {
        MathOp::Sin => x[0].sin(),
        MathOp::Cos => x[0].cos(),
        MathOp::Tan => x[0].tan(),
        MathOp::Asin => x[0].asin(),
        MathOp::Acos => x[0].acos(),
        MathOp::Atan => x[0].atan(),
        MathOp::Atan2 => x[0].atan2(x[1]),
        MathOp::Sinh => x[0].sinh(),
        MathOp::Cosh => x[0].cosh(),
        MathOp::Tanh => x[0].tanh(),
        MathOp::Exp => x[0].exp(),
        MathOp::Exp2 => x[0].exp2(),
        MathOp::Log => x[0].ln(),
        MathOp::Log2 => x[0].log2(),
        MathOp::Pow => x[0].powf(x[1]),
    }
}
