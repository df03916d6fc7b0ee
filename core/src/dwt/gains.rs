//! Subband synthesis gains: the L2 norm of the synthesis basis function of a
//! coefficient in each subband. A quantization error `e` in a coefficient of
//! subband `b` adds about `e² · energy(b)` of squared error to the image, so
//! rate control weights distortion by [`subband_energy`] (squared norm).
//!
//! Computed from the linear form of each wavelet (5/3 without its rounding,
//! fixed-point 9/7 as the unscaled real 9/7), exactly, with a bounded
//! recurrence on autocorrelations: the autocorrelation of a level-`l` basis
//! function is `R_l(z) = A0(z) R_{l-1}(z^2)`, and only the coefficients within
//! the support of `A0` are ever needed, so fixed-size arrays do for any level.
//! 2-D norms are products of the 1-D norms (separable bases).

use super::lift97::{ALPHA, BETA, DELTA, GAMMA, K};
use super::{Orientation, Wavelet};

/// Half-width of the autocorrelation window (filters are at most 9 taps).
const W: usize = 16;
const LEN: usize = 2 * W + 1;
/// Impulse-response buffer length (even, so mirror effects stay far away).
const N: usize = 64;

/// Linear lifting model: steps (predict, update, ...) and band scale factors.
fn model(wavelet: Wavelet) -> (&'static [f64], f64, f64) {
    match wavelet {
        Wavelet::Cdf53 => (&[-0.5, 0.25], 1.0, 1.0),
        Wavelet::Cdf97 => (&[ALPHA, BETA, GAMMA, DELTA], 1.0 / K, K),
        Wavelet::Fixed97 => (&[ALPHA, BETA, GAMMA, DELTA], 1.0, 1.0),
    }
}

/// Synthesis filter of one band: the inverse transform of a unit coefficient
/// in the middle of an otherwise zero line.
fn synthesis_filter(wavelet: Wavelet, high: bool) -> [f64; N] {
    let (steps, scale_low, scale_high) = model(wavelet);
    let mut x = [0.0f64; N];
    x[N / 2 + high as usize] = 1.0;
    for (i, v) in x.iter_mut().enumerate() {
        *v *= if i % 2 == 0 {
            1.0 / scale_low
        } else {
            1.0 / scale_high
        };
    }
    for (s, &c) in steps.iter().enumerate().rev() {
        // Step s updates odd positions when s is even (predict) and even
        // positions when s is odd (update); undo it.
        let parity = if s % 2 == 0 { 1 } else { 0 };
        let mut i = parity;
        while i < N {
            let l = if i == 0 { 1 } else { i - 1 };
            let r = if i + 1 < N { i + 1 } else { i - 1 };
            x[i] -= c * (x[l] + x[r]);
            i += 2;
        }
    }
    x
}

/// Autocorrelation of the filter, lags `-W..=W`.
fn autocorrelation(f: &[f64; N]) -> [f64; LEN] {
    let mut a = [0.0; LEN];
    for (lag, out) in a.iter_mut().enumerate() {
        let d = lag as i64 - W as i64;
        let mut s = 0.0;
        for i in 0..N as i64 {
            let j = i + d;
            if (0..N as i64).contains(&j) {
                s += f[i as usize] * f[j as usize];
            }
        }
        *out = s;
    }
    a
}

/// `R'[n] = Σ_m A0[n - 2m] R[m]` on the window.
fn cascade(a0: &[f64; LEN], r: &[f64; LEN]) -> [f64; LEN] {
    let mut out = [0.0; LEN];
    for (ni, o) in out.iter_mut().enumerate() {
        let n = ni as i64 - W as i64;
        let mut s = 0.0;
        for (mi, &rv) in r.iter().enumerate() {
            let m = mi as i64 - W as i64;
            let k = n - 2 * m;
            if k.abs() <= W as i64 {
                s += a0[(k + W as i64) as usize] * rv;
            }
        }
        *o = s;
    }
    out
}

/// Squared norm of a 1-D synthesis basis function: `lows` low-pass stages
/// below one top stage that is high-pass (`high`) or low-pass. With
/// `high == false` this is the low band after `lows + 1` levels.
fn energy_1d(wavelet: Wavelet, lows: u32, high: bool) -> f64 {
    let a0 = autocorrelation(&synthesis_filter(wavelet, false));
    let mut r = autocorrelation(&synthesis_filter(wavelet, high));
    for _ in 0..lows {
        r = cascade(&a0, &r);
    }
    r[W]
}

/// Squared L2 norm of a 1-D basis function: the high band of `level`
/// (`high`), or the low band left after `level + 1` levels.
pub fn energy_1d_band(wavelet: Wavelet, level: u32, high: bool) -> f64 {
    energy_1d(wavelet, level, high)
}

/// Squared synthesis norm (energy gain) of a 2-D subband. For `LL`, `level`
/// is the number of levels (0 gives 1: the untransformed image).
pub fn subband_energy(wavelet: Wavelet, level: u32, orientation: Orientation) -> f64 {
    let low_after = |levels: u32| {
        if levels == 0 {
            1.0
        } else {
            energy_1d(wavelet, levels - 1, false)
        }
    };
    match orientation {
        Orientation::LL => low_after(level) * low_after(level),
        Orientation::HH => energy_1d(wavelet, level, true) * energy_1d(wavelet, level, true),
        Orientation::HL | Orientation::LH => {
            energy_1d(wavelet, level, true) * energy_1d(wavelet, level, false)
        }
    }
}

/// Synthesis L2 norm of a 2-D subband (square root of [`subband_energy`]).
pub fn subband_norm(wavelet: Wavelet, level: u32, orientation: Orientation) -> f64 {
    sqrt(subband_energy(wavelet, level, orientation))
}

/// Square root by Newton iteration (no libm in `no_std`).
fn sqrt(v: f64) -> f64 {
    if v <= 0.0 || v.is_nan() || v.is_infinite() {
        return if v == 0.0 || v.is_infinite() {
            v
        } else {
            f64::NAN
        };
    }
    // Start from the exponent-halved bit pattern, then refine.
    let mut x = f64::from_bits((v.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..8 {
        x = 0.5 * (x + v / x);
    }
    x
}
