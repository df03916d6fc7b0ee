//! The rate-control records of the GPU encoder: every codeblock's pass
//! records and cut decreases, equal to the CPU driver's
//! ([`crate::bpc::cpu::encode_with_records`],
//! [`crate::bpc::cpu::encode_with_cuts`]), from the records build of the
//! encoder (`bpc_encode_records`, `shaders/bpc/records.glsl`).
//!
//! # Device layout
//!
//! The encoding leaves these buffers on the device, besides the packed
//! codewords and the codeword offsets (the scan of the counts):
//! - **pass records**: codeblock after codeblock, `pass_count(mode, top)`
//!   entries each, codeblock `b`'s from `starts[b]` on (the host sizes the
//!   runs from the top bitplanes that the first submission measured, and
//!   uploads the starts). One entry is four `u32`: `kind | bitplane << 8`
//!   (kind 0 SPP, 1 MRP, 2 CP), the codewords needed to decode through the
//!   pass, and the pass's distortion decrease as an `i64` (low word, then
//!   high word; index units, as [`PassRecord::distortion_decrease`]). 16
//!   bytes per pass.
//! - **cut decreases** (records with cuts only): one `i64` per codeword,
//!   parallel to the packed stream: the entry at codeblock `b`'s codeword
//!   offset plus `m` is the decrease of `b`'s stream cut after `m`
//!   codewords. They stay on the device: `bpc_cut_hull` and
//!   `bpc_cut_compact` pick the candidate cuts ([`crate::bpc::cuts`])
//!   and gather them into a list (each a `u32` cut and an `i64`
//!   decrease) with each codeblock's start in it.
//!
//! Rate control runs on the host, so [`encode_with_records`] and
//! [`encode_with_cuts`] download the records and the candidates
//! (docs/codec.md, "Backends", gives the sizes).
//!
//! # Exactness
//!
//! The device sums the decreases in 64-bit integers; they are exact for a
//! codeblock whose energy bound `width * height * (2^(top+1) - 1)^2` is
//! below 2^63 ([`records_fit`]; the derivation is in
//! `shaders/bpc/records.glsl`). Other codeblocks (top bitplane 24 and up
//! in a 64x256 block) keep the GPU's codewords and get their records from
//! the CPU driver: a typed fallback, logged at debug level, never a
//! wrapped sum.

use std::borrow::Cow;

use rayon::prelude::*;

use wavelane_core::bpc::{pass_count, Mode, PassKind, PassRecord, PassSchedule, ProbabilityTables};

use super::encode::DeviceCuts;
use super::{encode_keeping, DeviceRecords, DeviceWords, GpuTiming, RecordsAsked, Source};
use crate::backend::gpu::{Gpu, GpuError};
use crate::bpc::cpu;
use crate::bpc::cuts::CutCandidates;
use crate::bpc::{BpcError, CodeblockBatch, EncodedBatch};

/// Whether the device's 64-bit sums are exact for a codeblock of
/// `width x height` with top bitplane `top`: its energy bound
/// `width * height * (2^(top+1) - 1)^2` is below 2^63. (An empty codeblock
/// has no records.)
pub fn records_fit(width: usize, height: usize, top: Option<u8>) -> bool {
    let Some(top) = top else { return true };
    let peak = (1u128 << (top as u32 + 1)) - 1;
    (width as u128) * (height as u128) * peak * peak < 1u128 << 63
}

/// Why `gpu` cannot write the records, if it cannot: the records build
/// needs 64-bit integers in shaders, and subgroups of at least 4 lanes
/// (`shaders/bpc/records.glsl` combines at most 8 subgroups per team).
pub fn records_unsupported(gpu: &Gpu) -> Option<String> {
    if !gpu.device().enabled_features().shader_int64 {
        return Some("the device has no 64-bit integers in shaders (shaderInt64)".into());
    }
    let lanes = gpu.info().subgroup_size;
    if lanes < 4 {
        return Some(format!(
            "the device's subgroups have {lanes} lanes; the records need at least 4"
        ));
    }
    None
}

