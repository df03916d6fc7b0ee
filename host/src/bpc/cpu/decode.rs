//! The CPU decoder of [`super`]: every codeblock decoded in parallel by
//! [`bpc::decode_phases_rows`] (compiled per CPU level through
//! `fastest!`) straight into the output array, each codeblock's rows
//! handed out as slices of their own (`rows::block_rows`).

use rayon::prelude::*;
use wavelane_core::bpc::{
    self, CodingParams, DecodeLimits, Decoded, LaneMagnitudes, ProbabilityTables, MAX_HEIGHT,
};

mod rows;

use super::{scratch, BigScratch, CoreForm};
use crate::bpc::{BpcError, CodeblockBatch, EncodedBatch};
use rows::block_rows;

/// What a thread reuses from one codeblock to the next while decoding.
struct DecodeScratch {
    state: BigScratch,
    mags: Box<LaneMagnitudes<MAX_HEIGHT>>,
}

impl Default for DecodeScratch {
    fn default() -> Self {
        DecodeScratch {
            state: scratch(),
            mags: Box::new(LaneMagnitudes::new()),
        }
    }
}

thread_local! {
    /// Each thread's [`DecodeScratch`], kept from one batch to the next.
    static DECODE_SCRATCH: std::cell::RefCell<DecodeScratch> = Default::default();
}

crate::fastest! {
    /// [`bpc::decode_phases_rows`], compiled for the CPU (its 32-lane
    /// loops are what the v3/v4 copies vectorize); the sequential form's
    /// one entry, whether the rows lie in the output array or in a
    /// block's own buffer.
    fn decode_phases_rows(
        params: &CodingParams<'_>,
        top: Option<u8>,
        words: &[u16],
        limits: DecodeLimits,
        out: bpc::CodeblockRows<'_, '_>,
        scratch: &mut DecodeScratch,
    ) -> Result<Decoded, bpc::DecodeError> {
        bpc::decode_phases_rows(params, top, words, limits, out, &mut scratch.state, &mut scratch.mags)
    }
}

/// Decodes `encoded` into an array laid out like `like.coefficients` (same
/// length; coefficients outside the codeblocks are 0), keeping at most
/// `max_codewords` codewords of every codeblock (`None`: all).
pub fn decode(
    like: &CodeblockBatch,
    encoded: &EncodedBatch,
    tables: &ProbabilityTables,
    max_codewords: Option<usize>,
    form: CoreForm,
) -> Result<(Vec<i32>, Vec<Decoded>), BpcError> {
    let limits = DecodeLimits::codewords(max_codewords.unwrap_or(usize::MAX));
    decode_with_limits(like, encoded, tables, limits, form)
}

