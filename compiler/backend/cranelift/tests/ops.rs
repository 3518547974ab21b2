//! Every operation on every type it accepts, on edge values (NaN payloads, ±0, ±inf,
//! subnormals, i32::MIN, shifts ≥ 32, division by zero, saturating conversions), with varying
//! operands, uniform (constant) operands, and a mix, in 1, 4 and 8 lanes against the interpreter.

mod common;

include!("cases/ops.rs");
