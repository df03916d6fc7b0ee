//! Fixed-point CDF 9/7: the four JPEG 2000 9/7 lifting steps with Q16
//! coefficients, each step rounded to an integer:
//!
//! `x[c] += (q * (x[c-1] + x[c+1]) + 2^15) >> 16`   (q = round(coef · 2^16))
//!
//! with the product in 64 bits (`imulExtended` in the shaders, `SMULL` on a
//! Cortex-M). Integer arithmetic only, so CPU, GPU and MCU give the same bits,
//! and every step is undone exactly by subtracting the same rounded term, so
//! [`Fixed97`] is exactly reversible.
//!
//! # Precision
//!
//! The K normalization of [`super::Cdf97`] is not applied (an integer scaling
//! by K cannot be reversible): per level and axis the low band is `K` times,
//! the high band `1/K` times the normalized 9/7 band. Against that scaled
//! floating-point 9/7 each lifting step adds at most 0.5 of rounding plus a
//! coefficient error below `2^-17 |x[c-1] + x[c+1]|`. Propagated through the
//! remaining steps the roundings bound the deviation by 8.0 per coefficient
//! after one 2-D level (typically 1 to 3 are seen); `docs/dwt.md` gives the
//! analysis and `tests/tests/dwt_reference.rs` checks a propagated bound on
//! every coefficient. For more precision, shift the samples left by `F` bits
//! before the transform: the rounding error stays the same in absolute terms
//! while the signal grows by `2^F`.
//!
//! Nothing wraps while samples stay within `±2^28` (16-bit images with up to
//! 12 fractional bits at any number of levels have wide margins).

use super::lines::{check, step};
use super::{DwtError, Lifting, Wavelet};

/// Fractional bits of the lifting coefficients.
pub const FRAC_BITS: u32 = 16;
/// α in Q16.
pub const Q_ALPHA: i32 = -103_949;
/// β in Q16.
pub const Q_BETA: i32 = -3_472;
/// γ in Q16.
pub const Q_GAMMA: i32 = 57_862;
/// δ in Q16.
pub const Q_DELTA: i32 = 29_066;

const HALF: i64 = 1 << (FRAC_BITS - 1);

/// The rounded lifting term `(q * (a + b) + 2^15) >> 16`, `a + b` wrapping in
/// 32 bits and the result truncated to 32 bits, exactly as the shaders do.
#[inline]
pub fn term(q: i32, a: i32, b: i32) -> i32 {
    let s = a.wrapping_add(b) as i64;
    ((q as i64 * s + HALF) >> FRAC_BITS) as i32
}

/// The fixed-point CDF 9/7 wavelet on `i32` samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fixed97;

impl Lifting for Fixed97 {
    type Sample = i32;
    const WAVELET: Wavelet = Wavelet::Fixed97;

    fn forward_lines(data: &mut [i32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            step(data, n, cols, 1, |x, a, b| {
                x.wrapping_add(term(Q_ALPHA, a, b))
            });
            step(data, n, cols, 0, |x, a, b| {
                x.wrapping_add(term(Q_BETA, a, b))
            });
            step(data, n, cols, 1, |x, a, b| {
                x.wrapping_add(term(Q_GAMMA, a, b))
            });
            step(data, n, cols, 0, |x, a, b| {
                x.wrapping_add(term(Q_DELTA, a, b))
            });
        }
        Ok(())
    }

    fn inverse_lines(data: &mut [i32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            step(data, n, cols, 0, |x, a, b| {
                x.wrapping_sub(term(Q_DELTA, a, b))
            });
            step(data, n, cols, 1, |x, a, b| {
                x.wrapping_sub(term(Q_GAMMA, a, b))
            });
            step(data, n, cols, 0, |x, a, b| {
                x.wrapping_sub(term(Q_BETA, a, b))
            });
            step(data, n, cols, 1, |x, a, b| {
                x.wrapping_sub(term(Q_ALPHA, a, b))
            });
        }
        Ok(())
    }
}
