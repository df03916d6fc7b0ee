//! The codeblocks where they lie on the device: the entropy stage's view
//! of the resident index planes ([`DevicePlanes`]), so that the GPU coder
//! reads the quantizer's output in place and the GPU decoder writes the
//! indices where dequantization reads them (docs/codec.md, "Backends").
//!
//! A codeblock of the device planes is a [`BlockDesc`] whose offset counts
//! from the start of the planes' buffer: plane `c` starts at
//! `c * DevicePlanes::stride()` (each plane's start padded, see
//! [`DevicePlanes`]), where the host's index array has it at `c * len`.
//! The coder binds the whole buffer, so the route needs it within one
//! storage binding ([`bindable`]); where it is not, the planes come down
//! and the stages run as on a host batch.

use std::sync::Arc;

use wavelane_core::bpc::{DecodeLimits, Decoded};

use super::device::gpu_err;
use super::shifts::{by_shift, shifted_tables};
use crate::backend::Gpu;
use crate::bpc::{BlockDesc, BpcError, EncodedBatch};
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::DevicePlanes;

/// The codeblocks of index planes on the device: the planes and one
/// descriptor per block into their buffer.
pub(crate) struct DeviceBlocks {
    /// The index planes.
    pub planes: DevicePlanes,
    /// Every block, in the order of the codec's block list.
    pub blocks: Vec<BlockDesc>,
}

impl DeviceBlocks {
    /// The blocks of `blocks` over `planes` of `width` columns.
    pub fn new(planes: DevicePlanes, blocks: &[BlockGeometry], width: usize) -> Self {
        let blocks = descriptors(blocks, planes.len, width);
        DeviceBlocks { planes, blocks }
    }
}

/// Whether `comps` planes of `len` samples bind as one storage buffer (the
/// coders bind the whole buffer and address the blocks by offset).
pub(crate) fn bindable(gpu: &Gpu, len: usize, comps: usize) -> bool {
    let bytes = (DevicePlanes::stride_of(len) * comps) as u64 * 4;
    bytes <= gpu.info().max_storage_buffer_range as u64
}

/// Descriptors of `blocks` in device planes of `len` samples and `width`
/// columns.
fn descriptors(blocks: &[BlockGeometry], len: usize, width: usize) -> Vec<BlockDesc> {
    let stride = DevicePlanes::stride_of(len);
    blocks
        .iter()
        .map(|b| BlockDesc {
            offset: b.component as usize * stride + b.rect.y * width + b.rect.x,
            stride: width,
            width: b.rect.width,
            height: b.rect.height,
            group: b.group(),
        })
        .collect()
}

/// Decodes `encoded` (the blocks `blocks` of an image decoded at `width x
/// height`, block `i` with the tables shifted by `shifts[i]`) into index
/// planes on the device, where dequantization reads them: nothing
/// plane-sized crosses the bus. The caller checked [`bindable`].
pub(crate) fn decode(
    gpu: &Arc<Gpu>,
    header: &Header,
    blocks: &[BlockGeometry],
    (width, height): (usize, usize),
    encoded: &EncodedBatch,
    shifts: &[u8],
) -> Result<(DevicePlanes, Vec<Decoded>), CodecError> {
    if encoded.len() != blocks.len() || shifts.len() != blocks.len() {
        return Err(CodecError::Bpc(BpcError::Mismatch(format!(
            "{} coded blocks and {} shifts for {} codeblocks",
            encoded.len(),
            shifts.len(),
            blocks.len()
        ))));
    }
    let len = width * height;
    let comps = header.components as usize;
    let planes = DevicePlanes {
        gpu: gpu.clone(),
        // Zeroed: a block the selection leaves out decodes to zeros, and
        // no later stage reads an undefined value.
        buffer: gpu
            .zeroed::<i32>((DevicePlanes::stride_of(len) * comps) as u64)
            .map_err(gpu_err)?,
        len,
        comps,
        gain: None,
    };
    let descs = descriptors(blocks, len, width);
    let tables = header.tables.probability_tables();
    let groups = by_shift(shifts);
    if groups.len() <= 1 {
        let shift = groups.first().map_or(0, |g| g.0);
        let t = if shift == 0 {
            tables.clone()
        } else {
            shifted_tables(tables, shift)
        };
        let (decoded, _) = crate::bpc::gpu::decode_into(
            gpu,
            &planes.buffer,
            &descs,
            encoded,
            &t,
            DecodeLimits::ALL,
        )?;
        return Ok((planes, decoded));
    }
    encoded.validate()?;
    let mut summaries: Vec<Option<Decoded>> = vec![None; descs.len()];
    for (shift, members) in groups {
        // Each group's blocks decode straight into their place in the
        // planes (blocks do not overlap), with its own tables.
        let mut sub = EncodedBatch {
            tops: Vec::with_capacity(members.len()),
            offsets: vec![0],
            codewords: Vec::new(),
        };
        let mut sub_descs = Vec::with_capacity(members.len());
        for &i in &members {
            let (top, words) = encoded.block(i);
            sub.tops.push(top);
            sub.codewords.extend_from_slice(words);
            sub.offsets.push(sub.codewords.len());
            sub_descs.push(descs[i]);
        }
        let (decoded, _) = crate::bpc::gpu::decode_into(
            gpu,
            &planes.buffer,
            &sub_descs,
            &sub,
            &shifted_tables(tables, shift),
            DecodeLimits::ALL,
        )?;
        for (k, &i) in members.iter().enumerate() {
            summaries[i] = Some(decoded[k]);
        }
    }
    let summaries = summaries
        .into_iter()
        .map(|s| s.expect("every block is in one shift group"))
        .collect();
    Ok((planes, summaries))
}
