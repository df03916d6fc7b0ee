//! The real-valued decreases of integer coefficients as exact integer sums.
//!
//! # Why integers suffice
//!
//! Take one integer coefficient `c` of a block with step `Δ = q16 / 2^16`,
//! `s = |c|`, and its index magnitude `v = min(⌊s · 2^16 / q16⌋, 2^28 - 1)`
//! (`quant::quantize_i32`; `v = s` at the unit step). Its real value in
//! steps is `x = s · 2^16 / q16`. A decoder that decoded bitplanes down to
//! `j` reconstructs `recon(v, j)` (`reconstruct_magnitude`, mid-interval),
//! plus `1/2` at `j = 0` where the half-bin rule holds (`quant::half_bin`).
//! Write `R_j = 2 · recon(v, j) + [j = 0 and half]`, an integer, so the
//! reconstruction is `R_j / 2`. Then, with `t` the top bitplane of `v`:
//!
//! - significance at `t`: `x² - (x - R_t/2)² = R_t · x - R_t² / 4`;
//! - refinement at `j < t`: `(x - R_{j+1}/2)² - (x - R_j/2)²
//!   = (R_j - R_{j+1}) · x - (R_j² - R_{j+1}²) / 4`, where `R_j - R_{j+1}`
//!   is `±2^j` for `j ≥ 1` and one of `-2, -1, 0, 1` at `j = 0`;
//! - nothing decoded leaves `x²`.
//!
//! Every decrease is `a · x - b / 4` with small integers `a`, `b`, so a
//! block's decrease at one bitplane is `A · 2^16 / q16 - B / 4` with
//! `A = Σ a · s` and `B = Σ b` over its coefficients, and its energy is
//! `E · 2^32 / q16²` with `E = Σ s²`. Those sums are integers, the same in
//! any order of summation: the CPU and the GPU (`shaders/codec/distortion.comp`)
//! get the same ones, and [`BlockSums::distortion`] turns them into `f64`
//! with one formula: `(2^18 · A - q16 · B)` exactly in `i128`, then one
//! rounding to `f64`, one division by `q16` and an exact power of two.
//!
//! # Early termination's shifts
//!
//! A block whose lowest `k` bitplanes early termination drops codes
//! `v' = v >> k` and measures in steps of `Δ · 2^k`. For every `j ≥ 0`,
//! `R'_j · 2^k = R_{j+k}` (for `j ≥ 1` the mid-interval offsets line up; at
//! `j = 0` the half-bin rule holds for any `k > 0`, and `2 · (v' + 1/2) ·
//! 2^k = 2 · recon(v, k)`), and `x' = x / 2^k`. So the shifted block's
//! decreases at bitplane `j` are the unshifted sums' at `j + k` divided by
//! `4^k`, exactly, and coefficients with `v < 2^k` (`v' = 0`) drop out with
//! the bitplanes below `k`. The sums are therefore made once, before the
//! shifts are known (on the device: before quantization overwrites the
//! coefficients), and the shift is applied in the conversion.
//!
//! # Ranges
//!
//! `s ≤ 2^31`, `v < 2^28` (an index the coder would refuse, `v ≥ 2^28` at
//! the unit step, is clamped like the quantizer clamps: that block's encode
//! fails in the coder, so its sums are never used, and clamping keeps every
//! term in range), `R_j < 2^30`: every per-coefficient term is below `2^62`
//! in magnitude, so it is exact in `i64` (on the device too), and a sum of
//! at most `64 · 256` terms is below `2^76`. The sums are kept in 128 bits
//! (`i128` here, two 64-bit words with a carry on the device), which holds
//! them for any coefficients and any step: no bound on the image is needed,
//! and no encode falls back to reading the coefficients on the host for
//! fear of overflow. `2^18 · A` stays below `2^94` and `q16 · B` (`q16 <
//! 2^32`) below `2^108`, so the numerator is exact in `i128` too.
//!
//! # Layout
//!
//! [`SUMS`] sums a block, in this order (the device writes the same):
//! `E`, then for each bitplane `k` in `0..28`: the significance `A` and
//! `B` (of the coefficients whose top bitplane is `k`) and the refinement
//! `A` and `B` (of those whose top bitplane is above `k`).

use rayon::prelude::*;
use wavelane_core::bpc::{reconstruct_magnitude, COEFFICIENT_BITS};

use super::block::BlockDistortion;
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::header::Header;
use crate::codec::planes::Planes;
use crate::codec::quant::{self, MAX_INDEX, UNIT_STEP};

/// Bitplanes an index can have (`v < 2^28`).
pub(crate) const PLANES: usize = COEFFICIENT_BITS as usize;

/// Sums a block: the energy, then four per bitplane (module docs, "Layout").
pub(crate) const SUMS: usize = 1 + 4 * PLANES;

/// One block's exact sums (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockSums(pub [i128; SUMS]);

