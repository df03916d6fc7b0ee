//! The inverse CDF 5/3 of the CPU backend, lifting straight from the
//! Mallat layout into natural order: the same arithmetic as
//! [`Cdf53::inverse_lines`] (`core/src/dwt/lift53.rs`, JPEG 2000 Part 1
//! Annex F, whole-sample symmetric extension), written as loops over the
//! low and high halves that the compiler vectorizes (the core form lifts
//! every other sample of an interleaved line in place, which does not).
//! The tests below hold both equal for every length.
//!
//! - undo the update: `even[k] = low[k] - ((high[k-1] + high[k] + 2) >> 2)`
//! - undo the predict: `odd[k] = high[k] + ((even[k] + even[k+1]) >> 1)`
//!
//! with `high[-1] = high[0]`, `high[nh] = high[nh-1]` and `even[nl] =
//! even[nl-1]` at the ends (the mirror of `core::dwt::lines::mirror`).
//!
//! [`Cdf53::inverse_lines`]: wavelane_core::dwt::Lifting::inverse_lines

use super::lift_row;

#[inline(always)]
fn undo_update(low: i32, a: i32, b: i32) -> i32 {
    low.wrapping_sub(a.wrapping_add(b).wrapping_add(2) >> 2)
}

#[inline(always)]
fn undo_predict(high: i32, a: i32, b: i32) -> i32 {
    high.wrapping_add(a.wrapping_add(b) >> 1)
}

/// One row of `n = src.len() >= 2` samples in Mallat order (the
/// `ceil(n/2)` low ones first), inverse-lifted into `out` (natural order,
/// same length); `even` is scratch.
#[inline(always)]
pub(super) fn row(src: &[i32], out: &mut [i32], even: &mut Vec<i32>) {
    let n = src.len();
    debug_assert!(n >= 2 && out.len() == n);
    let nl = n.div_ceil(2);
    let (low, high) = src.split_at(nl);
    let nh = high.len();
    even.clear();
    even.resize(nl, 0);
    even[0] = undo_update(low[0], high[0], high[0]);
    for ((e, &l), h) in even[1..nh].iter_mut().zip(&low[1..nh]).zip(high.windows(2)) {
        *e = undo_update(l, h[0], h[1]);
    }
    if nl > nh {
        even[nh] = undo_update(low[nh], high[nh - 1], high[nh - 1]);
    }
    // Pairs (even[k], odd[k]) for k < nh - 1 have even[k + 1] inside.
    for (k, pair) in out[..2 * (nh - 1)].chunks_exact_mut(2).enumerate() {
        pair[0] = even[k];
        pair[1] = undo_predict(high[k], even[k], even[k + 1]);
    }
    let k = nh - 1;
    let right = if k + 1 < nl { even[k + 1] } else { even[k] };
    out[2 * k] = even[k];
    out[2 * k + 1] = undo_predict(high[k], even[k], right);
    if nl > nh {
        out[n - 1] = even[nh];
    }
}

/// The columns of `rows` (`n >= 2` rows of `cols` samples, Mallat order:
/// the `ceil(n/2)` low rows first) inverse-lifted: `block` gets them in
/// natural order (row `i` at `i * cols`), then they are copied back.
#[inline(always)]
pub(super) fn columns(rows: &mut [&mut [i32]], block: &mut Vec<i32>) {
    let n = rows.len();
    let cols = rows.first().map_or(0, |r| r.len());
    debug_assert!(n >= 2);
    let nl = n.div_ceil(2);
    let nh = n - nl;
    // Every sample of the first `n * cols` is written below before it is
    // read, so the block only grows (zeroing it per strip cost as much as
    // the lifting: docs/perf/codec.md, "The CPU decoder's count planes and
    // sign contexts").
    if block.len() < n * cols {
        block.resize(n * cols, 0);
    }
    let block = &mut block[..n * cols];
    {
        let (low, high) = rows.split_at(nl);
        for k in 0..nl {
            let a = &high[k.saturating_sub(1).min(nh - 1)];
            let b = &high[k.min(nh - 1)];
            lift_row(
                &mut block[2 * k * cols..(2 * k + 1) * cols],
                low[k],
                a,
                b,
                undo_update,
            );
        }
        for k in 0..nh {
            let right = if k + 1 < nl { 2 * k + 2 } else { 2 * k };
            // Row 2k+1 from rows 2k and `right` of the block (both even).
            let (before, after) = block.split_at_mut((2 * k + 1) * cols);
            let (odd, after) = after.split_at_mut(cols);
            let e = &before[2 * k * cols..];
            let r: &[i32] = if right == 2 * k {
                &before[2 * k * cols..(2 * k + 1) * cols]
            } else {
                &after[..cols]
            };
            for (((o, &h), &a), &b) in odd.iter_mut().zip(high[k].iter()).zip(e).zip(r) {
                *o = undo_predict(h, a, b);
            }
        }
    }
    for (dst, src) in rows.iter_mut().zip(block.chunks_exact(cols.max(1))) {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_lines::{columns_equal_lines, samples};
    use wavelane_core::dwt::{mallat_index, Cdf53, Lifting};

    /// What the core form gives: the Mallat-order line put back in natural
    /// order, then lifted in place.
    fn core_inverse(mallat: &[i32]) -> Vec<i32> {
        let n = mallat.len();
        let mut line: Vec<i32> = (0..n).map(|i| mallat[mallat_index(i, n)]).collect();
        Cdf53::inverse_lines(&mut line, n, 1).unwrap();
        line
    }

    #[test]
    fn rows_equal_the_core_lifting_at_every_length() {
        let mut even = Vec::new();
        for n in 2..70 {
            for seed in 0..4 {
                let src = samples(n, seed * 1000 + n as u64);
                let mut out = vec![0; n];
                super::row(&src, &mut out, &mut even);
                assert_eq!(out, core_inverse(&src), "n = {n}, seed {seed}");
            }
        }
    }

    #[test]
    fn columns_equal_the_core_lifting_at_every_height() {
        columns_equal_lines(super::columns, core_inverse);
    }
}
