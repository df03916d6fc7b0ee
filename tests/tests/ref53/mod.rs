//! The reversible 5/3 written from JPEG 2000 Part 1 Annex F, as plainly as
//! the standard states it, to check every subband of the core transform.
//! Nothing is shared with `wavelane_core::dwt`: the boundary is the
//! standard's periodic symmetric extension `PSE_O` (F.3.7), applied to an
//! explicitly extended copy of each line; arithmetic is `i64` with floor
//! division, so it neither wraps nor depends on shift semantics; each level
//! is `2D_SD` (F.4.8.1: all columns by `1D_SD`, then all rows, then
//! `2D_DEINTERLEAVE`), and the inverse is `2D_SR` (F.3.2) with `1D_SR`.
//! The image origin is 0, so every line starts at an even index `i0 = 0`.

/// `PSE_O(i, i0, i1)` of F.3.7 for a line `[0, n)`.
fn pse(i: i64, n: usize) -> usize {
    let n = n as i64;
    let period = 2 * (n - 1);
    let m = i.rem_euclid(period);
    m.min(period - m) as usize
}

/// The line extended by `ext` samples each side (F.3.7 `1D_EXTR`).
fn extend(x: &[i64], ext: usize) -> Vec<i64> {
    (-(ext as i64)..(x.len() + ext) as i64)
        .map(|i| x[pse(i, x.len())])
        .collect()
}

/// `1D_SD` (F.4.8.2, equation F-9 for the 5/3): interleaved output,
/// low-pass at even indices. A line of one sample at an even index is left
/// as it is (F.4.8.2, first paragraph).
fn sd_1d(x: &[i64]) -> Vec<i64> {
    let n = x.len();
    if n == 1 {
        return x.to_vec();
    }
    // Two samples of extension each side are all the 5/3 reads (F-9 reads
    // X(2n), X(2n+2) for the odd outputs and Y(2n-1), Y(2n+1) for the even
    // ones).
    const E: usize = 2;
    let xe = extend(x, E);
    let at = |v: &[i64], i: i64| v[(i + E as i64) as usize];
    let mut y = vec![0i64; n + 2 * E];
    for i in (-1..=n as i64).filter(|i| i.rem_euclid(2) == 1) {
        y[(i + E as i64) as usize] = at(&xe, i) - (at(&xe, i - 1) + at(&xe, i + 1)).div_euclid(2);
    }
    for i in (0..n as i64).step_by(2) {
        y[(i + E as i64) as usize] = at(&xe, i) + (at(&y, i - 1) + at(&y, i + 1) + 2).div_euclid(4);
    }
    (0..n).map(|i| y[i + E]).collect()
}

/// `1D_SR` (F.3.8, equation F-5): from interleaved coefficients back to
/// samples.
fn sr_1d(y: &[i64]) -> Vec<i64> {
    let n = y.len();
    if n == 1 {
        return y.to_vec();
    }
    const E: usize = 3;
    let ye = extend(y, E);
    let at = |v: &[i64], i: i64| v[(i + E as i64) as usize];
    let mut x = vec![0i64; n + 2 * E];
    for i in (-2..=n as i64 + 1).filter(|i| i.rem_euclid(2) == 0) {
        x[(i + E as i64) as usize] =
            at(&ye, i) - (at(&ye, i - 1) + at(&ye, i + 1) + 2).div_euclid(4);
    }
    for i in (1..n as i64).step_by(2) {
        x[(i + E as i64) as usize] = at(&ye, i) + (at(&x, i - 1) + at(&x, i + 1)).div_euclid(2);
    }
    (0..n).map(|i| x[i + E]).collect()
}

/// Applies `f` to every column, then every row, of the `w x h` region at
/// the top left of `a` (row stride `stride`); `rows_first` swaps the order.
fn separable(
    a: &mut [i64],
    stride: usize,
    (w, h): (usize, usize),
    f: fn(&[i64]) -> Vec<i64>,
    rows_first: bool,
) {
    let cols = |a: &mut [i64]| {
        for x in 0..w {
            let col: Vec<i64> = (0..h).map(|y| a[y * stride + x]).collect();
            for (y, v) in f(&col).into_iter().enumerate() {
                a[y * stride + x] = v;
            }
        }
    };
    let rows = |a: &mut [i64]| {
        for y in 0..h {
            let row = f(&a[y * stride..y * stride + w]);
            a[y * stride..y * stride + w].copy_from_slice(&row);
        }
    };
    if rows_first {
        rows(a);
        cols(a);
    } else {
        cols(a);
        rows(a);
    }
}

/// `2D_DEINTERLEAVE` of the `w x h` region (or its inverse): even rows and
/// columns (low-pass) to the top left, `ceil(n/2)` of each.
fn deinterleave(a: &mut [i64], stride: usize, (w, h): (usize, usize), forward: bool) {
    let pos = |i: usize, n: usize| {
        if i.is_multiple_of(2) {
            i / 2
        } else {
            n.div_ceil(2) + i / 2
        }
    };
    let old: Vec<i64> = a.to_vec();
    for y in 0..h {
        for x in 0..w {
            let (from, to) = ((y, x), (pos(y, h), pos(x, w)));
            let (from, to) = if forward { (from, to) } else { (to, from) };
            a[to.0 * stride + to.1] = old[from.0 * stride + from.1];
        }
    }
}

/// The region each level transforms: level `l` (0 = finest) works on
/// `ceil(w / 2^l) x ceil(h / 2^l)` (F.3.1, `tbx1 = ceil(tcx1 / 2^nb)`).
fn region(w: usize, h: usize, level: u32) -> (usize, usize) {
    let d = 1usize << level;
    (w.div_ceil(d), h.div_ceil(d))
}

/// `levels` levels of the forward 5/3 of a `w x h` image (DC-shifted
/// samples), in the Mallat layout.
pub fn forward(image: &[i64], w: usize, h: usize, levels: u32) -> Vec<i64> {
    let mut a = image.to_vec();
    for level in 0..levels {
        let r = region(w, h, level);
        separable(&mut a, w, r, sd_1d, false);
        deinterleave(&mut a, w, r, true);
    }
    a
}

/// The inverse of [`forward`]: `2D_SR` from the coarsest level down.
pub fn inverse(coefficients: &[i64], w: usize, h: usize, levels: u32) -> Vec<i64> {
    let mut a = coefficients.to_vec();
    for level in (0..levels).rev() {
        let r = region(w, h, level);
        deinterleave(&mut a, w, r, false);
        separable(&mut a, w, r, sr_1d, true);
    }
    a
}
