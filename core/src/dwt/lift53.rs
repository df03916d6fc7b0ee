//! CDF 5/3 reversible integer lifting, exactly as JPEG 2000 Part 1 (Annex F):
//!
//! - predict: `x[2k+1] -= (x[2k] + x[2k+2]) >> 1`
//! - update:  `x[2k]   += (x[2k-1] + x[2k+1] + 2) >> 2`
//!
//! `>>` is an arithmetic shift, i.e. floor division. Sums wrap like GPU
//! integers; nothing wraps while samples stay within `±2^29` (a 16-bit image
//! stays below `2^20` after any number of 2-D levels).

use super::lines::{check, step};
use super::{DwtError, Lifting, Wavelet};

/// The reversible CDF 5/3 wavelet on `i32` samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cdf53;

#[inline]
fn predict(x: i32, a: i32, b: i32) -> i32 {
    x.wrapping_sub(a.wrapping_add(b) >> 1)
}

#[inline]
fn update(x: i32, a: i32, b: i32) -> i32 {
    x.wrapping_add(a.wrapping_add(b).wrapping_add(2) >> 2)
}

impl Lifting for Cdf53 {
    type Sample = i32;
    const WAVELET: Wavelet = Wavelet::Cdf53;

    fn forward_lines(data: &mut [i32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            step(data, n, cols, 1, predict);
            step(data, n, cols, 0, update);
        }
        Ok(())
    }

    fn inverse_lines(data: &mut [i32], n: usize, cols: usize) -> Result<(), DwtError> {
        check(data.len(), n, cols)?;
        if n >= 2 {
            step(data, n, cols, 0, |x, a, b| {
                x.wrapping_sub(a.wrapping_add(b).wrapping_add(2) >> 2)
            });
            step(data, n, cols, 1, |x, a, b| {
                x.wrapping_add(a.wrapping_add(b) >> 1)
            });
        }
        Ok(())
    }
}
