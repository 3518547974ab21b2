//! The reference the math library is measured against: Rust's f64 functions (the platform
//! libm, accurate to well under one f64 ulp) rounded to f32, which is the correctly rounded
//! f32 result except in rare double-rounding cases; and the distance in f32 ulps.

use drs_ir::MathOp;

/// `op(args)` in f64, rounded to f32.
pub fn reference(op: MathOp, args: &[f32]) -> f32 {
    let x = args[0] as f64;
    let y = args.get(1).map_or(0.0, |&y| y as f64);
    (match op {
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
    }) as f32
}

/// The distance between two f32 in units in the last place: the number of representable
/// values between them, counting `-0` and `+0` as one apart. Two NaNs are 0 apart; a NaN and
/// a number are `u64::MAX` apart.
pub fn ulp_distance(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
    }
    fn key(x: f32) -> i64 {
        let b = x.to_bits();
        let mag = (b & 0x7fff_ffff) as i64;
        if b >> 31 == 1 {
            -mag - 1
        } else {
            mag
        }
    }
    (key(a) - key(b)).unsigned_abs()
}
