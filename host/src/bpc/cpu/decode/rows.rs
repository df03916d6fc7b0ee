//! Every codeblock's rows in the decoder's output array as slices of their
//! own ([`block_rows`]), so that the codeblocks decode in parallel
//! straight into the array with no buffer of their own to clear and copy.
//!
//! The rows are handed out in the order of their starts in the array (ties
//! by block), which `split_at_mut` needs. Two forms give the same rows:
//! [`sweep`], for the codec's layouts (every block at one stride), walks the array row by row with the
//! blocks that cover the row in column order, and compares nothing per
//! row but the bounds; [`merge`] takes any layout through a heap, at
//! several comparisons per row (docs/perf/codec.md, "The CPU decoder's
//! count planes and sign contexts").

use crate::bpc::CodeblockBatch;

/// Every codeblock's rows in `out` (laid out like `like`), each row a
/// slice of its own; `None` where two codeblocks' rows overlap or one lies
/// outside `out`.
pub(super) fn block_rows<'a>(
    like: &CodeblockBatch,
    out: &'a mut [i32],
) -> Option<Vec<Vec<&'a mut [i32]>>> {
    match grid_order(like) {
        Some((stride, order)) => sweep(like, stride, &order, out),
        None => merge(like, out),
    }
}

/// The blocks with rows, sorted by their first row's start (ties by
/// block), and their common stride, where [`sweep`] applies: every block
/// with rows has the same non-zero stride `s`. Row `y` of block `i` then
/// starts in array row `offset / s + y` at column `offset % s < s`, so the
/// order of the row starts is that of array rows, then columns, then
/// blocks (a row that runs past its array row overlaps what follows, and
/// the hand-out refuses it as the merge does). `None` otherwise (and for
/// no block with rows).
fn grid_order(like: &CodeblockBatch) -> Option<(usize, Vec<usize>)> {
    // Sorting by offset sorts by first array row, then column.
    let order = by_first_row(like);
    let stride = like.blocks[*order.first()?].stride;
    for &i in &order {
        let d = &like.blocks[i];
        if stride == 0 || d.stride != stride {
            return None;
        }
    }
    Some((stride, order))
}

/// The blocks with rows, sorted by their first row's start (ties by
/// block).
fn by_first_row(like: &CodeblockBatch) -> Vec<usize> {
    let mut order: Vec<usize> = (0..like.blocks.len())
        .filter(|&i| like.blocks[i].height > 0)
        .collect();
    order.sort_unstable_by_key(|&i| (like.blocks[i].offset, i));
    order
}

/// An empty list of rows for every block, with room for its height.
fn row_lists<'a>(like: &CodeblockBatch) -> Vec<Vec<&'a mut [i32]>> {
    like.blocks
        .iter()
        .map(|d| Vec::with_capacity(d.height))
        .collect()
}

/// The output array handed out row by row, in increasing order of the
/// rows' starts.
struct Cursor<'a> {
    /// What is left of the array.
    rest: &'a mut [i32],
    /// Where `rest` starts in the array.
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The `width` elements at `start`; `None` where they begin before the
    /// end of the row taken last (an overlap) or run past the array.
    fn take(&mut self, start: usize, width: usize) -> Option<&'a mut [i32]> {
        let tail = std::mem::take(&mut self.rest).get_mut(start.checked_sub(self.at)?..)?;
        if tail.len() < width {
            return None;
        }
        let (row, tail) = tail.split_at_mut(width);
        self.rest = tail;
        self.at = start + width;
        Some(row)
    }
}

/// [`block_rows`] for the blocks of [`grid_order`]: array row by array
/// row, the rows of the blocks that cover it in column order (ties by
/// block). The list of those blocks changes only where a block begins or
/// ends; each array row is visited once, and rows no block covers are
/// skipped, so the walk is bounded by the blocks' heights.
fn sweep<'a>(
    like: &CodeblockBatch,
    stride: usize,
    order: &[usize],
    out: &'a mut [i32],
) -> Option<Vec<Vec<&'a mut [i32]>>> {
    let mut rows = row_lists(like);
    // (column, block, the array row past its last) of the blocks that
    // cover array row `r`, by column, then block.
    let mut active: Vec<(usize, usize, usize)> = Vec::new();
    let mut next = 0; // the first block of `order` not begun
    let mut cursor = Cursor { rest: out, at: 0 };
    let mut r = 0;
    loop {
        active.retain(|&(_, _, end)| end > r);
        if active.is_empty() {
            let Some(&i) = order.get(next) else {
                break;
            };
            r = r.max(like.blocks[i].offset / stride);
        }
        let begun = active.len();
        while let Some(&i) = order.get(next) {
            let d = &like.blocks[i];
            if d.offset / stride != r {
                break;
            }
            active.push((d.offset % stride, i, r.checked_add(d.height)?));
            next += 1;
        }
        if active.len() > begun {
            active.sort_unstable();
        }
        let base = r.checked_mul(stride)?;
        for &(column, i, _) in &active {
            rows[i].push(cursor.take(base.checked_add(column)?, like.blocks[i].width)?);
        }
        r += 1;
    }
    Some(rows)
}

