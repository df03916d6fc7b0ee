//! The CPU backend of the DWT: the core lifting ([`Lifting::forward_lines`])
//! on all cores. Vertical (and Z) passes split the image into strips of
//! columns, each gathered into a per-thread block and lifted row-wise (the
//! inner loop runs along contiguous columns); horizontal passes run rows in
//! parallel. Same arithmetic as [`wavelane_core::dwt`], so the same bits.

mod forward53;
mod inverse53;

/// `dst[c] = f(x[c], a[c], b[c])` over a row of columns: one lifting step
/// of the 5/3 column passes (`forward53`, `inverse53`), inlined into their
/// `fastest!` copies.
#[inline(always)]
fn lift_row(dst: &mut [i32], x: &[i32], a: &[i32], b: &[i32], f: impl Fn(i32, i32, i32) -> i32) {
    for (((d, &x), &a), &b) in dst.iter_mut().zip(x).zip(a).zip(b) {
        *d = f(x, a, b);
    }
}

use rayon::prelude::*;
use wavelane_core::dwt::volume::{
    axes_at, check_levels, level_region_reduced, reduction_is_held, region_at, total_levels,
    VolumeLayout,
};
use wavelane_core::dwt::{mallat_index, DwtError, ImageLayout, Lifting, Wavelet};

use super::{DwtHostError, HostWavelet};

/// Columns per strip of the vertical pass: 64 samples = 256 bytes per row.
const STRIP: usize = 64;

thread_local! {
    /// Each thread's block of the 5/3 column passes ([`columns53`]), kept
    /// from one strip to the next (and between transforms: at most one
    /// strip of the tallest image, `STRIP * height` samples): a block per
    /// rayon task was allocated and zeroed for every strip.
    static COLUMN_BLOCK: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn check(data_len: usize, layout: VolumeLayout, levels: [u32; 3]) -> Result<(), DwtError> {
    layout.validate(data_len)?;
    check_levels(layout.dims(), levels)
}

/// Forward 3-D transform in place on all cores (2-D: depth 1, `lz = 0`).
pub fn forward_3d<W: HostWavelet>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
) -> Result<(), DwtHostError> {
    check(data.len(), layout, levels)?;
    for level in 0..total_levels(levels) {
        let (region, axes) = (
            region_at(layout.dims(), levels, level),
            axes_at(levels, level),
        );
        level_3d::<W>(data, layout, region, axes, true)?;
    }
    Ok(())
}

/// Inverse of [`forward_3d`].
pub fn inverse_3d<W: HostWavelet>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
) -> Result<(), DwtHostError> {
    inverse_3d_reduced::<W>(data, layout, levels, [0; 3])
}

/// [`wavelane_core::dwt::volume::inverse_3d_reduced`] on all cores.
pub fn inverse_3d_reduced<W: HostWavelet>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
    reduce: [u32; 3],
) -> Result<(), DwtHostError> {
    check(data.len(), layout, levels)?;
    if !reduction_is_held(levels, reduce) {
        return Err(DwtError::BadReduction.into());
    }
    for level in (0..total_levels(levels)).rev() {
        let (region, axes) = level_region_reduced(layout.dims(), levels, reduce, level);
        level_3d::<W>(data, layout, region, axes, false)?;
    }
    Ok(())
}

fn level_3d<W: HostWavelet>(
    data: &mut [W::Sample],
    l: VolumeLayout,
    [w, h, d]: [usize; 3],
    [tx, ty, tz]: [bool; 3],
    forward: bool,
) -> Result<(), DwtError> {
    let plane = ImageLayout::with_stride(w, h, l.row_stride);
    if forward && tz {
        z_pass::<W>(data, l, [w, h, d], true)?;
    }
    for z in 0..d {
        let slice = &mut data[z * l.slice_stride..];
        if forward {
            if ty {
                vertical::<W>(slice, plane, true)?;
            }
            if tx {
                horizontal::<W>(slice, plane, true)?;
            }
        } else {
            if tx {
                horizontal::<W>(slice, plane, false)?;
            }
            if ty {
                vertical::<W>(slice, plane, false)?;
            }
        }
    }
    if !forward && tz {
        z_pass::<W>(data, l, [w, h, d], false)?;
    }
    Ok(())
}

