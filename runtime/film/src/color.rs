//! The sRGB transfer function (IEC 61966-2-1) between encoded values and linear values.

/// Decodes an sRGB-encoded value in `[0, 1]` to linear.
pub fn srgb_to_linear(encoded: f32) -> f32 {
    if encoded <= 0.04045 {
        encoded / 12.92
    } else {
        ((encoded + 0.055) / 1.055).powf(2.4)
    }
}

/// Encodes a linear value with the sRGB curve (no clamping).
pub fn linear_to_srgb(linear: f32) -> f32 {
    if linear <= 0.0031308 {
        linear * 12.92
    } else {
        1.055 * linear.powf(1.0 / 2.4) - 0.055
    }
}

/// A linear value as an 8-bit sRGB code: encoded, clamped to `[0, 1]` (NaN becomes 0) and rounded.
pub fn linear_to_srgb8(linear: f32) -> u8 {
    let encoded = linear_to_srgb(linear);
    if encoded.is_nan() {
        return 0;
    }
    (encoded.clamp(0.0, 1.0) * 255.0).round() as u8
}
