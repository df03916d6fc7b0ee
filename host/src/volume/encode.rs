//! The volume encoder: level shift, the 3-D DWT on the chosen backend,
//! dead-zone quantization, BPC-PaCo on the 2-D codeblocks of the
//! subbands' slices (the BPC-PaCo drivers the image codec uses), PCRD-Opt
//! over the whole volume (the image codec's rate control,
//! [`RateControl`]) and packing (docs/volumes.md, "Coding").

use std::time::Instant;

use rayon::prelude::*;
use wavelane_core::bpc::{PassRecord, ProbabilityTables};
use wavelane_core::dwt::volume::VolumeLayout;
use wavelane_core::dwt::{Cdf53, Fixed97, Wavelet};

use super::format::VolumeHeader;
use super::geometry::{volume_blocks, VolumeBlock};
use super::plan::{plan, subband_energy_3d, VolumeOptions, VolumeTarget};
use super::types::{Volume, VolumeError};
use crate::backend::Backend;
use crate::bpc::{CodeblockBatch, EncodedBatch};
use crate::codec::colour::shift_in;
use crate::codec::index::BlockIndex;
use crate::codec::quant::{quantize_i32, UNIT_STEP};
use crate::codec::rate::{Allocation, BlockPasses, Hulls, LayerTarget, SizeModel};
use crate::codec::stages::entropy::{self, Records};
use crate::codec::stages::rate::RateControl;

/// Seconds spent in each stage of an encode.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct VolumeStageTimes {
    /// Level shift and 3-D DWT.
    pub transform: f64,
    /// Quantization and codeblock formation.
    pub quantize: f64,
    /// BPC-PaCo.
    pub entropy: f64,
    /// Rate control and packing.
    pub rate: f64,
    /// The whole encode.
    pub total: f64,
}

/// What an encode did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VolumeEncodeReport {
    /// The backend.
    pub backend: String,
    /// File size.
    pub bytes: usize,
    /// Bits per voxel of the whole file.
    pub bits_per_voxel: f64,
    /// File size through each layer.
    pub layer_bytes: Vec<u64>,
    /// Levels `[x, y, z]`.
    pub levels: [u8; 3],
    /// Codeblocks.
    pub codeblocks: usize,
    /// Stage times.
    pub seconds: VolumeStageTimes,
}

/// A volume file and its report.
#[derive(Debug, Clone)]
pub struct VolumeEncoded {
    /// The file.
    pub bytes: Vec<u8>,
    /// The report.
    pub report: VolumeEncodeReport,
}

/// Encodes `v`.
pub fn encode_volume(
    v: &Volume,
    o: &VolumeOptions,
    backend: &Backend,
) -> Result<VolumeEncoded, VolumeError> {
    let start = Instant::now();
    let mut seconds = VolumeStageTimes::default();
    v.validate()?;
    let header = plan(v, o)?;
    let dims = header.dims_usize();
    let levels = header.levels_u32();
    let t = Instant::now();
    let mut data = v.samples.clone();
    shift_in(
        &mut data,
        v.sample.bits(),
        v.sample.signed(),
        header.fraction_bits,
    );
    let layout = VolumeLayout::new(dims[0], dims[1], dims[2]);
    match header.wavelet {
        Wavelet::Cdf53 => crate::dwt::forward_3d::<Cdf53>(backend, &mut data, layout, levels)?,
        _ => crate::dwt::forward_3d::<Fixed97>(backend, &mut data, layout, levels)?,
    }
    seconds.transform = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let blocks = volume_blocks(dims, levels, header.codeblock_height as usize)
        .map_err(|e| VolumeError::Options(e.to_string()))?;
    quantize(&header, &blocks, &mut data);
    let batch = CodeblockBatch {
        coefficients: data,
        blocks: blocks.iter().map(|b| b.desc(dims[0], dims[1])).collect(),
    };
    seconds.quantize = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let keep_all = o.target == VolumeTarget::Lossless && header.layers == 1;
    let tables = header.tables.probability_tables();
    let (encoded, records) = code(&batch, tables, keep_all, backend)?;
    seconds.entropy = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let passes = rate_points(&header, &blocks, &records);
    let total = passes.iter().filter_map(|p| p.decrease.last()).sum();
    let model = SizeModel {
        fixed_bytes: header.fields_len() as u64 + 4 + 4,
        fixed_index_bits: VolumeHeader::top_bits(&encoded.tops),
        layers: header.layers as usize,
        resolutions: header.resolutions(),
    };
    let hulls = Hulls::new(&passes);
    let control = RateControl {
        hulls: &hulls,
        model,
        total,
    };
    let last = match o.target {
        VolumeTarget::Lossless => LayerTarget::All,
        VolumeTarget::Bpp(bpp) => {
            LayerTarget::Bytes((bpp * v.voxels() as f64 / 8.0).floor() as u64)
        }
    };
    let alloc = control.allocate(backend, last);
    let bytes = pack(&header, &blocks, &encoded, &alloc)?;
    seconds.rate = t.elapsed().as_secs_f64();
    seconds.total = start.elapsed().as_secs_f64();
    let report = VolumeEncodeReport {
        backend: backend.describe(),
        bytes: bytes.len(),
        bits_per_voxel: bytes.len() as f64 * 8.0 / v.voxels() as f64,
        layer_bytes: alloc.bytes.clone(),
        levels: header.levels,
        codeblocks: blocks.len(),
        seconds,
    };
    Ok(VolumeEncoded { bytes, report })
}

