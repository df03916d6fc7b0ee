//! Stage: BPC-PaCo coding of every codeblock of a [`CodeblockBatch`] on
//! the chosen backend ([`crate::bpc`]'s CPU and GPU drivers), with the
//! records rate control needs ([`Records`]).
//!
//! Blocks whose lowest `s` bitplanes were dropped (early termination) are
//! coded with the tables shifted down by `s` rows, so that every bitplane
//! keeps the probabilities of its true bitplane number: the stream of such
//! a block is then the stream of the unshifted block cut after bitplane
//! `s` (up to the final flush of the lanes' open codewords;
//! [`super::shifts`]). The decoding direction is
//! [`super::entropy_decode`].

use rayon::prelude::*;
use wavelane_core::bpc::{PassRecord, ProbabilityTables};

pub(crate) use super::entropy_decode::decode;
use super::shifts::{by_shift, shifted_tables};
use crate::backend::Backend;
use crate::bpc::cuts::CutCandidates;
use crate::bpc::{cpu, BpcError, CodeblockBatch, EncodedBatch};
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::stages::codeblocks::Formed;

/// What rate control needs of the coded blocks besides their codewords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Records {
    /// Each block's codeword total only, as one record (a lossless
    /// single-layer file, which keeps everything): the GPU codes it with
    /// the plain encoder builds, which report no pass ends.
    Totals,
    /// The pass records' codeword counts, not their distortion decreases
    /// (0): allocations that keep every pass, or only count bytes.
    PassEnds,
    /// The pass records.
    Passes,
    /// The pass records and the candidate cuts among all codeword counts
    /// (rate control that truncates anywhere; [`crate::bpc::cuts`]).
    Cuts,
}

/// Where a coding's codewords are.
pub(crate) enum Words {
    /// In the [`Coded::encoded`] batch.
    Host,
    /// Left on the device: the batch has the tops and offsets only, and
    /// packing gathers the kept prefixes there ([`super::pack`]).
    #[cfg(feature = "gpu")]
    Device(crate::bpc::gpu::DeviceWords),
}

/// Every codeblock's codewords and pass records.
pub(crate) struct Coded {
    /// Tops and offsets, and the codewords where `words` is
    /// [`Words::Host`].
    pub encoded: EncodedBatch,
    /// Where the codewords are.
    pub words: Words,
    /// Per-pass records of each block.
    pub records: Vec<Vec<PassRecord>>,
    /// Each block's candidate cuts (empty unless asked for).
    pub cuts: Vec<CutCandidates>,
}

/// Codes every block of a host batch with the records `needs` asks for,
/// on `backend` (the one entry for every codec that codes host batches:
/// images, and the volume encoder).
pub(crate) fn encode_batch(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    needs: Records,
    backend: &Backend,
) -> Result<Coded, BpcError> {
    // The GPU codes every kind of records (bpc::gpu::records; the same
    // codewords and records as the CPU, tests/tests/gpu_records.rs). A
    // batch the device cannot take (a buffer over one storage binding, no
    // 64-bit integers in shaders) is coded on the CPU instead.
    #[cfg(feature = "gpu")]
    if let Backend::Gpu(gpu) = backend {
        let source = crate::bpc::gpu::Source::Host(batch);
        if let Some(coded) = gpu_encode(gpu, source, tables, needs, false)? {
            return Ok(coded);
        }
    }
    #[cfg(not(feature = "gpu"))]
    let _ = backend;
    cpu_encode_batch(batch, tables, needs)
}