/// [`block_rows`] for any layout: a merge of the blocks, sorted by their
/// first row, with a heap of the next row of every block begun. The heap
/// holds only the blocks whose rows interleave (about one row of
/// codeblocks of a subband), where a sort of every row start cost more
/// than the rest of the hand-out (docs/perf/codec.md, "The CPU decoder's
/// lanes as masks").
fn merge<'a>(like: &CodeblockBatch, out: &'a mut [i32]) -> Option<Vec<Vec<&'a mut [i32]>>> {
    use std::cmp::Reverse;
    let mut rows = row_lists(like);
    // (start, block, row) of the next row of each block begun.
    let mut heap = std::collections::BinaryHeap::new();
    let mut waiting = by_first_row(like).into_iter().peekable();
    let mut cursor = Cursor { rest: out, at: 0 };
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
        rows[i].push(cursor.take(start, d.width)?);
        if y + 1 < d.height {
            heap.push(Reverse((start.checked_add(d.stride)?, i, y + 1)));
        }
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::super::tests::desc;
    use super::*;
    use crate::bpc::BlockDesc;

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
        /// Both forms hand out the rows the sort did, or refuse where it
        /// refused: blocks of a grid of any size in a random order, of
        /// their own heights, some moved by a column (overlaps, or past
        /// the end of the array row) or a row (beginning within other
        /// blocks' rows), some empty, some at another stride (the sweep
        /// does not apply).
        #[test]
        fn both_forms_hand_out_what_the_sort_did(
            cols in 1usize..5,
            rows in 1usize..4,
            shuffle in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..20),
            nudges in proptest::collection::vec((0usize..20, 0usize..4), 0..3),
            bw in 0usize..4,
            heights in proptest::collection::vec(0usize..4, 16),
        ) {
            let stride = cols * 3;
            let mut blocks: Vec<BlockDesc> = (0..cols * rows)
                .map(|k| desc((k / cols) * 3 * stride + (k % cols) * 3, stride, bw.min(3), heights[k % 16].min(3)))
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
                    2 => b.height = 0,
                    _ => b.stride += 1,
                }
            }
            let like = CodeblockBatch { coefficients: vec![0; (rows * 3 + 1) * stride], blocks };
            let want = block_rows_sorted(&like, &mut vec![0; like.coefficients.len()]);
            let spans = |rows: Vec<Vec<&mut [i32]>>, base: usize| {
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
            };
            let mut out = vec![0i32; like.coefficients.len()];
            let base = out.as_ptr() as usize;
            let got = block_rows(&like, &mut out).map(|rows| spans(rows, base));
            proptest::prop_assert_eq!(&got, &want);
            let got = merge(&like, &mut out).map(|rows| spans(rows, base));
            proptest::prop_assert_eq!(&got, &want);
        }
    }

    /// The codec's layouts take the sweep: subbands of one plane side by
    /// side and above each other, blocks of different heights beginning in
    /// the same array row and within other blocks' rows.
    #[test]
    fn mallat_layouts_take_the_sweep() {
        // A 16-wide plane: a 4x4 block at (0, 0), an 8-wide 6-tall one at
        // (0, 8), a 4x2 one at (4, 0) below the first, and an 8x2 at (6, 8).
        let blocks = vec![
            desc(8, 16, 8, 6),
            desc(0, 16, 4, 4),
            desc(64, 16, 4, 2),
            desc(104, 16, 8, 2),
        ];
        let like = CodeblockBatch {
            coefficients: vec![0; 16 * 8],
            blocks,
        };
        assert!(grid_order(&like).is_some());
        let mut out: Vec<i32> = (0..16 * 8).collect();
        let rows = block_rows(&like, &mut out).unwrap();
        let first: Vec<Vec<i32>> = rows
            .iter()
            .map(|b| b.iter().map(|r| r[0]).collect())
            .collect();
        assert_eq!(
            first,
            [
                vec![8, 24, 40, 56, 72, 88],
                vec![0, 16, 32, 48],
                vec![64, 80],
                vec![104, 120]
            ]
        );
    }
}