/// Dead-zone quantization of every coefficient in place (nothing to do
/// at unit steps: the 5/3 indices are the coefficients), slice by slice
/// in parallel.
fn quantize(header: &VolumeHeader, blocks: &[VolumeBlock], data: &mut [i32]) {
    if header.steps.iter().all(|s| s.q16() == UNIT_STEP) {
        return;
    }
    let [w, h, d] = header.dims_usize();
    let mut by_z: Vec<Vec<u32>> = vec![Vec::new(); d];
    for (i, b) in blocks.iter().enumerate() {
        by_z[b.z].push(i as u32);
    }
    data.par_chunks_mut(w * h)
        .zip(by_z.par_iter())
        .for_each(|(slice, members)| {
            for &i in members {
                let b = &blocks[i as usize].geometry;
                let q16 = header.steps[b.band as usize].q16();
                for y in b.rect.y..b.rect.y + b.rect.height {
                    for v in &mut slice[y * w + b.rect.x..][..b.rect.width] {
                        *v = quantize_i32(*v, q16);
                    }
                }
            }
        });
}

/// BPC-PaCo on every codeblock with the records rate control needs, on
/// the backend, through the image codec's entropy stage
/// ([`entropy::encode_batch`]): a lossless single-layer file keeps every
/// codeword and needs only each block's total; anything rate control
/// truncates or splits into layers needs the pass records, which the GPU
/// coder gives equal to the CPU driver's (`tests/tests/gpu_records.rs`). A
/// batch the device cannot take is coded on the CPU.
fn code(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    keep_all: bool,
    backend: &Backend,
) -> Result<(EncodedBatch, Vec<Vec<PassRecord>>), VolumeError> {
    let needs = match keep_all {
        true => Records::Totals,
        false => Records::Passes,
    };
    let coded = entropy::encode_batch(batch, tables, needs, backend)?;
    Ok((coded.encoded, coded.records))
}

/// Every block's truncation points at its pass ends, the decreases
/// weighted by step², the subband's 3-D synthesis energy and the
/// fractional bits (the image codec's weight, [`crate::codec`]'s
/// `weights`, with the 3-D energy).
fn rate_points(
    header: &VolumeHeader,
    blocks: &[VolumeBlock],
    records: &[Vec<PassRecord>],
) -> Vec<BlockPasses> {
    let levels = header.levels_u32();
    let mut weights: Vec<Option<f64>> = vec![None; header.steps.len()];
    blocks
        .iter()
        .zip(records)
        .map(|(b, records)| {
            let g = &b.geometry;
            let weight = *weights[g.band as usize].get_or_insert_with(|| {
                let step = header.steps[g.band as usize].value();
                let energy = subband_energy_3d(header.wavelet, levels, g.level as u32, b.mask);
                step * step * energy / 4f64.powi(header.fraction_bits as i32)
            });
            let mut acc = 0.0;
            BlockPasses {
                codewords: records.iter().map(|r| r.codewords).collect(),
                decrease: records
                    .iter()
                    .map(|r| {
                        acc += r.distortion_decrease as f64 * weight;
                        acc
                    })
                    .collect(),
                resolution: g.resolution as usize,
            }
        })
        .collect()
}

/// The file: header fields, index, segment CRCs, header CRC, segments.
fn pack(
    header: &VolumeHeader,
    blocks: &[VolumeBlock],
    encoded: &EncodedBatch,
    alloc: &Allocation,
) -> Result<Vec<u8>, VolumeError> {
    let layers = header.layers as usize;
    let mut index = BlockIndex::new(blocks.len(), layers);
    index.tops.clone_from(&encoded.tops);
    index.counts.clone_from(&alloc.counts);
    let packed = index.pack(false)?;
    // Segments, resolution-major then layer, blocks in file order.
    let mut segments: Vec<Vec<u8>> = vec![Vec::new(); header.resolutions() * layers];
    for (i, b) in blocks.iter().enumerate() {
        let words = encoded.block(i).1;
        let mut from = 0usize;
        for l in 0..layers {
            let n = alloc.counts[i * layers + l] as usize;
            let seg = &mut segments[b.geometry.resolution as usize * layers + l];
            for w in &words[from..from + n] {
                seg.extend_from_slice(&w.to_be_bytes());
            }
            from += n;
        }
    }
    let crcs: Vec<u32> = segments
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| crc32fast::hash(s))
        .collect();
    let header_len = header.fields_len() + 4 + packed.len() + 4 * crcs.len() + 4;
    let header_len = u32::try_from(header_len)
        .map_err(|_| crate::codec::FormatError::Unrepresentable("an index over 4 GiB".into()))?;
    let data: usize = segments.iter().map(|s| s.len()).sum();
    let mut out = Vec::with_capacity(header_len as usize + data);
    header.write_fields(&mut out, header_len)?;
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(&packed);
    for c in crcs {
        out.extend_from_slice(&c.to_le_bytes());
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len(), header_len as usize);
    for s in segments {
        out.extend_from_slice(&s);
    }
    Ok(out)
}
