//! Dead-zone scalar quantization (JPEG 2000 Part 1 style) with steps given
//! in Q16 ([`super::header::QuantStep::q16`]), and the decoder's
//! reconstruction.
//!
//! `q = sign(c) · floor(|c| / Δ)`. Integer coefficients are quantized in
//! integer arithmetic (`(|c| << 16) / q16`), so every machine gets the same
//! indices; f32 coefficients go through f64. Indices are clamped to the
//! BPC-PaCo range `|q| < 2^28` (the encoder picks steps that never reach it;
//! the clamp only guards pathological input).
//!
//! Reconstruction of a decoded index `v` of a block whose lowest
//! `shift` bitplanes were dropped: `(|v| + δ) · 2^shift · Δ`. The bitplane
//! coder already places coefficients it decoded only down to bitplane
//! `j > 0` at the middle of their interval; `δ = 1/2` does the same for
//! those decoded through bitplane 0 (the middle of a dead-zone bin) and is 0
//! when the index is the coefficient itself (step 1, no shift).

/// Largest index magnitude BPC-PaCo codes.
pub const MAX_INDEX: u32 = (1 << wavelane_core::bpc::COEFFICIENT_BITS) - 1;

/// The Q16 value of step 1.0.
pub const UNIT_STEP: u64 = 1 << 16;

/// Quantizes an integer coefficient.
#[inline]
pub fn quantize_i32(c: i32, q16: u64) -> i32 {
    let mag = ((c.unsigned_abs() as u64) << 16) / q16.max(1);
    let mag = mag.min(MAX_INDEX as u64) as i32;
    if c < 0 {
        -mag
    } else {
        mag
    }
}

/// Quantizes an f32 coefficient (NaN gives 0).
#[inline]
pub fn quantize_f32(c: f32, q16: u64) -> i32 {
    let scaled = (c.abs() as f64) * 65536.0 / q16.max(1) as f64;
    let mag = if scaled.is_nan() {
        0
    } else {
        scaled.min(MAX_INDEX as f64) as i32
    };
    if c < 0.0 {
        -mag
    } else {
        mag
    }
}

/// Whether the half-bin offset applies to a block decoded through
/// bitplane 0 (see the module docs).
#[inline]
pub fn half_bin(q16: u64, shift: u8) -> bool {
    shift > 0 || q16 != UNIT_STEP
}

/// Reconstructs an integer coefficient from a decoded index (saturating).
#[inline]
pub fn dequantize_i32(v: i32, shift: u8, q16: u64, half: bool) -> i32 {
    if v == 0 {
        return 0;
    }
    let two_v = 2 * v.unsigned_abs() as u128 + half as u128;
    let mag = ((two_v << shift.min(31)) * q16 as u128 + (1 << 16)) >> 17;
    let mag = mag.min(i32::MAX as u128) as i32;
    if v < 0 {
        -mag
    } else {
        mag
    }
}

/// Reconstructs an f32 coefficient from a decoded index.
#[inline]
pub fn dequantize_f32(v: i32, shift: u8, q16: u64, half: bool) -> f32 {
    if v == 0 {
        return 0.0;
    }
    let mag = (v.unsigned_abs() as f64 + if half { 0.5 } else { 0.0 })
        * (1u64 << shift.min(31)) as f64
        * (q16 as f64 / 65536.0);
    if v < 0 {
        -mag as f32
    } else {
        mag as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_step_is_identity() {
        for c in [-1_000_000, -3, -1, 0, 1, 2, 77, (1 << 27) + 5] {
            let q = quantize_i32(c, UNIT_STEP);
            assert_eq!(q, c);
            assert_eq!(dequantize_i32(q, 0, UNIT_STEP, half_bin(UNIT_STEP, 0)), c);
        }
    }

    #[test]
    fn reconstruction_lies_in_the_bin() {
        let q16 = (2.75 * 65536.0) as u64;
        for c in -500..500 {
            let q = quantize_i32(c, q16);
            let r = dequantize_i32(q, 0, q16, true);
            if q == 0 {
                assert!((c as f64).abs() < 2.75);
            } else {
                assert!(((c - r) as f64).abs() <= 1.375 + 0.5, "c {c} q {q} r {r}");
            }
            let qf = quantize_f32(c as f32, q16);
            assert_eq!(qf, q);
            let rf = dequantize_f32(q, 0, q16, true);
            assert!((rf - r as f32).abs() <= 0.5);
        }
        // A shift multiplies the bin.
        assert_eq!(dequantize_i32(3, 2, UNIT_STEP, true), 14);
        assert_eq!(
            dequantize_i32(i32::MIN, 27, u32::MAX as u64, true),
            i32::MIN + 1
        );
    }
}
