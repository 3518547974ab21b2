//! IR constants as `.drs` expressions that evaluate to exactly the same bits.
//!
//! Finite floats are written with the fewest decimal digits that parse back to the same f32
//! (the lowering parses literals with Rust's correctly rounded `str::parse::<f32>`); a
//! negative one is a unary minus on its magnitude, which the lowering folds into the
//! literal, so `-0.0` stays negative zero. The language has no literal for infinities and
//! NaNs, so those are `from_bits(0x7F800000u)`, which keeps a NaN's sign and payload too.

use drs_ir::Const;

/// The literal of `c`. With `suffix_i32`, an i32 is written with its `i` suffix (needed
/// where the context would not make an unsuffixed integer an `i32`, e.g. `f32(-5i)`).
pub(crate) fn literal(c: Const, suffix_i32: bool) -> String {
    match c {
        Const::Bool(b) => b.to_string(),
        Const::U32(x) => format!("{x}u"),
        // `-2147483648` is allowed: the operand of a unary minus may be 2^31 (types.md).
        Const::I32(x) if suffix_i32 => format!("{x}i"),
        Const::I32(x) => x.to_string(),
        Const::F32(bits) => float(f32::from_bits(bits)),
    }
}

/// Whether the literal of `c` starts with a unary minus (it is then parenthesised as an
/// operand of an operator, for the reader's sake).
pub(crate) fn is_negative(c: Const) -> bool {
    match c {
        Const::I32(x) => x < 0,
        Const::F32(bits) => {
            let x = f32::from_bits(bits);
            x.is_finite() && x.is_sign_negative()
        }
        Const::U32(_) | Const::Bool(_) => false,
    }
}

fn float(x: f32) -> String {
    if !x.is_finite() {
        return format!("from_bits({:#010X}u)", x.to_bits());
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let magnitude = x.abs();
    // Both are the shortest digits that round-trip; plain notation reads better unless it
    // needs many zeros (`1e-30`, `3.4028235e38`).
    let plain = format!("{magnitude}");
    let scientific = format!("{magnitude:e}");
    let text = if plain.len() <= scientific.len() + 3 {
        if plain.contains('.') {
            plain
        } else {
            plain + ".0"
        }
    } else {
        scientific
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> String {
        literal(Const::f32(x), false)
    }

    #[test]
    fn floats_are_short_and_valid_literals() {
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(1e-30), "1e-30");
        assert_eq!(f(f32::MAX), "3.4028235e38");
        assert_eq!(f(f32::from_bits(1)), "1e-45");
        assert_eq!(f(16777216.0), "16777216.0");
        assert_eq!(f(1e10), "1e10");
        assert_eq!(f(1234567.0), "1234567.0");
        assert_eq!(f(1e12), "1e12");
        assert_eq!(f(f32::INFINITY), "from_bits(0x7F800000u)");
        assert_eq!(f(f32::NEG_INFINITY), "from_bits(0xFF800000u)");
        assert_eq!(f(f32::from_bits(0x7FC0_0001)), "from_bits(0x7FC00001u)");
    }

    #[test]
    fn finite_floats_parse_back_to_the_same_bits() {
        // Every exponent, with several mantissas, both signs.
        for exponent in 0..255u32 {
            for mantissa in [0u32, 1, 0x2A_AAAA, 0x40_0000, 0x7F_FFFF, 0x12_3457] {
                for sign in [0u32, 1] {
                    let bits = sign << 31 | exponent << 23 | mantissa;
                    let text = f(f32::from_bits(bits));
                    let (negative, digits) = match text.strip_prefix('-') {
                        Some(rest) => (true, rest),
                        None => (false, text.as_str()),
                    };
                    let parsed: f32 = digits.parse().unwrap();
                    let value = if negative { -parsed } else { parsed };
                    assert_eq!(value.to_bits(), bits, "{text}");
                }
            }
        }
    }

    #[test]
    fn integers_and_bools() {
        assert_eq!(literal(Const::I32(-5), false), "-5");
        assert_eq!(literal(Const::I32(-5), true), "-5i");
        assert_eq!(literal(Const::I32(i32::MIN), false), "-2147483648");
        assert_eq!(literal(Const::U32(u32::MAX), false), "4294967295u");
        assert_eq!(literal(Const::Bool(true), false), "true");
        assert!(is_negative(Const::f32(-0.0)));
        assert!(!is_negative(Const::f32(f32::NEG_INFINITY)));
        assert!(!is_negative(Const::I32(0)));
    }
}