impl Default for BlockSums {
    fn default() -> Self {
        BlockSums([0; SUMS])
    }
}

/// The index magnitude the coder sees for `c` at step `q16` (before any
/// shift), clamped to the coder's range (module docs, "Ranges").
#[inline]
pub(crate) fn index_magnitude(c: i32, q16: u64) -> u32 {
    let v = if q16 == UNIT_STEP {
        c.unsigned_abs()
    } else {
        quant::quantize_i32(c, q16).unsigned_abs()
    };
    v.min(MAX_INDEX)
}

impl BlockSums {
    /// Adds coefficient `c` of a block with step `q16` and the half-bin
    /// rule `half` (`quant::half_bin(q16, 0)`).
    #[inline]
    pub fn add(&mut self, c: i32, q16: u64, half: bool) {
        let s = c.unsigned_abs() as i64;
        self.0[0] += (s as u64 * s as u64) as i128;
        let v = index_magnitude(c, q16);
        if v == 0 {
            return;
        }
        let top = (31 - v.leading_zeros()) as usize;
        let r = |j: usize| 2 * reconstruct_magnitude(v, j as u8) as i64 + (j == 0 && half) as i64;
        let rt = r(top);
        let at = 1 + 4 * top;
        self.0[at] += (rt * s) as i128;
        self.0[at + 1] += (rt * rt) as i128;
        let mut upper = rt;
        for j in (0..top).rev() {
            let rj = r(j);
            let at = 1 + 4 * j;
            self.0[at + 2] += ((rj - upper) * s) as i128;
            self.0[at + 3] += (rj * rj - upper * upper) as i128;
            upper = rj;
        }
    }

    /// Energy `Σ s²`.
    pub fn energy(&self) -> i128 {
        self.0[0]
    }

    /// The significance and refinement `(A, B)` of bitplane `k`.
    pub fn plane(&self, k: usize) -> [(i128, i128); 2] {
        let at = 1 + 4 * k;
        [
            (self.0[at], self.0[at + 1]),
            (self.0[at + 2], self.0[at + 3]),
        ]
    }

    /// The block's real-valued decreases at step `q16` with its lowest
    /// `shift` bitplanes dropped, in squared steps of `Δ · 2^shift`: the
    /// one formula both backends' sums go through (module docs).
    pub fn distortion(&self, q16: u64, shift: u8) -> BlockDistortion {
        let shift = shift as usize;
        // 4^-shift and the 1/4 of `b / 4`: exact powers of two.
        let scale = 2f64.powi(-2 - 2 * shift as i32);
        let q = q16.max(1);
        let real = |(a, b): (i128, i128)| ((a << 18) - q as i128 * b) as f64 / q as f64 * scale;
        // The highest bitplane with a significant coefficient: its
        // significance B (`Σ R_t²`) is positive.
        let top = (0..PLANES).rev().find(|&k| self.plane(k)[0].1 != 0);
        let len = top.map_or(0, |t| (t + 1).saturating_sub(shift));
        let (mut significance, mut refinement) = (Vec::with_capacity(len), Vec::with_capacity(len));
        for k in shift..shift + len {
            let [sig, refine] = self.plane(k);
            significance.push(real(sig));
            refinement.push(real(refine));
        }
        BlockDistortion {
            significance,
            refinement,
            energy: self.energy() as f64 / q as f64 / q as f64 * 2f64.powi(32 - 2 * shift as i32),
        }
    }

    /// The sums as the device writes them: four little-endian 32-bit words
    /// a sum, the low 64 bits then the high 64 bits of a two's-complement
    /// 128-bit integer.
    #[cfg(any(feature = "gpu", test))]
    pub fn from_words(words: &[u32]) -> BlockSums {
        let mut out = BlockSums::default();
        for (sum, w) in out.0.iter_mut().zip(words.chunks_exact(4)) {
            let lo = (w[1] as u128) << 32 | w[0] as u128;
            let hi = (w[3] as u128) << 32 | w[2] as u128;
            *sum = (hi << 64 | lo) as i128;
        }
        out
    }
}

/// Every block's sums over integer coefficient planes of stride `width`.
pub(crate) fn block_sums(
    header: &Header,
    coefficients: &Planes<i32>,
    blocks: &[BlockGeometry],
) -> Vec<BlockSums> {
    let w = header.width as usize;
    blocks
        .par_iter()
        .map(|b| {
            let q16 = header.step(b.component as usize, b.band as usize).q16();
            let half = quant::half_bin(q16, 0);
            let plane = coefficients.plane(b.component as usize);
            let mut sums = BlockSums::default();
            for y in b.rect.y..b.rect.y + b.rect.height {
                for &c in &plane[y * w + b.rect.x..][..b.rect.width] {
                    sums.add(c, q16, half);
                }
            }
            sums
        })
        .collect()
}

#[cfg(test)]
#[path = "sums_tests.rs"]
mod tests;
