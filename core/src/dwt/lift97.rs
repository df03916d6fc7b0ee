//! CDF 9/7 irreversible lifting in `f32` with JPEG 2000 Part 1 normalization:
//!
//! 1. `x[2k+1] += α (x[2k] + x[2k+2])`
//! 2. `x[2k]   += β (x[2k-1] + x[2k+1])`
//! 3. `x[2k+1] += γ (x[2k] + x[2k+2])`
//! 4. `x[2k]   += δ (x[2k-1] + x[2k+1])`
//! 5. low `× 1/K`, high `× K`
//!
//! Each step is one `f32` add of the neighbours, one multiply, one add, in
//! that order and without fused multiply-add (the shaders mark these
//! operations `precise`), so CPU and GPU agree to the last bit on IEEE
//! hardware and within 1e-5 relative anywhere. The low band has DC gain 1, the
//! high band Nyquist gain 2 (magnitude), matching the Part 1 analysis filters.

use super::lines::{check, scale, step};
use super::{DwtError, Lifting, Wavelet};

/// First predict coefficient α.
pub const ALPHA: f64 = -1.586_134_342_059_924;
/// First update coefficient β.
pub const BETA: f64 = -0.052_980_118_572_961;
/// Second predict coefficient γ.
pub const GAMMA: f64 = 0.882_911_075_530_934;
/// Second update coefficient δ.
pub const DELTA: f64 = 0.443_506_852_043_971;
/// JPEG 2000 normalization constant K.
pub const K: f64 = 1.230_174_104_914_001;

const A: f32 = ALPHA as f32;
const B: f32 = BETA as f32;
const G: f32 = GAMMA as f32;
const D: f32 = DELTA as f32;
const KF: f32 = K as f32;
const INV_K: f32 = (1.0 / K) as f32;

/// The irreversible CDF 9/7 wavelet on `f32` samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cdf97;

impl Lifting for Cdf97 {
    type Sample = f32;
    const WAVELET: Wavelet = Wavelet::Cdf97;

    fn forward_lines(data: &mut [f32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            step(data, n, cols, 1, |x, a, b| x + A * (a + b));
            step(data, n, cols, 0, |x, a, b| x + B * (a + b));
            step(data, n, cols, 1, |x, a, b| x + G * (a + b));
            step(data, n, cols, 0, |x, a, b| x + D * (a + b));
            scale(data, n, cols, 0, INV_K);
            scale(data, n, cols, 1, KF);
        }
        Ok(())
    }

    fn inverse_lines(data: &mut [f32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            scale(data, n, cols, 0, KF);
            scale(data, n, cols, 1, INV_K);
            step(data, n, cols, 0, |x, a, b| x - D * (a + b));
            step(data, n, cols, 1, |x, a, b| x - G * (a + b));
            step(data, n, cols, 0, |x, a, b| x - B * (a + b));
            step(data, n, cols, 1, |x, a, b| x - A * (a + b));
        }
        Ok(())
    }
}
