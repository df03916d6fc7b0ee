//! Early termination: skip coding the low bitplanes that rate control
//! would drop anyway (docs/codec.md, "Early termination").
//!
//! A slope-byte (PSB) early stop learns, while coding, how many bytes each
//! rate-distortion slope costs and stops blocks whose slope falls below
//! the threshold the byte target implies. BPC-PaCo codes a whole codeblock
//! in one call, so here the statistics come first:
//!
//! 1. For every codeblock and bitplane, the exact distortion decrease of
//!    that bitplane (from the indices alone, with the decoder's
//!    reconstruction rule) and three symbol counts: coefficients becoming
//!    significant, being refined, and still insignificant.
//! 2. A sample of codeblocks (every 16th) is coded in full; a least-squares
//!    fit of their per-bitplane bytes on the three counts gives a rate
//!    model for every other bitplane of every block.
//! 3. PCRD-Opt on the modelled (rate, distortion) points for the layer
//!    target gives each block the lowest bitplane it would keep; one more
//!    bitplane is kept as a safety margin, the ones below are dropped by
//!    shifting the block's indices right (the shift is stored in the index
//!    and undone by the decoder's dequantization).
//!
//! Dropped bitplanes are never coded, so they cost no time; the price is
//! that a misprediction loses a little quality (measured in
//! docs/history/codec.md) and that the kept bitplanes are coded with the
//! probability rows of lower bitplane numbers.

use rayon::prelude::*;
use wavelane_core::bpc::reconstruct_magnitude;

use super::codeblocks::BlockGeometry;
use super::error::CodecError;
use super::header::Header;
use super::rate::{allocate, BlockPasses, Hulls, LayerTarget, SizeModel};
use super::stages::entropy;
use super::weights::block_weight;
use crate::backend::Backend;
use crate::bpc::CodeblockBatch;

/// Every how many blocks one is coded in full to calibrate the rate model.
const SAMPLE_EVERY: usize = 16;
/// Bitplanes kept below the lowest one the model selects.
const SAFETY_PLANES: i32 = 1;

/// Per-bitplane statistics of one block, index `j` = bitplane `j`.
#[derive(Debug, Clone, Default)]
struct PlaneStats {
    decrease: Vec<f64>,
    newly: Vec<f64>,
    refine: Vec<f64>,
    insignificant: Vec<f64>,
}

fn plane_stats(batch: &CodeblockBatch, i: usize) -> PlaneStats {
    let d = batch.blocks[i];
    let mut top = 0u32;
    let mut counts = [0u64; 32]; // coefficients whose highest set bit is p
    let mut s = PlaneStats::default();
    let row =
        |y: usize| &batch.coefficients[d.offset + y * d.stride..d.offset + y * d.stride + d.width];
    for y in 0..d.height {
        for v in row(y) {
            let m = v.unsigned_abs();
            if m != 0 {
                let p = 31 - m.leading_zeros();
                counts[p as usize] += 1;
                top = top.max(p + 1);
            }
        }
    }
    let planes = top as usize;
    s.decrease = vec![0.0; planes];
    for y in 0..d.height {
        for v in row(y) {
            let m = v.unsigned_abs();
            if m == 0 {
                continue;
            }
            let p = (31 - m.leading_zeros()) as u8;
            let err = |j: u8| (m as f64 - reconstruct_magnitude(m, j) as f64).powi(2);
            s.decrease[p as usize] += (m as f64).powi(2) - err(p);
            for j in 0..p {
                s.decrease[j as usize] += err(j + 1) - err(j);
            }
        }
    }
    let total = (d.width * d.height) as u64;
    let mut above = 0u64;
    for j in (0..planes).rev() {
        s.newly.push(counts[j] as f64);
        s.refine.push(above as f64);
        above += counts[j];
        s.insignificant.push((total - above) as f64);
    }
    // Pushed from the top bitplane down; store by bitplane.
    s.newly.reverse();
    s.refine.reverse();
    s.insignificant.reverse();
    s
}

/// Solves the 3x3 system `a x = b` (Cramer), `None` if singular.
fn solve3(a: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(a);
    if d.abs() < 1e-9 {
        return None;
    }
    let mut x = [0.0; 3];
    for (k, xk) in x.iter_mut().enumerate() {
        let mut m = a;
        for r in 0..3 {
            m[r][k] = b[r];
        }
        *xk = det(m) / d;
    }
    Some(x)
}

