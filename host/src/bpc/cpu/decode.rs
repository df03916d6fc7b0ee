//! The CPU decoder of [`super`]: every codeblock decoded in parallel by
//! [`bpc::decode_phases_rows`] (compiled per CPU level through
//! `fastest!`) straight into the output array, each codeblock's rows
//! handed out as slices of their own ([`block_rows`]).

use rayon::prelude::*;
use wavelane_core::bpc::{
    self, CodingParams, DecodeLimits, Decoded, LaneMagnitudes, ProbabilityTables, MAX_HEIGHT,
};

use super::{scratch, BigScratch, CoreForm};
use crate::bpc::{BpcError, CodeblockBatch, EncodedBatch};

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

/// Every codeblock's rows in `out` (laid out like `like`), each row a
/// slice of its own, so that the codeblocks decode in parallel straight
/// into `out` with no buffer of their own to clear and copy; `None` where
/// two codeblocks' rows overlap or one lies outside `out`.
///
/// The rows are handed out in the order of their starts in `out` (ties by
/// block), which `split_at_mut` needs. Each block's rows already come in
/// that order, so a merge of the blocks does it: the blocks sorted by
/// their first row, and a heap of the next row of every block begun. The
/// heap holds only the blocks whose rows interleave (about one row of
/// codeblocks of a subband), where a sort of every row start cost more
/// than the rest of the hand-out (docs/perf/codec.md, "The CPU decoder's
/// lanes as masks").
fn block_rows<'a>(like: &CodeblockBatch, out: &'a mut [i32]) -> Option<Vec<Vec<&'a mut [i32]>>> {
    use std::cmp::Reverse;
    let mut order: Vec<usize> = (0..like.blocks.len())
        .filter(|&i| like.blocks[i].height > 0)
        .collect();
    order.sort_unstable_by_key(|&i| (like.blocks[i].offset, i));
    let mut rows: Vec<Vec<&mut [i32]>> = like
        .blocks
        .iter()
        .map(|d| Vec::with_capacity(d.height))
        .collect();
    // (start, block, row) of the next row of each block begun.
    let mut heap = std::collections::BinaryHeap::new();
    let mut waiting = order.into_iter().peekable();
    let mut rest = out;
    let mut at = 0; // where `rest` starts in `out`
    loop {
        // Begin every block whose first row starts no later than the next
        // row of those begun: a row that sorts before the heap's least has
        // its block's first row no later than it.
        let least = heap.peek().map(|&Reverse((start, _, _))| start);
        while let Some(&i) = waiting.peek() {
            let offset = like.blocks[i].offset;
            if least.is_some_and(|least| offset > least) {
                break;
            }
            heap.push(Reverse((offset, i, 0usize)));
            waiting.next();
            if least.is_none() {
                break;
            }
        }
        let Some(Reverse((start, i, y))) = heap.pop() else {
            break;
        };
        let d = &like.blocks[i];
        let tail = std::mem::take(&mut rest).get_mut(start.checked_sub(at)?..)?;
        if tail.len() < d.width {
            return None;
        }
        let (row, tail) = tail.split_at_mut(d.width);
        rows[i].push(row);
        rest = tail;
        at = start + d.width;
        if y + 1 < d.height {
            heap.push(Reverse((start.checked_add(d.stride)?, i, y + 1)));
        }
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpc::BlockDesc;

    fn desc(offset: usize, stride: usize, width: usize, height: usize) -> BlockDesc {
        BlockDesc {
            offset,
            stride,
            width,
            height,
            group: 0,
        }
    }

    #[test]
    fn interleaved_blocks_get_their_own_rows_and_overlaps_none() {
        // Two 2x2 blocks side by side in a 4-wide array, listed right one
        // first.
        let mut like = CodeblockBatch {
            coefficients: vec![0; 8],
            blocks: vec![desc(2, 4, 2, 2), desc(0, 4, 2, 2)],
        };
        let mut out: Vec<i32> = (0..8).collect();
        let rows = block_rows(&like, &mut out).unwrap();
        let got: Vec<Vec<Vec<i32>>> = rows
            .iter()
            .map(|b| b.iter().map(|r| r.to_vec()).collect())
            .collect();
        assert_eq!(got, [[[2, 3], [6, 7]], [[0, 1], [4, 5]]]);
        // One column of overlap, and a block past the end.
        like.blocks[1] = desc(1, 4, 2, 2);
        assert!(block_rows(&like, &mut out).is_none());
        like.blocks = vec![desc(4, 4, 2, 3)];
        assert!(block_rows(&like, &mut out).is_none());
        // An overlap of one column with room to spare after it.
        like.blocks = vec![desc(1, 4, 2, 1), desc(0, 4, 2, 1)];
        assert!(block_rows(&like, &mut out).is_none());
    }

    /// [`block_rows`] as first written: every row start sorted. Kept as
    /// the reference of the merge.
    fn block_rows_sorted(
        like: &CodeblockBatch,
        out: &mut [i32],
    ) -> Option<Vec<Vec<(usize, usize)>>> {
        let mut starts = Vec::new();
        for (i, d) in like.blocks.iter().enumerate() {
            for y in 0..d.height {
                starts.push((d.offset.checked_add(y.checked_mul(d.stride)?)?, i));
            }
        }
        starts.sort_unstable();
        let mut rows = vec![Vec::new(); like.blocks.len()];
        let mut at = 0;
        for (start, i) in starts {
            let end = start.checked_add(like.blocks[i].width)?;
            if start < at || end > out.len() {
                return None;
            }
            rows[i].push((start, end));
            at = end;
        }
        Some(rows)
    }

    proptest::proptest! {
        /// The merge hands out the rows the sort did, or refuses where it
        /// refused: blocks of a grid of any size in a random order, some
        /// moved by a column or row (overlaps), some empty.
        #[test]
        fn the_merge_hands_out_what_the_sort_did(
            cols in 1usize..5,
            rows in 1usize..4,
            shuffle in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..20),
            nudges in proptest::collection::vec((0usize..20, 0usize..3), 0..3),
            bw in 0usize..4,
            bh in 0usize..4,
        ) {
            let stride = cols * 3;
            let mut blocks: Vec<BlockDesc> = (0..cols * rows)
                .map(|k| desc((k / cols) * 3 * stride + (k % cols) * 3, stride, bw.min(3), bh.min(3)))
                .collect();
            for (k, r) in shuffle.iter().enumerate() {
                let n = blocks.len();
                blocks.swap(k % n, *r as usize % n);
            }
            for &(k, how) in &nudges {
                let n = blocks.len();
                let b = &mut blocks[k % n];
                match how {
                    0 => b.offset += 1,
                    1 => b.offset += stride,
                    _ => b.height = 0,
                }
            }
            let like = CodeblockBatch { coefficients: vec![0; rows * 3 * stride], blocks };
            let mut out = vec![0i32; like.coefficients.len()];
            let base = out.as_ptr() as usize;
            let want = block_rows_sorted(&like, &mut out.clone());
            let got = block_rows(&like, &mut out).map(|rows| {
                rows.iter()
                    .map(|b| {
                        b.iter()
                            .map(|r| {
                                let start = (r.as_ptr() as usize - base) / 4;
                                (start, start + r.len())
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            });
            proptest::prop_assert_eq!(got, want);
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