/// Gathers `rows` (line `i` of every column in row `i`), lifts the columns,
/// scatters back: forward from natural to Mallat order, inverse the reverse.
fn lift_rows<W: Lifting>(
    rows: &mut [&mut [W::Sample]],
    block: &mut Vec<W::Sample>,
    forward: bool,
) -> Result<(), DwtError> {
    let n = rows.len();
    let cols = rows.first().map_or(0, |r| r.len());
    block.clear();
    block.resize(n * cols, W::Sample::default());
    for i in 0..n {
        let src = if forward { i } else { mallat_index(i, n) };
        block[i * cols..(i + 1) * cols].copy_from_slice(rows[src]);
    }
    if forward {
        W::forward_lines(block, n, cols)?;
    } else {
        W::inverse_lines(block, n, cols)?;
    }
    for i in 0..n {
        let dst = if forward { mallat_index(i, n) } else { i };
        rows[dst].copy_from_slice(&block[i * cols..(i + 1) * cols]);
    }
    Ok(())
}

crate::fastest! {
    /// [`forward53::columns`] or [`inverse53::columns`], compiled for the
    /// CPU.
    fn columns53(rows: &mut [&mut [i32]], block: &mut Vec<i32>, forward: bool) {
        if forward {
            forward53::columns(rows, block)
        } else {
            inverse53::columns(rows, block)
        }
    }
}

crate::fastest! {
    /// [`forward53::row`] or [`inverse53::row`] of every row of `rows` (`n`
    /// samples each at `stride`), compiled for the CPU.
    fn rows53(
        rows: &mut [i32],
        stride: usize,
        n: usize,
        scratch: &mut (Vec<i32>, Vec<i32>),
        forward: bool,
    ) {
        let (line, even) = scratch;
        line.resize(n, 0);
        for row in rows.chunks_mut(stride) {
            let row = &mut row[..n];
            if forward {
                forward53::row(row, line);
            } else {
                inverse53::row(row, line, even);
            }
            row.copy_from_slice(line);
        }
    }
}

/// Whether the 5/3 of [`forward53`] and [`inverse53`] runs for `W` (its
/// samples are `i32` then, which the casts below rely on).
fn direct53<W: HostWavelet>() -> bool {
    W::WAVELET == Wavelet::Cdf53
}

/// Vertical pass of the `l` region, strips of columns in parallel.
fn vertical<W: HostWavelet>(
    data: &mut [W::Sample],
    l: ImageLayout,
    forward: bool,
) -> Result<(), DwtError> {
    if l.height < 2 {
        return Ok(());
    }
    let nstrips = l.width.div_ceil(STRIP);
    let mut strips: Vec<Vec<&mut [W::Sample]>> =
        (0..nstrips).map(|_| Vec::with_capacity(l.height)).collect();
    for row in data.chunks_mut(l.stride).take(l.height) {
        let mut rest = &mut row[..l.width];
        for strip in strips.iter_mut() {
            let (a, b) = rest.split_at_mut(STRIP.min(rest.len()));
            strip.push(a);
            rest = b;
        }
    }
    if direct53::<W>() {
        strips.into_par_iter().for_each(|rows| {
            let mut rows: Vec<&mut [i32]> = rows
                .into_iter()
                .map(bytemuck::cast_slice_mut::<W::Sample, i32>)
                .collect();
            COLUMN_BLOCK.with_borrow_mut(|block| columns53(&mut rows, block, forward))
        });
        return Ok(());
    }
    strips
        .into_par_iter()
        .try_for_each_init(Vec::new, |block, mut rows| {
            lift_rows::<W>(&mut rows, block, forward)
        })
}

/// Rows per task of the horizontal 5/3: enough to amortize the
/// dispatch, few enough to spread a small level over the threads.
const ROWS_PER_TASK: usize = 8;

