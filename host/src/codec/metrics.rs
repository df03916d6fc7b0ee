//! Image quality metrics.

use super::image::Image;

/// Mean squared error over every sample of every component; `None` when
/// the images differ in size or component count.
pub fn mse(a: &Image, b: &Image) -> Option<f64> {
    if a.width != b.width || a.height != b.height || a.planes.len() != b.planes.len() {
        return None;
    }
    let mut sum = 0u128;
    for (p, q) in a.planes.iter().zip(&b.planes) {
        for (&x, &y) in p.iter().zip(q) {
            let d = (x as i64 - y as i64).unsigned_abs() as u128;
            sum += d * d;
        }
    }
    Some(sum as f64 / a.samples().max(1) as f64)
}

/// Peak signal-to-noise ratio in dB with peak `2^bit_depth - 1` of `a`
/// (infinite for identical images).
pub fn psnr(a: &Image, b: &Image) -> Option<f64> {
    let m = mse(a, b)?;
    let peak = ((1u64 << a.bit_depth) - 1) as f64;
    Some(if m == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (peak * peak / m).log10()
    })
}