/// The GPU driver's coding of `source`, or `None` where the device cannot
/// take it (logged at debug level; the caller codes on the CPU). With
/// `keep_words`, a coding with cuts leaves its codewords on the device.
#[cfg(feature = "gpu")]
fn gpu_encode(
    gpu: &crate::backend::gpu::Gpu,
    source: crate::bpc::gpu::Source<'_>,
    tables: &ProbabilityTables,
    needs: Records,
    keep_words: bool,
) -> Result<Option<Coded>, BpcError> {
    use crate::backend::gpu::GpuError;
    match gpu_encode_batch(gpu, source, tables, needs, keep_words) {
        Ok(coded) => Ok(Some(coded)),
        Err(BpcError::Gpu(GpuError::Limit(why))) => {
            log::debug!(
                "coding {} codeblocks ({:?} records) on the CPU: {why}",
                source.len(),
                needs
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The GPU driver's coding of one batch, with the records `needs` asks for.
#[cfg(feature = "gpu")]
fn gpu_encode_batch(
    gpu: &crate::backend::gpu::Gpu,
    source: crate::bpc::gpu::Source<'_>,
    tables: &ProbabilityTables,
    needs: Records,
    keep_words: bool,
) -> Result<Coded, crate::bpc::BpcError> {
    use crate::bpc::gpu::{self, RecordsAsked};
    let mut words = Words::Host;
    let (encoded, records, cuts) = match needs {
        Records::Cuts => {
            let (encoded, (records, cuts), device_words, _) =
                gpu::encode_with(gpu, source, tables, RecordsAsked::Cuts, keep_words)?;
            if let Some(w) = device_words {
                words = Words::Device(w);
            }
            (encoded, records, cuts)
        }
        Records::Passes | Records::PassEnds => {
            let (encoded, (mut records, _), _, _) =
                gpu::encode_with(gpu, source, tables, RecordsAsked::Passes, false)?;
            if needs == Records::PassEnds {
                // What the CPU driver reports for pass ends (it skips the
                // decreases; the GPU's records build has them anyway).
                records
                    .iter_mut()
                    .flatten()
                    .for_each(|r| r.distortion_decrease = 0);
            }
            (encoded, records, Vec::new())
        }
        Records::Totals => {
            let (encoded, _, _) = gpu::encode_on_device(gpu, source, tables, RecordsAsked::No)?;
            let records = totals(&encoded);
            (encoded, records, Vec::new())
        }
    };
    Ok(Coded {
        encoded,
        words,
        records,
        cuts,
    })
}

/// The CPU driver's coding of one batch, with the records `needs` asks for.
fn cpu_encode_batch(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    needs: Records,
) -> Result<Coded, BpcError> {
    let (encoded, records, cuts) = match needs {
        Records::Cuts => {
            let (encoded, (records, cuts)) = cpu::encode_with_cuts(batch, tables)?;
            (encoded, records, cuts)
        }
        Records::Passes => {
            let (encoded, records) =
                cpu::encode_with_records(batch, tables, cpu::CoreForm::Sequential)?;
            (encoded, records, Vec::new())
        }
        Records::PassEnds => {
            let (encoded, records) = cpu::encode_with_pass_ends(batch, tables)?;
            (encoded, records, Vec::new())
        }
        Records::Totals => {
            let encoded = cpu::encode(batch, tables, cpu::CoreForm::Sequential)?;
            let records = totals(&encoded);
            (encoded, records, Vec::new())
        }
    };
    Ok(Coded {
        encoded,
        words: Words::Host,
        records,
        cuts,
    })
}

/// One record per coded block holding its codeword total (what keeping
/// every pass needs of the pass records: `allocate` takes each block's last
/// count), none for a block with nothing to code, as the pass records of
/// such a block are empty.
pub(crate) fn totals(encoded: &EncodedBatch) -> Vec<Vec<PassRecord>> {
    // On all cores: one small vector for each of tens of thousands of
    // blocks (an 8K lossless image has 24,669).
    (0..encoded.tops.len())
        .into_par_iter()
        .map(|i| match encoded.tops[i] {
            Some(_) => vec![PassRecord {
                codewords: (encoded.offsets[i + 1] - encoded.offsets[i]) as u32,
                ..PassRecord::EMPTY
            }],
            None => Vec::new(),
        })
        .collect()
}

/// Codes every block of `formed` with the records rate control `needs`;
/// block `i` with the tables shifted by `shifts[i]`. On the GPU backend
/// the coder reads index planes on the device in place (the blocks of one
/// shift: early termination's shifts are applied to the host's indices);
/// otherwise it codes the host batch.
pub(crate) fn encode(
    header: &Header,
    formed: &mut Formed,
    shifts: &[u8],
    needs: Records,
    backend: &Backend,
) -> Result<Coded, CodecError> {
    #[cfg(feature = "gpu")]
    if let (Backend::Gpu(gpu), Some(device)) = (backend, formed.device()) {
        let tables = header.tables.probability_tables();
        if shifts.iter().all(|&s| s == 0) {
            let source = crate::bpc::gpu::Source::Device {
                coefficients: &device.planes.buffer,
                blocks: &device.blocks,
            };
            // Rate control keeps a prefix of each block's codewords:
            // packing gathers those on the device.
            if let Some(coded) = gpu_encode(gpu, source, tables, needs, true)? {
                return Ok(coded);
            }
        }
    }
    encode_host(header, formed.host()?, shifts, needs, backend)
}

/// [`encode`] of a host batch.
pub(crate) fn encode_host(
    header: &Header,
    batch: &mut CodeblockBatch,
    shifts: &[u8],
    needs: Records,
    backend: &Backend,
) -> Result<Coded, CodecError> {
    let tables = header.tables.probability_tables();
    let groups = by_shift(shifts);
    if groups.len() <= 1 {
        let shift = groups.first().map_or(0, |g| g.0);
        let t = if shift == 0 {
            tables.clone()
        } else {
            shifted_tables(tables, shift)
        };
        return Ok(encode_batch(batch, &t, needs, backend)?);
    }
    let n = batch.blocks.len();
    // Each block's top bitplane, codewords, pass records and candidate cuts.
    type Part = (Option<u8>, Vec<u16>, Vec<PassRecord>, CutCandidates);
    let mut parts: Vec<Option<Part>> = vec![None; n];
    for (shift, members) in groups {
        // The sub-batch borrows the index array by moving it in and back.
        let sub = CodeblockBatch {
            coefficients: std::mem::take(&mut batch.coefficients),
            blocks: members.iter().map(|&i| batch.blocks[i]).collect(),
        };
        let result = encode_batch(&sub, &shifted_tables(tables, shift), needs, backend);
        batch.coefficients = sub.coefficients;
        let mut sub_coded = result?;
        for (k, &i) in members.iter().enumerate() {
            let (top, words) = sub_coded.encoded.block(k);
            let words = words.to_vec();
            let records = std::mem::take(&mut sub_coded.records[k]);
            let cut = sub_coded.cuts.get_mut(k).map(std::mem::take);
            parts[i] = Some((top, words, records, cut.unwrap_or_default()));
        }
    }
    let mut coded = Coded {
        encoded: EncodedBatch {
            tops: Vec::with_capacity(n),
            offsets: vec![0],
            codewords: Vec::new(),
        },
        words: Words::Host,
        records: Vec::with_capacity(n),
        cuts: Vec::with_capacity(if needs == Records::Cuts { n } else { 0 }),
    };
    for part in parts {
        let (top, words, records, block_cuts) = part.expect("every block is in one shift group");
        coded.encoded.tops.push(top);
        coded.encoded.codewords.extend_from_slice(&words);
        coded.encoded.offsets.push(coded.encoded.codewords.len());
        coded.records.push(records);
        if needs == Records::Cuts {
            coded.cuts.push(block_cuts);
        }
    }
    Ok(coded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpc::BlockDesc;
    use wavelane_core::bpc::Mode;

    /// What `allocate` reads of a lossless single-layer file's records (is
    /// the list empty, and its last count) is the same in `totals` as in the
    /// pass ends the CPU coder reports.
    #[test]
    fn totals_keep_what_the_pass_ends_say() {
        let (w, h) = (200, 150);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Zero, sparse and dense regions, so some blocks code nothing.
        let coefficients: Vec<i32> = (0..w * h)
            .map(|i| match (i % w) / 64 {
                0 => 0,
                1 if next() % 16 != 0 => 0,
                _ => (next() % 2001) as i32 - 1000,
            })
            .collect();
        let mut blocks = Vec::new();
        for y in (0..h).step_by(64) {
            for x in (0..w).step_by(64) {
                blocks.push(BlockDesc {
                    offset: y * w + x,
                    stride: w,
                    width: 64.min(w - x),
                    height: 64.min(h - y),
                    group: blocks.len() % wavelane_core::bpc::GROUPS,
                });
            }
        }
        let batch = CodeblockBatch {
            coefficients,
            blocks,
        };
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let tables = ProbabilityTables::natural_lossless(mode);
            let (encoded, ends) = cpu::encode_with_pass_ends(&batch, tables).unwrap();
            let got = totals(&encoded);
            assert_eq!(got.len(), ends.len());
            assert!(ends.iter().any(|r| r.is_empty()) && ends.iter().any(|r| !r.is_empty()));
            for (i, (t, e)) in got.iter().zip(&ends).enumerate() {
                // The report counts a lossless file's passes from the tops.
                let top = encoded.tops[i];
                assert_eq!(e.len(), wavelane_core::bpc::pass_count(mode, top));
                assert_eq!(t.is_empty(), e.is_empty());
                assert_eq!(t.last().map(|r| r.codewords), e.last().map(|r| r.codewords));
            }
        }
    }
}
