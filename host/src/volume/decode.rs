//! The volume decoder: parse and validate the file, select the codeblocks
//! a slice range needs ([`needed_slices`]), check the CRCs of the segments
//! it reads, BPC-PaCo decode on the chosen backend, dequantize, inverse
//! 3-D DWT, level shift back, and cut out the slices asked for.

use std::time::Instant;

use rayon::prelude::*;
use wavelane_core::bpc::PassSchedule;
use wavelane_core::dwt::volume::{reduced_dims, total_levels, uniform_reduction, VolumeLayout};
use wavelane_core::dwt::{Cdf53, Fixed97, Wavelet};

use super::format::{VolumeContainer, VolumeHeader};
use super::geometry::needed_slices;
use super::io::DEFAULT_MAX_VOXELS;
use super::types::{Volume, VolumeError};
use crate::backend::Backend;
use crate::bpc::{cpu, CodeblockBatch, EncodedBatch};
use crate::codec::colour::shift_out;
use crate::codec::format::FormatError;
use crate::codec::quant::{dequantize_i32, half_bin, UNIT_STEP};

/// Options of [`decode_volume`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VolumeDecodeOptions {
    /// Decode slices `a..=b` only (counted from 0), reading only the
    /// codeblocks they need.
    pub slices: Option<(usize, usize)>,
    /// Decode only the first `n` quality layers.
    pub layers: Option<u8>,
    /// Leave out the finest `reduce` levels of every axis (of an axis with
    /// fewer levels, all it has): about `1 / 2^reduce` the size along each
    /// axis, read from the codeblocks of the coarser subbands only, exactly
    /// the low band of that many levels. `slices` then counts slices of
    /// the reduced volume.
    pub reduce: u8,
    /// Memory budget in voxels.
    pub max_voxels: u64,
    /// Decode what is intact of a damaged or cut file instead of failing:
    /// a segment that is missing or fails its CRC ends its resolution's
    /// layers there (docs/format.md, "Damaged files").
    pub partial: bool,
}

impl Default for VolumeDecodeOptions {
    fn default() -> Self {
        VolumeDecodeOptions {
            slices: None,
            layers: None,
            reduce: 0,
            max_voxels: DEFAULT_MAX_VOXELS,
            partial: false,
        }
    }
}

/// What a decode did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VolumeDecodeReport {
    /// The backend.
    pub backend: String,
    /// Codeblocks decoded.
    pub blocks_decoded: usize,
    /// Codeblocks in the file.
    pub blocks_total: usize,
    /// Layers decoded.
    pub layers: usize,
    /// Bytes of the file read, and the bytes its index promises (equal
    /// unless `partial` decoded a cut file).
    pub file_bytes: u64,
    /// See `file_bytes`.
    pub expected_bytes: u64,
    /// Segments (file order) left out by `partial` because they fail their
    /// CRC.
    pub damaged_segments: Vec<usize>,
    /// Segments left out by `partial` because the file ends before them.
    pub missing_segments: Vec<usize>,
    /// Seconds.
    pub seconds: f64,
}

/// A decoded volume and its report.
#[derive(Debug, Clone)]
pub struct VolumeDecoded {
    /// The volume (only the slices asked for).
    pub volume: Volume,
    /// The report.
    pub report: VolumeDecodeReport,
}

