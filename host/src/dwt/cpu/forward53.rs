//! The forward CDF 5/3 of the CPU backend, lifting straight from natural
//! order into the Mallat layout: the same arithmetic as
//! [`Cdf53::forward_lines`] (`core/src/dwt/lift53.rs`, JPEG 2000 Part 1
//! Annex F, whole-sample symmetric extension), written as loops over the
//! even and odd samples that the compiler vectorizes (the core form lifts
//! every other sample of an interleaved line in place, which does not, and
//! the Mallat scatter after it costs an index per sample). The mirror of
//! [`super::inverse53`]; the tests below hold both equal to the core
//! lifting for every length.
//!
//! - predict: `high[k] = x[2k+1] - ((x[2k] + x[2k+2]) >> 1)`
//! - update: `low[k] = x[2k] + ((high[k-1] + high[k] + 2) >> 2)`
//!
//! with `x[n] = x[n-2]` (`n` even), `high[-1] = high[0]` and `high[nh] =
//! high[nh-1]` (`n` odd) at the ends (the mirror of
//! `core::dwt::lines::mirror`).
//!
//! [`Cdf53::forward_lines`]: wavelane_core::dwt::Lifting::forward_lines

use super::lift_row;

#[inline(always)]
fn predict(odd: i32, a: i32, b: i32) -> i32 {
    odd.wrapping_sub(a.wrapping_add(b) >> 1)
}

#[inline(always)]
fn update(even: i32, a: i32, b: i32) -> i32 {
    even.wrapping_add(a.wrapping_add(b).wrapping_add(2) >> 2)
}

/// One row of `n = src.len() >= 2` samples in natural order, lifted into
/// `out` (same length) in Mallat order: the `ceil(n/2)` low samples first.
#[inline(always)]
pub(super) fn row(src: &[i32], out: &mut [i32]) {
    let n = src.len();
    debug_assert!(n >= 2 && out.len() == n);
    let nl = n.div_ceil(2);
    let nh = n - nl;
    let (low, high) = out.split_at_mut(nl);
    // high[k] for k < nh - 1 has x[2k + 2] inside.
    for ((h, p), q) in high
        .iter_mut()
        .zip(src.chunks_exact(2))
        .zip(src[2..].chunks_exact(2))
    {
        *h = predict(p[1], p[0], q[0]);
    }
    let k = nh - 1;
    let right = if 2 * k + 2 < n {
        src[2 * k + 2]
    } else {
        src[2 * k]
    };
    high[k] = predict(src[2 * k + 1], src[2 * k], right);
    low[0] = update(src[0], high[0], high[0]);
    for ((l, x), h) in low[1..nh]
        .iter_mut()
        .zip(src[2..].chunks_exact(2))
        .zip(high.windows(2))
    {
        *l = update(x[0], h[0], h[1]);
    }
    if nl > nh {
        low[nh] = update(src[2 * nh], high[nh - 1], high[nh - 1]);
    }
}

/// The columns of `rows` (`n >= 2` rows of `cols` samples, natural order)
/// lifted: `block` gets them in Mallat order (the `ceil(n/2)` low rows
/// first, row `i` at `i * cols`), then they are copied back.
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
        let (low, high) = block.split_at_mut(nl * cols);
        for (k, h) in high.chunks_exact_mut(cols.max(1)).enumerate() {
            let right = if 2 * k + 2 < n { 2 * k + 2 } else { 2 * k };
            lift_row(h, rows[2 * k + 1], rows[2 * k], rows[right], predict);
        }
        for (k, l) in low.chunks_exact_mut(cols.max(1)).enumerate() {
            let a = k.saturating_sub(1).min(nh - 1);
            let b = k.min(nh - 1);
            let (a, b) = (
                &high[a * cols..(a + 1) * cols],
                &high[b * cols..(b + 1) * cols],
            );
            lift_row(l, rows[2 * k], a, b, update);
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

    /// What the core form gives: the line lifted in place, then put in
    /// Mallat order.
    fn core_forward(natural: &[i32]) -> Vec<i32> {
        let n = natural.len();
        let mut line = natural.to_vec();
        Cdf53::forward_lines(&mut line, n, 1).unwrap();
        let mut mallat = vec![0; n];
        for (i, &v) in line.iter().enumerate() {
            mallat[mallat_index(i, n)] = v;
        }
        mallat
    }

    #[test]
    fn rows_equal_the_core_lifting_at_every_length() {
        for n in 2..70 {
            for seed in 0..4 {
                let src = samples(n, seed * 1000 + n as u64);
                let mut out = vec![0; n];
                super::row(&src, &mut out);
                assert_eq!(out, core_forward(&src), "n = {n}, seed {seed}");
            }
        }
    }

    #[test]
    fn columns_equal_the_core_lifting_at_every_height() {
        columns_equal_lines(super::columns, core_forward);
    }
}
