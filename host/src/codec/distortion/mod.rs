//! Distortion decreases in the coefficient domain, for rate control.
//!
//! BPC-PaCo's pass records measure the squared-error decrease of each pass
//! on the integer indices. The decoder, though, reconstructs real
//! coefficients `(v + δ) · Δ` of real values `|c| / Δ` that lie anywhere in
//! their quantization bin: an index 1 coded in bitplane 0 removes on
//! average 2.25 squared steps of error, not 1, and a coefficient left out
//! leaves `(|c|/Δ)²`, not `q²`. These differences are largest exactly in the
//! low bitplanes where PCRD-Opt makes its decisions.
//!
//! So for every block and bitplane we compute the significance and
//! refinement decreases on the real values with the decoder's
//! reconstruction rule, and give each pass its share: a bitplane has one
//! refinement pass and (2-pass mode) one significance pass, which get the
//! exact values; in 3-pass mode the SPP and the CP split the bitplane's
//! significance decrease in proportion to their index-domain records.
//!
//! Integer coefficients (the 5/3 and the fixed-point 9/7) get these
//! decreases from exact integer sums ([`sums`]: why that is possible, and
//! the one formula that turns them into `f64`), which the GPU backend
//! computes on the device beside quantization (`shaders/codec/distortion.comp`)
//! so that the coefficients never come down, and the CPU backend on the
//! host: both give the same integers whatever the order of summation, and
//! so the same file. The float 9/7's coefficients are real already; its
//! decreases are summed in `f64` on the host ([`float_distortions`]).

mod block;
mod sums;

use rayon::prelude::*;
use wavelane_core::bpc::{reconstruct_magnitude, PassKind, PassRecord};

use super::codeblocks::BlockGeometry;
use super::header::Header;
use super::planes::Planes;
use super::quant;
use crate::bpc::CodeblockBatch;

pub(crate) use block::BlockDistortion;
#[cfg(feature = "gpu")]
pub(crate) use sums::SUMS;
pub(crate) use sums::{block_sums, BlockSums};

/// What the quantize stage hands on for the real-valued decreases of a
/// `--bpp` or `--psnr` encode.
pub(crate) enum Real {
    /// Every block's exact sums (integer coefficients), made where the
    /// coefficients were: nothing plane-sized is left to read.
    Sums(Vec<BlockSums>),
    /// The float 9/7's coefficients, read with the indices on the host.
    Float(Planes<f32>),
}

/// Real-valued per-bitplane decreases of every block from its integer
/// sums, each block's indices shifted right by `shifts[i]` bitplanes
/// (early termination).
pub(crate) fn from_sums(
    header: &Header,
    sums: &[BlockSums],
    blocks: &[BlockGeometry],
    shifts: &[u8],
) -> Vec<BlockDistortion> {
    sums.par_iter()
        .zip(blocks)
        .zip(shifts)
        .map(|((s, b), &shift)| {
            let q16 = header.step(b.component as usize, b.band as usize).q16();
            s.distortion(q16, shift)
        })
        .collect()
}

/// The decreases of f32 coefficients, summed in `f64` block by block.
/// `indices` are the (shifted) indices the coder sees, laid out as in
/// `batch`.
pub(crate) fn float_distortions(
    header: &Header,
    coefficients: &Planes<f32>,
    blocks: &[BlockGeometry],
    batch: &CodeblockBatch,
    shifts: &[u8],
) -> Vec<BlockDistortion> {
    let w = header.width as usize;
    blocks
        .par_iter()
        .enumerate()
        .map(|(i, b)| {
            let q16 = header.step(b.component as usize, b.band as usize).q16();
            let shift = shifts[i];
            let half = quant::half_bin(q16, shift);
            let scale = 65536.0 / (q16 as f64 * (shift as f64).exp2());
            let d = batch.blocks[i];
            let mut out = BlockDistortion::default();
            let recon = |v: u32, j: u8| {
                reconstruct_magnitude(v, j) as f64 + if j == 0 && half { 0.5 } else { 0.0 }
            };
            let plane = coefficients.plane(b.component as usize);
            for y in 0..b.rect.height {
                let row = (b.rect.y + y) * w + b.rect.x;
                for x in 0..b.rect.width {
                    let real = plane[row + x].abs() as f64 * scale;
                    out.energy += real * real;
                    let v = batch.coefficients[d.offset + y * d.stride + x].unsigned_abs();
                    if v == 0 {
                        continue;
                    }
                    let top = (31 - v.leading_zeros()) as usize;
                    if out.significance.len() <= top {
                        out.significance.resize(top + 1, 0.0);
                        out.refinement.resize(top + 1, 0.0);
                    }
                    let err = |j: u8| (real - recon(v, j)).powi(2);
                    out.significance[top] += real * real - err(top as u8);
                    for j in 0..top as u8 {
                        out.refinement[j as usize] += err(j + 1) - err(j);
                    }
                }
            }
            out
        })
        .collect()
}

/// Cumulative decreases per pass from the records, with each bitplane's
/// real-valued totals shared out as the module docs describe; `weight`
/// converts squared steps to squared image-sample error.
pub(crate) fn pass_decreases(
    records: &[PassRecord],
    real: &BlockDistortion,
    weight: f64,
) -> Vec<f64> {
    let planes = real.significance.len().max(
        records
            .iter()
            .map(|r| r.bitplane as usize + 1)
            .max()
            .unwrap_or(0),
    );
    let mut index_sig = vec![0f64; planes];
    let mut sig_passes = vec![0u32; planes];
    for r in records.iter().filter(|r| r.kind != PassKind::Refinement) {
        index_sig[r.bitplane as usize] += r.distortion_decrease as f64;
        sig_passes[r.bitplane as usize] += 1;
    }
    let mut acc = 0.0;
    records
        .iter()
        .map(|r| {
            let j = r.bitplane as usize;
            let value = |v: &[f64]| v.get(j).copied().unwrap_or(0.0);
            let d = match r.kind {
                PassKind::Refinement => value(&real.refinement),
                _ if index_sig[j] > 0.0 => {
                    value(&real.significance) * r.distortion_decrease as f64 / index_sig[j]
                }
                _ => value(&real.significance) / sig_passes[j].max(1) as f64,
            };
            acc += d * weight;
            acc
        })
        .collect()
}
