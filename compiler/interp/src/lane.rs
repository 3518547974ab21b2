//! What the evaluator needs from a lane value: one implementation per evaluation mode, so
//! that a single evaluator (`crate::Interpreter`) runs both.
//!
//! Operations are given the IR type of their operands, as the verifier guarantees it; only
//! f32-typed values differ between modes. Integer and bool semantics are shared.

use crate::{ops, Bits};
use drs_ir::{convert, BinaryOp, CmpOp, MathOp, Ty, UnaryOp};

pub(crate) trait Lane: Copy {
    /// A value of type `ty` from its 32 bits (constants, buffer elements, host results).
    fn from_bits(ty: Ty, bits: Bits) -> Self;
    /// The 32 bits of a value of type `ty` (buffer elements, host arguments).
    fn to_bits(self, ty: Ty) -> Bits;
    fn from_bool(b: bool) -> Self;
    /// A bool's value.
    fn is_true(self) -> bool;
    /// A u32 index's value.
    fn index(self) -> usize;
    fn unary(op: UnaryOp, ty: Ty, a: Self) -> Self;
    fn binary(op: BinaryOp, ty: Ty, a: Self, b: Self) -> Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn compare(op: CmpOp, ty: Ty, a: Self, b: Self) -> bool;
    fn convert(from: Ty, to: Ty, a: Self) -> Self;
    fn bitcast(from: Ty, to: Ty, a: Self) -> Self;
    fn math(op: MathOp, args: &[Self]) -> Self;
}

/// f32 mode: every value is its 32 bits.
impl Lane for Bits {
    fn from_bits(_: Ty, bits: Bits) -> Self {
        bits
    }

    fn to_bits(self, _: Ty) -> Bits {
        self
    }

    fn from_bool(b: bool) -> Self {
        b as Bits
    }

    fn is_true(self) -> bool {
        self != 0
    }

    fn index(self) -> usize {
        self as usize
    }

    fn unary(op: UnaryOp, ty: Ty, a: Self) -> Self {
        ops::unary(op, ty, a)
    }

    fn binary(op: BinaryOp, ty: Ty, a: Self, b: Self) -> Self {
        ops::binary(op, ty, a, b)
    }

    fn fma(a: Self, b: Self, c: Self) -> Self {
        f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)).to_bits()
    }

    fn compare(op: CmpOp, ty: Ty, a: Self, b: Self) -> bool {
        ops::compare(op, ty, a, b)
    }

    fn convert(from: Ty, to: Ty, a: Self) -> Self {
        convert(from, to, a)
    }

    fn bitcast(_: Ty, _: Ty, a: Self) -> Self {
        a
    }

    fn math(op: MathOp, args: &[Self]) -> Self {
        let x: Vec<f32> = args.iter().map(|&a| f32::from_bits(a)).collect();
        ops::math(op, &x).to_bits()
    }
}
