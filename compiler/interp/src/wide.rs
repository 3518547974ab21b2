//! f64 mode: every f32 value and operation carried out in f64 (the reference for finite
//! differences, where f32 rounding would swamp the difference quotient). The rules are on
//! [`Wide`].

use crate::lane::Lane;
use crate::{ops, Bits};
use drs_ir::{BinaryOp, CmpOp, MathOp, Ty, UnaryOp};

/// One lane's value in f64 mode ([`crate::Interpreter::call_f64`]).
///
/// - f32 constants, buffer elements and host results are widened exactly;
/// - arithmetic, `Fma`, comparisons, min/max and `Math` ops (Rust's `f64` functions, the
///   platform libm) work on f64;
/// - `Convert` from f32 truncates the f64 toward zero and saturates (NaN gives 0), into f32 is
///   exact; `Bitcast` from f32 rounds to f32 first and takes its bits, into f32 widens the f32
///   the bits encode;
/// - what leaves the function's arithmetic rounds to f32: stores and atomic adds to buffers
///   (whose elements stay f32), and host function arguments; local arrays hold f64;
/// - i32, u32 and bool values and operations are exactly those of f32 mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wide {
    /// A value of IR type f32, carried as f64.
    Float(f64),
    /// A value of type i32, u32 or bool: its 32 bits as in f32 mode (two's complement
    /// integers, bools 0 or 1).
    Bits(Bits),
}

impl Wide {
    /// The value of type `ty` whose f32-mode bits are `bits` (an f32 is widened exactly).
    pub fn from_bits(ty: Ty, bits: Bits) -> Wide {
        match ty {
            Ty::F32 => Wide::Float(f32::from_bits(bits) as f64),
            _ => Wide::Bits(bits),
        }
    }

    /// The f32-mode bits of the value (a float is rounded to the nearest f32).
    pub fn to_bits(self) -> Bits {
        match self {
            Wide::Float(x) => (x as f32).to_bits(),
            Wide::Bits(b) => b,
        }
    }

    /// The float, if this is one.
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Wide::Float(x) => Some(x),
            Wide::Bits(_) => None,
        }
    }

    /// Whether the value is of the kind that carries type `ty`.
    pub fn fits(self, ty: Ty) -> bool {
        matches!(self, Wide::Float(_)) == (ty == Ty::F32)
    }

    /// The value as f64. Verified IR only asks this of f32-typed values, which are always
    /// `Float`; bits are read as an f32 otherwise.
    fn float(self) -> f64 {
        match self {
            Wide::Float(x) => x,
            Wide::Bits(b) => f32::from_bits(b) as f64,
        }
    }
}

impl Lane for Wide {
    fn from_bits(ty: Ty, bits: Bits) -> Self {
        Wide::from_bits(ty, bits)
    }

    fn to_bits(self, _: Ty) -> Bits {
        Wide::to_bits(self)
    }

    fn from_bool(b: bool) -> Self {
        Wide::Bits(b as Bits)
    }

    fn is_true(self) -> bool {
        self.to_bits() != 0
    }

    fn index(self) -> usize {
        self.to_bits() as usize
    }

    fn unary(op: UnaryOp, ty: Ty, a: Self) -> Self {
        if ty != Ty::F32 {
            return Wide::Bits(ops::unary(op, ty, a.to_bits()));
        }
        let x = a.float();
        Wide::Float(match op {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Trunc => x.trunc(),
            UnaryOp::Round => x.round(),
            // Not on f32 is rejected by the verifier; keep f32 mode's answer.
            UnaryOp::Not => return Wide::from_bits(ty, ops::unary(op, ty, a.to_bits())),
        })
    }

    fn binary(op: BinaryOp, ty: Ty, a: Self, b: Self) -> Self {
        if ty != Ty::F32 {
            return Wide::Bits(ops::binary(op, ty, a.to_bits(), b.to_bits()));
        }
        let (x, y) = (a.float(), b.float());
        Wide::Float(match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div => x / y,
            BinaryOp::Rem => x % y,
            BinaryOp::Min => {
                if x < y {
                    x
                } else {
                    y
                }
            }
            BinaryOp::Max => {
                if x > y {
                    x
                } else {
                    y
                }
            }
            BinaryOp::CopySign => x.copysign(y),
            // Bitwise ops on f32 are rejected by the verifier; keep f32 mode's answer.
            _ => return Wide::from_bits(ty, ops::binary(op, ty, a.to_bits(), b.to_bits())),
        })
    }

    fn fma(a: Self, b: Self, c: Self) -> Self {
        Wide::Float(a.float().mul_add(b.float(), c.float()))
    }

    fn compare(op: CmpOp, ty: Ty, a: Self, b: Self) -> bool {
        if ty != Ty::F32 {
            return ops::compare(op, ty, a.to_bits(), b.to_bits());
        }
        ops::holds(op, a.float().partial_cmp(&b.float()))
    }

    fn convert(from: Ty, to: Ty, a: Self) -> Self {
        match (from, to) {
            (Ty::F32, Ty::F32) => a,
            // `as` truncates toward zero and saturates, NaN giving 0.
            (Ty::F32, Ty::I32) => Wide::Bits(a.float() as i32 as Bits),
            (Ty::F32, Ty::U32) => Wide::Bits(a.float() as u32),
            (Ty::I32, Ty::F32) => Wide::Float(a.to_bits() as i32 as f64),
            (Ty::U32, Ty::F32) => Wide::Float(a.to_bits() as f64),
            _ => Wide::Bits(drs_ir::convert(from, to, a.to_bits())),
        }
    }

    fn bitcast(from: Ty, to: Ty, a: Self) -> Self {
        if from == to {
            return a;
        }
        // The f32 bits of a float (rounded first), or the f32 that bits encode.
        Wide::from_bits(to, a.to_bits())
    }

    fn math(op: MathOp, args: &[Self]) -> Self {
        let x = args.first().map_or(f64::NAN, |a| a.float());
        let y = args.get(1).map_or(f64::NAN, |a| a.float());
        Wide::Float(match op {
            MathOp::Sin => x.sin(),
            MathOp::Cos => x.cos(),
            MathOp::Tan => x.tan(),
            MathOp::Asin => x.asin(),
            MathOp::Acos => x.acos(),
            MathOp::Atan => x.atan(),
            MathOp::Atan2 => x.atan2(y),
            MathOp::Sinh => x.sinh(),
            MathOp::Cosh => x.cosh(),
            MathOp::Tanh => x.tanh(),
            MathOp::Exp => x.exp(),
            MathOp::Exp2 => x.exp2(),
            MathOp::Log => x.ln(),
            MathOp::Log2 => x.log2(),
            MathOp::Pow => x.powf(y),
        })
    }
}