/// [`decode`] with every codeblock decoded within `limits` (codewords and
/// passes; rate control truncates at pass boundaries).
pub fn decode_with_limits(
    like: &CodeblockBatch,
    encoded: &EncodedBatch,
    tables: &ProbabilityTables,
    limits: DecodeLimits,
    form: CoreForm,
) -> Result<(Vec<i32>, Vec<Decoded>), BpcError> {
    encoded.validate()?;
    if encoded.len() != like.len() {
        return Err(BpcError::Mismatch(format!(
            "{} encoded codeblocks for {} codeblock descriptors",
            encoded.len(),
            like.len()
        )));
    }
    like.validate()?;
    let mut out = vec![0i32; like.coefficients.len()];
    if form == CoreForm::Sequential {
        if let Some(rows) = block_rows(like, &mut out) {
            let summaries = rows
                .into_par_iter()
                .enumerate()
                .map(|(i, mut rows)| {
                    let d = like.blocks[i];
                    let block = bpc::CodeblockRows::new(&mut rows)
                        .map_err(|source| BpcError::Geometry { block: i, source })?;
                    let params = CodingParams::new(tables, d.group);
                    let (top, words) = encoded.block(i);
                    DECODE_SCRATCH
                        .with_borrow_mut(|s| {
                            decode_phases_rows(&params, top, words, limits, block, s)
                        })
                        .map_err(|source| BpcError::Decode { block: i, source })
                })
                .collect::<Vec<Result<_, BpcError>>>();
            // The error of the first failing codeblock, whatever the
            // thread timing.
            let summaries = summaries.into_iter().collect::<Result<_, _>>()?;
            return Ok((out, summaries));
        }
    }
    // Codeblocks that overlap in the array (or the lane form): each
    // decodes into its own buffer, copied into the output in block order.
    let decoded: Vec<(Vec<i32>, Decoded)> = (0..like.len())
        .into_par_iter()
        .map(|i| {
            let d = like.blocks[i];
            let mut buf = vec![0i32; d.width * d.height];
            let geometry = |source| BpcError::Geometry { block: i, source };
            let params = CodingParams::new(tables, d.group);
            let (top, words) = encoded.block(i);
            let r = match form {
                CoreForm::Sequential => {
                    let mut rows: Vec<&mut [i32]> = buf.chunks_exact_mut(d.width.max(1)).collect();
                    let out = bpc::CodeblockRows::new(&mut rows).map_err(geometry)?;
                    DECODE_SCRATCH.with_borrow_mut(|s| {
                        decode_phases_rows(&params, top, words, limits, out, s)
                    })
                }
                CoreForm::Lanes => {
                    let out = bpc::CodeblockMut::new(&mut buf, d.width, d.width, d.height)
                        .map_err(geometry)?;
                    DECODE_SCRATCH.with_borrow_mut(|s| {
                        bpc::decode_lanes(&params, top, words, limits, out, &mut s.state, 32)
                    })
                }
            };
            let summary = r.map_err(|source| BpcError::Decode { block: i, source })?;
            Ok((buf, summary))
        })
        .collect::<Vec<Result<_, BpcError>>>()
        .into_iter()
        .collect::<Result<_, _>>()?;
    let mut summaries = Vec::with_capacity(decoded.len());
    for (i, (buf, summary)) in decoded.into_iter().enumerate() {
        let mut dst = like.block_mut(i, &mut out)?;
        let w = dst.width();
        for (y, row) in buf.chunks_exact(w).enumerate() {
            dst.row_mut(y).copy_from_slice(row);
        }
        summaries.push(summary);
    }
    Ok((out, summaries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpc::BlockDesc;

    /// A block descriptor of group 0 (the row hand-out's tests use it too).
    pub(super) fn desc(offset: usize, stride: usize, width: usize, height: usize) -> BlockDesc {
        BlockDesc {
            offset,
            stride,
            width,
            height,
            group: 0,
        }
    }

    /// Overlapping blocks decode through each block's own buffer: the
    /// sequential form there gives what the lane form gives, and the
    /// later block's coefficients where they overlap.
    #[test]
    fn overlapping_blocks_decode_alike_in_both_forms() {
        use crate::bpc::cpu::encode;
        use wavelane_core::bpc::Mode;
        // Two 8x4 blocks of a 12-wide array, overlapping in 4 columns.
        let coefficients: Vec<i32> = (0..48).map(|i| (i * 37 % 29) - 14).collect();
        let batch = CodeblockBatch {
            coefficients,
            blocks: vec![desc(0, 12, 8, 4), desc(4, 12, 8, 4)],
        };
        let tables = ProbabilityTables::natural_lossless(Mode::ThreePass);
        let encoded = encode(&batch, tables, CoreForm::Sequential).unwrap();
        let (seq, _) = decode(&batch, &encoded, tables, None, CoreForm::Sequential).unwrap();
        let (lanes, _) = decode(&batch, &encoded, tables, None, CoreForm::Lanes).unwrap();
        assert_eq!(seq, lanes);
        assert_eq!(seq, batch.coefficients, "every coefficient lies in a block");
    }
}
