//! 2-D separable transforms in the Mallat layout: per level the vertical
//! pass (all columns), then the horizontal pass (all rows).

use super::subbands::{level_size, max_levels};
use super::{DwtError, ImageLayout, Lifting};

/// Scratch samples the 2-D transforms need: `max(width, height)`. Passing
/// more lets the vertical pass work on `scratch.len() / height` columns at a
/// time (faster on a cached CPU; same result).
pub const fn scratch_len_2d(width: usize, height: usize) -> usize {
    if width > height {
        width
    } else {
        height
    }
}

fn check(layout: ImageLayout, len: usize, scratch: usize, levels: u32) -> Result<(), DwtError> {
    layout.validate(len)?;
    if levels > max_levels(layout.width, layout.height) {
        return Err(DwtError::TooManyLevels);
    }
    if scratch < scratch_len_2d(layout.width, layout.height) {
        return Err(DwtError::ScratchTooSmall);
    }
    Ok(())
}

/// Forward transform, `levels` levels, in place. See the module docs for the
/// layout; `levels` may be 0 (nothing happens) up to
/// [`max_levels`](super::max_levels).
pub fn forward_2d<W: Lifting>(
    data: &mut [W::Sample],
    layout: ImageLayout,
    levels: u32,
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), levels)?;
    for level in 0..levels {
        let (w, h) = level_size(layout.width, layout.height, level);
        forward_level_2d::<W>(data, ImageLayout::with_stride(w, h, layout.stride), scratch)?;
    }
    Ok(())
}

/// Inverse of [`forward_2d`] with the same arguments.
pub fn inverse_2d<W: Lifting>(
    data: &mut [W::Sample],
    layout: ImageLayout,
    levels: u32,
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), levels)?;
    for level in (0..levels).rev() {
        let (w, h) = level_size(layout.width, layout.height, level);
        inverse_level_2d::<W>(data, ImageLayout::with_stride(w, h, layout.stride), scratch)?;
    }
    Ok(())
}

/// One forward level on the region `layout` (vertical pass, then horizontal).
pub fn forward_level_2d<W: Lifting>(
    data: &mut [W::Sample],
    layout: ImageLayout,
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), 0)?;
    vertical::<W>(data, layout, scratch, true)?;
    horizontal::<W>(data, layout, scratch, true)
}

/// One inverse level on the region `layout` (horizontal pass, then vertical).
pub fn inverse_level_2d<W: Lifting>(
    data: &mut [W::Sample],
    layout: ImageLayout,
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), 0)?;
    horizontal::<W>(data, layout, scratch, false)?;
    vertical::<W>(data, layout, scratch, false)
}

/// Where interleaved position `i` of a line of `n` goes in the Mallat line:
/// evens to `i/2`, odds to `ceil(n/2) + i/2`.
#[inline]
pub fn mallat_index(i: usize, n: usize) -> usize {
    if i.is_multiple_of(2) {
        i / 2
    } else {
        n.div_ceil(2) + i / 2
    }
}

pub(crate) fn horizontal<W: Lifting>(
    data: &mut [W::Sample],
    l: ImageLayout,
    scratch: &mut [W::Sample],
    forward: bool,
) -> Result<(), DwtError> {
    let n = l.width;
    if n < 2 {
        return Ok(());
    }
    let line = &mut scratch[..n];
    for y in 0..l.height {
        let row = &mut data[y * l.stride..y * l.stride + n];
        if forward {
            line.copy_from_slice(row);
            W::forward_lines(line, n, 1)?;
            for (i, &v) in line.iter().enumerate() {
                row[mallat_index(i, n)] = v;
            }
        } else {
            for (i, v) in line.iter_mut().enumerate() {
                *v = row[mallat_index(i, n)];
            }
            W::inverse_lines(line, n, 1)?;
            row.copy_from_slice(line);
        }
    }
    Ok(())
}

pub(crate) fn vertical<W: Lifting>(
    data: &mut [W::Sample],
    l: ImageLayout,
    scratch: &mut [W::Sample],
    forward: bool,
) -> Result<(), DwtError> {
    let n = l.height;
    if n < 2 {
        return Ok(());
    }
    // As many columns per strip as the scratch holds.
    let strip = (scratch.len() / n).clamp(1, l.width);
    let mut x0 = 0;
    while x0 < l.width {
        let cols = strip.min(l.width - x0);
        let block = &mut scratch[..n * cols];
        for i in 0..n {
            let src = if forward { i } else { mallat_index(i, n) };
            let at = src * l.stride + x0;
            block[i * cols..(i + 1) * cols].copy_from_slice(&data[at..at + cols]);
        }
        if forward {
            W::forward_lines(block, n, cols)?;
        } else {
            W::inverse_lines(block, n, cols)?;
        }
        for i in 0..n {
            let dst = if forward { mallat_index(i, n) } else { i };
            let at = dst * l.stride + x0;
            data[at..at + cols].copy_from_slice(&block[i * cols..(i + 1) * cols]);
        }
        x0 += cols;
    }
    Ok(())
}