/// Horizontal pass of the `l` region, rows in parallel.
fn horizontal<W: HostWavelet>(
    data: &mut [W::Sample],
    l: ImageLayout,
    forward: bool,
) -> Result<(), DwtError> {
    let n = l.width;
    if n < 2 {
        return Ok(());
    }
    if direct53::<W>() && l.height > 0 {
        let rows = &mut data[..(l.height - 1) * l.stride + n];
        let rows = bytemuck::cast_slice_mut::<W::Sample, i32>(rows);
        rows.par_chunks_mut(l.stride * ROWS_PER_TASK).for_each_init(
            || (Vec::new(), Vec::new()),
            |scratch, chunk| rows53(chunk, l.stride, n, scratch, forward),
        );
        return Ok(());
    }
    data.par_chunks_mut(l.stride)
        .take(l.height)
        .try_for_each_init(Vec::new, |line: &mut Vec<W::Sample>, row| {
            let row = &mut row[..n];
            line.clear();
            if forward {
                line.extend_from_slice(row);
                W::forward_lines(line, n, 1)?;
                for (i, &v) in line.iter().enumerate() {
                    row[mallat_index(i, n)] = v;
                }
            } else {
                line.extend((0..n).map(|i| row[mallat_index(i, n)]));
                W::inverse_lines(line, n, 1)?;
                row.copy_from_slice(line);
            }
            Ok(())
        })
}

/// Z pass: for every row index `y`, the `d` row segments at that `y` form
/// `w` Z lines; rows in parallel.
fn z_pass<W: HostWavelet>(
    data: &mut [W::Sample],
    l: VolumeLayout,
    [w, h, d]: [usize; 3],
    forward: bool,
) -> Result<(), DwtError> {
    if d < 2 {
        return Ok(());
    }
    let mut per_row: Vec<Vec<&mut [W::Sample]>> = (0..h).map(|_| Vec::with_capacity(d)).collect();
    for slice in data.chunks_mut(l.slice_stride).take(d) {
        for (y, row) in slice.chunks_mut(l.row_stride).take(h).enumerate() {
            per_row[y].push(&mut row[..w]);
        }
    }
    per_row
        .into_par_iter()
        .try_for_each_init(Vec::new, |block, mut rows| {
            lift_rows::<W>(&mut rows, block, forward)
        })
}

/// Lines the 5/3 row and column tests of `forward53` and `inverse53`
/// transform.
#[cfg(test)]
mod test_lines {
    /// Samples a 16-bit image's transform can hold, and the extremes where
    /// the sums wrap (the core form wraps the same way).
    pub fn samples(n: usize, seed: u64) -> Vec<i32> {
        let mut state = seed | 1;
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match i % 11 {
                    3 => i32::MAX,
                    7 => i32::MIN,
                    _ => (state >> 40) as i32 - (1 << 23),
                }
            })
            .collect()
    }

    /// Asserts that `columns` (lifting the columns of the rows it is given,
    /// with a scratch block) gives every column what `line` gives it alone,
    /// at every height and several widths.
    pub fn columns_equal_lines(
        columns: impl Fn(&mut [&mut [i32]], &mut Vec<i32>),
        line: impl Fn(&[i32]) -> Vec<i32>,
    ) {
        let mut block = Vec::new();
        for n in 2..40 {
            for cols in [1usize, 5, 64] {
                let data = samples(n * cols, n as u64 * 7 + cols as u64);
                let mut got = data.clone();
                let mut rows: Vec<&mut [i32]> = got.chunks_exact_mut(cols).collect();
                columns(&mut rows, &mut block);
                for c in 0..cols {
                    let column: Vec<i32> = (0..n).map(|i| data[i * cols + c]).collect();
                    let have: Vec<i32> = (0..n).map(|i| got[i * cols + c]).collect();
                    assert_eq!(have, line(&column), "n = {n}, cols {cols}, column {c}");
                }
            }
        }
    }
}