/// Chooses every block's shift for `target`, applies it to the indices in
/// `batch`, and returns the shifts.
pub(crate) fn choose_shifts(
    header: &Header,
    blocks: &[BlockGeometry],
    batch: &mut CodeblockBatch,
    target: LayerTarget,
    backend: &Backend,
) -> Result<Vec<u8>, CodecError> {
    let mut shifts = vec![0u8; blocks.len()];
    if matches!(target, LayerTarget::All) || blocks.len() < 2 * SAMPLE_EVERY {
        return Ok(shifts);
    }
    let stats: Vec<PlaneStats> = (0..blocks.len())
        .into_par_iter()
        .map(|i| plane_stats(batch, i))
        .collect();

    // Calibrate bytes per plane = a*newly + b*refine + c*insignificant on the sample.
    // The sample shares the index array (moved in and back, not copied).
    let mut sample = CodeblockBatch {
        coefficients: std::mem::take(&mut batch.coefficients),
        blocks: batch.blocks.iter().step_by(SAMPLE_EVERY).copied().collect(),
    };
    let zeros = vec![0u8; sample.blocks.len()];
    // The calibration counts bytes per bitplane: the pass ends only.
    let coded = entropy::encode_host(
        header,
        &mut sample,
        &zeros,
        entropy::Records::PassEnds,
        backend,
    );
    batch.coefficients = sample.coefficients;
    let coded = coded?;
    let (mut ata, mut atb) = ([[0.0f64; 3]; 3], [0.0f64; 3]);
    for (k, records) in coded.records.iter().enumerate() {
        let s = &stats[k * SAMPLE_EVERY];
        let mut before = 0u32;
        for (j, plane_records) in group_by_plane(records).into_iter().rev() {
            let end = plane_records;
            let bytes = 2.0 * (end - before) as f64;
            before = end;
            let x = [s.newly[j], s.refine[j], s.insignificant[j]];
            for r in 0..3 {
                for c in 0..3 {
                    ata[r][c] += x[r] * x[c];
                }
                atb[r] += x[r] * bytes;
            }
        }
    }
    let Some(coef) = solve3(ata, atb) else {
        return Ok(shifts);
    };
    let coef = coef.map(|c| c.max(0.0));

    // PCRD-Opt on the modelled per-plane points.
    let passes: Vec<BlockPasses> = blocks
        .iter()
        .zip(&stats)
        .map(|(b, s)| {
            let weight = block_weight(header, b);
            let (mut bytes, mut dec) = (0.0f64, 0.0f64);
            let mut p = BlockPasses {
                resolution: b.resolution as usize,
                ..Default::default()
            };
            for j in (0..s.decrease.len()).rev() {
                bytes +=
                    (coef[0] * s.newly[j] + coef[1] * s.refine[j] + coef[2] * s.insignificant[j])
                        .max(1.0);
                dec += s.decrease[j] * weight;
                p.codewords.push((bytes / 2.0).ceil() as u32);
                p.decrease.push(dec);
            }
            p
        })
        .collect();
    let total = passes.iter().filter_map(|p| p.decrease.last()).sum();
    let model = SizeModel {
        fixed_bytes: 64,
        fixed_index_bits: 8 * blocks.len() as u64,
        layers: 1,
        resolutions: header.levels as usize + 1,
    };
    let alloc = allocate(&Hulls::new(&passes), &[target], model, total);
    for (i, p) in passes.iter().enumerate() {
        let planes = p.codewords.len() as i32;
        if planes == 0 || i % SAMPLE_EVERY == 0 {
            continue; // empty, or a calibration block (keeps its full coding)
        }
        let kept = p
            .codewords
            .iter()
            .take_while(|&&cw| cw <= alloc.counts[i])
            .count() as i32;
        // Planes are listed from the top: `kept` planes reach bitplane planes - kept.
        let lowest = planes - kept.max(1);
        shifts[i] = (lowest - SAFETY_PLANES).max(0) as u8;
    }
    for (i, &s) in shifts.iter().enumerate() {
        if s > 0 {
            let d = batch.blocks[i];
            for y in 0..d.height {
                let row = &mut batch.coefficients[d.offset + y * d.stride..][..d.width];
                for v in row {
                    *v = if *v < 0 { -((-*v) >> s) } else { *v >> s };
                }
            }
        }
    }
    Ok(shifts)
}

/// The codewords through the last pass of each bitplane, from bitplane 0
/// up (so `.rev()` walks from the top).
fn group_by_plane(records: &[wavelane_core::bpc::PassRecord]) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    for r in records {
        let j = r.bitplane as usize;
        match out.last_mut() {
            Some(last) if last.0 == j => last.1 = r.codewords,
            _ => out.push((j, r.codewords)),
        }
    }
    out.reverse();
    out
}
