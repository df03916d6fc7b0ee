//! Stage: BPC-PaCo decoding of the codeblocks of a file's selection on
//! the chosen backend, into index planes where the next stage reads them
//! (the host's index array, or on the GPU backend the device planes
//! dequantization reads in place, [`super::resident`]). Blocks with
//! bitplanes dropped decode with shifted tables ([`super::shifts`]).

use wavelane_core::bpc::{Decoded, ProbabilityTables};

use super::shifts::{by_shift, shifted_tables};
use crate::backend::Backend;
use crate::bpc::{cpu, BlockDesc, CodeblockBatch, EncodedBatch};
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::Resident;

/// Decodes one batch coded with `tables` on `backend` (the GPU driver
/// gives the same result as the CPU one).
fn decode_batch(
    like: &CodeblockBatch,
    encoded: &EncodedBatch,
    tables: &ProbabilityTables,
    backend: &Backend,
) -> Result<(Vec<i32>, Vec<Decoded>), CodecError> {
    Ok(match backend {
        Backend::Cpu => cpu::decode(like, encoded, tables, None, cpu::CoreForm::Sequential)?,
        #[cfg(feature = "gpu")]
        Backend::Gpu(g) => {
            let (values, decoded, _) = crate::bpc::gpu::decode(
                g,
                like,
                encoded,
                tables,
                wavelane_core::bpc::DecodeLimits::ALL,
            )?;
            (values, decoded)
        }
    })
}

/// Decodes `encoded`, the blocks `blocks` of an image decoded at `width x
/// height`, block `i` with the tables shifted by `shifts[i]`, into index
/// planes: on the GPU backend, where the decoder's back end runs on the
/// device ([`super::device::decodes`]), into device planes that
/// dequantization reads in place ([`super::resident::decode`]); otherwise
/// into the host's index array.
pub(crate) fn decode(
    header: &Header,
    blocks: &[crate::codec::codeblocks::BlockGeometry],
    (width, height): (usize, usize),
    encoded: &EncodedBatch,
    shifts: &[u8],
    backend: &Backend,
) -> Result<(Resident<Vec<i32>>, Vec<Decoded>), CodecError> {
    let comps = header.components as usize;
    #[cfg(feature = "gpu")]
    if let Backend::Gpu(gpu) = backend {
        use super::{device, resident};
        if device::decodes(gpu, header, width, height)
            && resident::bindable(gpu, width * height, comps)
        {
            let (planes, decoded) =
                resident::decode(gpu, header, blocks, (width, height), encoded, shifts)?;
            return Ok((Resident::Device(planes), decoded));
        }
    }
    let like = super::codeblocks::zeros_like(blocks, width, height, comps);
    let (indices, decoded) = decode_host(header, &like, encoded, shifts, backend)?;
    Ok((Resident::Host(indices), decoded))
}

/// Decodes `encoded` into an array laid out like `like`, block `i` with
/// the tables shifted by `shifts[i]`.
fn decode_host(
    header: &Header,
    like: &CodeblockBatch,
    encoded: &EncodedBatch,
    shifts: &[u8],
    backend: &Backend,
) -> Result<(Vec<i32>, Vec<Decoded>), CodecError> {
    let tables = header.tables.probability_tables();
    let groups = by_shift(shifts);
    if groups.len() <= 1 {
        let shift = groups.first().map_or(0, |g| g.0);
        let t = if shift == 0 {
            tables.clone()
        } else {
            shifted_tables(tables, shift)
        };
        return decode_batch(like, encoded, &t, backend);
    }
    let mut out = vec![0i32; like.coefficients.len()];
    let mut summaries: Vec<Option<Decoded>> = vec![None; like.blocks.len()];
    for (shift, members) in groups {
        // Compact layout per group: its blocks back to back.
        let mut descs = Vec::with_capacity(members.len());
        let mut len = 0;
        for &i in &members {
            let d = like.blocks[i];
            descs.push(BlockDesc {
                offset: len,
                stride: d.width,
                ..d
            });
            len += d.width * d.height;
        }
        let sub_like = CodeblockBatch {
            coefficients: vec![0; len],
            blocks: descs,
        };
        let mut sub = EncodedBatch {
            tops: Vec::new(),
            offsets: vec![0],
            codewords: Vec::new(),
        };
        for &i in &members {
            let (top, words) = encoded.block(i);
            sub.tops.push(top);
            sub.codewords.extend_from_slice(words);
            sub.offsets.push(sub.codewords.len());
        }
        let (values, decoded) =
            decode_batch(&sub_like, &sub, &shifted_tables(tables, shift), backend)?;
        for (k, &i) in members.iter().enumerate() {
            let (src, dst) = (sub_like.blocks[k], like.blocks[i]);
            for y in 0..dst.height {
                out[dst.offset + y * dst.stride..][..dst.width]
                    .copy_from_slice(&values[src.offset + y * src.stride..][..src.width]);
            }
            summaries[i] = Some(decoded[k]);
        }
    }
    Ok((
        out,
        summaries
            .into_iter()
            .map(|s| s.expect("every block is in one shift group"))
            .collect(),
    ))
}
