//! The shared skeleton of every lifting step: walk the even or odd positions
//! of `cols` interleaved lines and update each from its two neighbours, with
//! whole-sample symmetric extension at both ends.

use super::DwtError;

/// Whole-sample symmetric extension of index `i` into `0..n`
/// (`-1 -> 1`, `n -> n-2`, periodic with period `2(n-1)`); `n == 1` maps
/// everything to 0. This is the index remap the shaders use for halos.
pub fn mirror(i: i64, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let period = 2 * (n as i64 - 1);
    let m = i.rem_euclid(period);
    if m >= n as i64 {
        (period - m) as usize
    } else {
        m as usize
    }
}

/// Checks that `data` holds `n` samples of `cols` lines.
pub(crate) fn check(len: usize, n: usize, cols: usize) -> Result<(), DwtError> {
    match n.checked_mul(cols) {
        Some(need) if need <= len => Ok(()),
        _ => Err(DwtError::BufferTooSmall),
    }
}

/// Splits out row `c` mutably and rows `l`, `r` (both `!= c`) shared.
fn rows3<T>(data: &mut [T], cols: usize, c: usize, l: usize, r: usize) -> (&mut [T], &[T], &[T]) {
    let (before, rest) = data.split_at_mut(c * cols);
    let (center, after) = rest.split_at_mut(cols);
    let before: &[T] = before;
    let after: &[T] = after;
    let row = |i: usize| -> &[T] {
        if i < c {
            &before[i * cols..(i + 1) * cols]
        } else {
            let j = i - c - 1;
            &after[j * cols..(j + 1) * cols]
        }
    };
    (center, row(l), row(r))
}

/// One lifting step: for every position `c` of the given parity
/// (0 = even = low, 1 = odd = high) below `n`, `x[c] = f(x[c], x[c-1], x[c+1])`
/// with mirrored neighbours. Caller guarantees `n >= 2` and the length.
#[inline]
pub(crate) fn step<T: Copy>(
    data: &mut [T],
    n: usize,
    cols: usize,
    parity: usize,
    f: impl Fn(T, T, T) -> T,
) {
    if cols == 1 {
        let x = &mut data[..n];
        // Edges with mirrored neighbours, interior in a plain loop.
        let edge = |x: &mut [T], c: usize| {
            let l = if c == 0 { 1 } else { c - 1 };
            let r = if c + 1 < n { c + 1 } else { c - 1 };
            x[c] = f(x[c], x[l], x[r]);
        };
        let mut c = parity;
        if c == 0 {
            edge(x, 0);
            c = 2;
        }
        while c + 1 < n {
            x[c] = f(x[c], x[c - 1], x[c + 1]);
            c += 2;
        }
        if c < n {
            edge(x, c);
        }
        return;
    }
    let mut c = parity;
    while c < n {
        let l = if c == 0 { 1 } else { c - 1 };
        let r = if c + 1 < n { c + 1 } else { c - 1 };
        let (center, left, right) = rows3(data, cols, c, l, r);
        for ((x, &a), &b) in center.iter_mut().zip(left).zip(right) {
            *x = f(*x, a, b);
        }
        c += 2;
    }
}

/// Multiplies every sample of the given parity by `factor` (the 9/7
/// normalization).
pub(crate) fn scale(data: &mut [f32], n: usize, cols: usize, parity: usize, factor: f32) {
    let mut c = parity;
    while c < n {
        for x in &mut data[c * cols..(c + 1) * cols] {
            *x *= factor;
        }
        c += 2;
    }
}