/// Decodes a volume file.
pub fn decode_volume(
    bytes: &[u8],
    o: &VolumeDecodeOptions,
    backend: &Backend,
) -> Result<VolumeDecoded, VolumeError> {
    let start = Instant::now();
    let c = match o.partial {
        true => VolumeContainer::parse_prefix(bytes, o.max_voxels)?,
        false => VolumeContainer::parse(bytes, o.max_voxels)?,
    };
    let h = &c.header;
    let dims = h.dims_usize();
    let levels = h.levels_u32();
    let file_layers = h.layers as usize;
    let layers = match o.layers {
        Some(0) => return Err(VolumeError::Options("--layers 0 decodes nothing".into())),
        Some(n) => (n as usize).min(file_layers),
        None => file_layers,
    };
    let most = levels.iter().max().copied().unwrap_or(0);
    if o.reduce as u32 > most {
        return Err(VolumeError::Options(format!(
            "--reduce {}: the volume has {most} level(s) (x, y, z: {}, {}, {})",
            o.reduce, levels[0], levels[1], levels[2]
        )));
    }
    let reduce = uniform_reduction(levels, o.reduce as u32);
    let out_dims = reduced_dims(dims, levels, reduce);
    let (a, b) = match o.slices {
        Some((a, b)) if a > b || b >= out_dims[2] => {
            return Err(VolumeError::Options(format!(
                "--slices {a}..{b}: the volume has slices 0..{}{}",
                out_dims[2] - 1,
                if reduce[2] > 0 {
                    " at this --reduce"
                } else {
                    ""
                }
            )))
        }
        Some(r) => r,
        None => (0, out_dims[2] - 1),
    };
    // The full-resolution slices under the reduced ones asked for.
    let full_z = (
        a << reduce[2],
        (((b + 1) << reduce[2]) - 1).min(dims[2] - 1),
    );
    let needed = needed_slices(dims, levels, full_z.0, full_z.1)
        .map_err(|e| VolumeError::Options(e.to_string()))?;
    let total = total_levels(levels);
    let chosen: Vec<usize> = (0..c.blocks.len())
        .filter(|&i| {
            let blk = &c.blocks[i];
            let level = total - blk.geometry.resolution as u32;
            // A subband high-pass along a reduced axis below its reduction
            // is not needed at all.
            let kept = (0..3).all(|a| blk.mask & (1 << a) == 0 || level >= reduce[a]);
            kept && matches!(needed[blk.geometry.band as usize], Some((f, e)) if (f..=e).contains(&blk.z))
        })
        .collect();
    // Layers decoded per resolution: fewer where `partial` leaves out a
    // segment, since a block's later layers continue its earlier ones.
    let mut layers_of = vec![layers; h.resolutions()];
    let (mut damaged_segments, mut missing_segments) = (Vec::new(), Vec::new());
    for (k, s) in c.segments.iter().enumerate() {
        if s.layer >= layers {
            continue;
        }
        match c.check_segment(k) {
            Err(FormatError::SegmentCrc { .. }) if o.partial => damaged_segments.push(k),
            Err(FormatError::Truncated { .. }) if o.partial => missing_segments.push(k),
            other => {
                other?;
                continue;
            }
        }
        layers_of[s.resolution] = layers_of[s.resolution].min(s.layer);
    }
    // The chosen blocks' codewords of the kept layers, in a batch over the
    // whole volume.
    let offsets = c.block_offsets();
    let mut encoded = EncodedBatch {
        tops: Vec::with_capacity(chosen.len()),
        offsets: vec![0],
        codewords: Vec::new(),
    };
    for &i in &chosen {
        encoded.tops.push(c.index.tops[i]);
        for l in 0..layers_of[c.blocks[i].geometry.resolution as usize] {
            let at = offsets[i * file_layers + l];
            let n = c.index.counts[i * file_layers + l] as usize;
            let words = c.bytes[at..at + 2 * n]
                .chunks_exact(2)
                .map(|p| u16::from_be_bytes([p[0], p[1]]));
            encoded.codewords.extend(words);
        }
        encoded.offsets.push(encoded.codewords.len());
    }
    let like = CodeblockBatch {
        coefficients: vec![0; dims.iter().product()],
        blocks: chosen
            .iter()
            .map(|&i| c.blocks[i].desc(dims[0], dims[1]))
            .collect(),
    };
    let tables = h.tables.probability_tables();
    let (mut data, summaries) = match backend {
        Backend::Cpu => cpu::decode(&like, &encoded, tables, None, cpu::CoreForm::Sequential)?,
        #[cfg(feature = "gpu")]
        Backend::Gpu(g) => {
            let (v, d, _) = crate::bpc::gpu::decode(
                g,
                &like,
                &encoded,
                tables,
                wavelane_core::bpc::DecodeLimits::ALL,
            )?;
            (v, d)
        }
    };
    drop(like);
    dequantize(&c, &chosen, &encoded, &summaries, &mut data);
    let layout = VolumeLayout::new(dims[0], dims[1], dims[2]);
    match h.wavelet {
        Wavelet::Cdf53 => {
            crate::dwt::inverse_3d_reduced::<Cdf53>(backend, &mut data, layout, levels, reduce)?
        }
        _ => crate::dwt::inverse_3d_reduced::<Fixed97>(backend, &mut data, layout, levels, reduce)?,
    }
    let [rw, rh, _] = out_dims;
    let plane = dims[0] * dims[1];
    let mut samples = Vec::with_capacity(rw * rh * (b - a + 1));
    for z in a..=b {
        for y in 0..rh {
            let row = z * plane + y * dims[0];
            samples.extend_from_slice(&data[row..row + rw]);
        }
    }
    drop(data);
    shift_out(
        &mut samples,
        h.sample.bits(),
        h.sample.signed(),
        h.fraction_bits,
    );
    let mut nifti_header = h.nifti_header.clone();
    if let Some(n) = nifti_header.as_mut() {
        super::io::nifti::scale_voxel_size(n, reduce.map(|k| (1u32 << k) as f32));
    }
    let volume = Volume {
        width: rw,
        height: rh,
        depth: b - a + 1,
        sample: h.sample,
        samples,
        nifti_header,
    };
    let report = VolumeDecodeReport {
        backend: backend.describe(),
        blocks_decoded: chosen.len(),
        blocks_total: c.blocks.len(),
        layers,
        file_bytes: bytes.len() as u64,
        expected_bytes: c.full_len,
        damaged_segments,
        missing_segments,
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok(VolumeDecoded { volume, report })
}

/// Whether a block's decode reached bitplane 0 (then its indices are
/// whole bins and take the half-bin offset; docs/format.md,
/// "Reconstruction").
fn reached_plane0(header: &VolumeHeader, top: Option<u8>, passes_completed: usize) -> bool {
    match top {
        Some(m) if passes_completed > 0 => {
            PassSchedule::pass(header.mode(), m, passes_completed - 1).1 == 0
        }
        _ => false,
    }
}

/// Decoded indices of the `chosen` blocks to coefficients, in place
/// (nothing to do at unit steps), slice by slice in parallel.
fn dequantize(
    c: &VolumeContainer<'_>,
    chosen: &[usize],
    encoded: &EncodedBatch,
    summaries: &[wavelane_core::bpc::Decoded],
    data: &mut [i32],
) {
    let h = &c.header;
    if h.steps.iter().all(|s| s.q16() == UNIT_STEP) {
        return;
    }
    let [w, hh, d] = h.dims_usize();
    let mut by_z: Vec<Vec<u32>> = vec![Vec::new(); d];
    for (k, &i) in chosen.iter().enumerate() {
        by_z[c.blocks[i].z].push(k as u32);
    }
    data.par_chunks_mut(w * hh)
        .zip(by_z.par_iter())
        .for_each(|(slice, members)| {
            for &k in members {
                let k = k as usize;
                let b = &c.blocks[chosen[k]].geometry;
                let q16 = h.steps[b.band as usize].q16();
                let half = half_bin(q16, 0)
                    && reached_plane0(h, encoded.tops[k], summaries[k].passes_completed);
                for y in b.rect.y..b.rect.y + b.rect.height {
                    for v in &mut slice[y * w + b.rect.x..][..b.rect.width] {
                        *v = dequantize_i32(*v, 0, q16, half);
                    }
                }
            }
        });
}