/// [`super::encode`] plus the per-pass records of every codeblock: the
/// same result as [`cpu::encode_with_records`].
pub fn encode_with_records(
    gpu: &Gpu,
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<(EncodedBatch, Vec<Vec<PassRecord>>, GpuTiming), BpcError> {
    let (encoded, (records, _), _, timing) = encode_with(
        gpu,
        Source::Host(batch),
        tables,
        RecordsAsked::Passes,
        false,
    )?;
    Ok((encoded, records, timing))
}

/// [`encode_with_records`] plus every codeblock's [`CutCandidates`]: the
/// same result as [`cpu::encode_with_cuts`].
pub fn encode_with_cuts(
    gpu: &Gpu,
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<(EncodedBatch, Details, GpuTiming), BpcError> {
    encode_with(gpu, Source::Host(batch), tables, RecordsAsked::Cuts, false)
        .map(|(e, details, _, timing)| (e, details, timing))
}

/// Every codeblock's pass records and [`CutCandidates`] (the cuts empty
/// unless asked for).
pub type Details = (Vec<Vec<PassRecord>>, Vec<CutCandidates>);

/// The codewords of every codeblock of `source` with the records `asked`
/// (the cuts empty unless asked for); a codeblock whose 64-bit sums could
/// overflow gets its records from the CPU driver, which reads its
/// coefficients on the host (from a device `source` that is a download of
/// the whole buffer: a block with top bitplane 24 or more, which only
/// 16-bit images with small steps reach). With `keep_words` the codewords
/// stay on the device ([`super::encode_keeping`]).
pub(crate) fn encode_with(
    gpu: &Gpu,
    source: Source<'_>,
    tables: &ProbabilityTables,
    asked: RecordsAsked,
    keep_words: bool,
) -> Result<(EncodedBatch, Details, Option<DeviceWords>, GpuTiming), BpcError> {
    if let Some(why) = records_unsupported(gpu) {
        return Err(BpcError::Gpu(GpuError::Limit(why)));
    }
    let (encoded, device, words, timing) = encode_keeping(gpu, source, tables, asked, keep_words)?;
    let Some(device) = device else {
        // An empty batch.
        return Ok((encoded, (Vec::new(), Vec::new()), words, timing));
    };
    let mut details = download(gpu, &device, &encoded, tables.mode())?;
    let with_cuts = asked == RecordsAsked::Cuts;
    if !with_cuts {
        details.1.clear();
    }
    // Codeblocks whose sums could exceed 64 bits: their records from the CPU.
    let blocks = source.blocks();
    let over: Vec<usize> = (0..blocks.len())
        .filter(|&i| {
            let d = blocks[i];
            !records_fit(d.width, d.height, encoded.tops[i])
        })
        .collect();
    if !over.is_empty() {
        log::debug!(
            "{} of {} codeblocks could exceed the GPU's 64-bit distortion sums; their records come from the CPU",
            over.len(),
            blocks.len()
        );
        let downloaded;
        let batch = match source {
            Source::Host(batch) => batch,
            Source::Device {
                coefficients,
                blocks,
            } => {
                downloaded = CodeblockBatch {
                    coefficients: gpu.download(coefficients)?,
                    blocks: blocks.to_vec(),
                };
                &downloaded
            }
        };
        let redone = cpu::block_details(batch, tables, &over, with_cuts)?;
        // The GPU's codewords, to check the CPU's against (downloaded
        // where they stayed on the device).
        let host_words = match &words {
            None => Cow::Borrowed(&encoded),
            Some(w) => Cow::Owned(EncodedBatch {
                codewords: gpu.download(&w.packed)?,
                ..encoded.clone()
            }),
        };
        for (&i, (top, block_words, records, cuts)) in over.iter().zip(redone) {
            let (gpu_top, gpu_words) = (host_words.tops[i], &host_words.codewords);
            let range = host_words.offsets[i]..host_words.offsets[i + 1];
            if top != gpu_top || gpu_words.get(range) != Some(block_words.as_slice()) {
                return Err(BpcError::Mismatch(format!(
                    "codeblock {i}: the CPU and GPU encoders disagree"
                )));
            }
            details.0[i] = records;
            if with_cuts {
                details.1[i] = cuts;
            }
        }
    }
    Ok((encoded, details, words, timing))
}

/// The records (and cuts, where the device wrote them) of every codeblock.
fn download(
    gpu: &Gpu,
    device: &DeviceRecords,
    encoded: &EncodedBatch,
    mode: Mode,
) -> Result<Details, BpcError> {
    let words = gpu.download(&device.records)?;
    // Block by block on all cores (tens of thousands of blocks a frame).
    let records = (encoded.tops.par_iter().enumerate())
        .map(|(b, &top)| {
            let passes = pass_count(mode, top);
            let first = device.starts[b] as usize;
            if device.starts[b + 1] as usize - first != passes {
                return Err(BpcError::Mismatch(format!(
                    "codeblock {b}'s top bitplane changed while it was coded"
                )));
            }
            let mut block = Vec::with_capacity(passes);
            for (i, expected) in top
                .map(|t| PassSchedule::new(mode, Some(t)))
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = 4 * (first + i);
                let w = words.get(at..at + 4).ok_or_else(|| {
                    BpcError::Mismatch(format!("no room for codeblock {b}'s records"))
                })?;
                let kind = match w[0] & 0xFF {
                    0 => PassKind::Significance,
                    1 => PassKind::Refinement,
                    _ => PassKind::Cleanup,
                };
                if (kind, (w[0] >> 8) as u8) != expected {
                    return Err(BpcError::Mismatch(format!(
                        "the GPU encoder's record {i} of codeblock {b} is not pass {expected:?}"
                    )));
                }
                block.push(PassRecord {
                    kind,
                    bitplane: expected.1,
                    codewords: w[1],
                    distortion_decrease: (w[2] as u64 | (w[3] as u64) << 32) as i64 as i128,
                });
            }
            Ok(block)
        })
        .collect::<Result<Vec<_>, BpcError>>()?;
    let cuts = match &device.cuts {
        Some(c) => download_candidates(gpu, c, encoded)?,
        None => Vec::new(),
    };
    Ok((records, cuts))
}

/// Every codeblock's candidate cuts from the device's list, checked: each
/// codeblock's run within the list, its cuts increasing and inside its
/// stream.
fn download_candidates(
    gpu: &Gpu,
    device: &DeviceCuts,
    encoded: &EncodedBatch,
) -> Result<Vec<CutCandidates>, BpcError> {
    let total = gpu.download(&device.total)?[0] as usize;
    let starts = gpu.download(&device.starts)?;
    let (slots, decreases) = if total == 0 {
        (Vec::new(), Vec::new())
    } else if total as u64 > device.slots.len() {
        return Err(BpcError::Mismatch(format!(
            "the GPU encoder reported {total} candidate cuts for room for {}",
            device.slots.len()
        )));
    } else {
        (
            gpu.download(&device.slots.clone().slice(0..total as u64))?,
            gpu.download(&device.decreases.clone().slice(0..total as u64))?,
        )
    };
    let n = encoded.len();
    (0..n)
        .into_par_iter()
        .map(|b| {
            let start = starts.get(b).map_or(total, |&s| s as usize);
            let end = starts.get(b + 1).map_or(total, |&s| s as usize);
            let codewords = encoded.offsets[b + 1] - encoded.offsets[b];
            let bad = |why: &str| {
                BpcError::Mismatch(format!(
                    "codeblock {b}'s candidate cuts from the GPU: {why}"
                ))
            };
            if start > end || end > total {
                return Err(bad("their run lies outside the list"));
            }
            let block = &slots[start..end];
            let increasing = block.windows(2).all(|w| w[0] < w[1]);
            if !increasing || block.iter().any(|&m| m == 0 || m as usize >= codewords) {
                return Err(bad("a cut out of order or outside the stream"));
            }
            Ok(CutCandidates {
                slots: block.to_vec(),
                decreases: decreases[start..end].iter().map(|&d| d as i128).collect(),
            })
        })
        .collect()
}
