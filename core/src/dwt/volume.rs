//! 3-D (volumetric) transforms with a level count per axis (JPEG 2000
//! Part 10 style).
//!
//! At level `i` (0 = finest) an axis is transformed when `i` is below its
//! level count, so `levels = [lx, ly, lz]` gives `max(lx, ly, lz)` levels; the
//! axes with fewer levels stop early. Each level runs Z, then Y, then X on
//! the low-pass region of the previous level, so with `lz == 0` every slice
//! gets exactly the 2-D transform of [`super::forward_2d`] (when `lx == ly`).
//! The result is the 3-D Mallat layout: each axis splits into low then high.

use super::subbands::max_levels;
use super::two_d::{horizontal, vertical};
use super::{DwtError, ImageLayout, Lifting};

/// Where a volume lives in a buffer: sample `(x, y, z)` at
/// `z * slice_stride + y * row_stride + x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VolumeLayout {
    /// Samples per row.
    pub width: usize,
    /// Rows per slice.
    pub height: usize,
    /// Slices.
    pub depth: usize,
    /// Distance between row starts (`>= width`).
    pub row_stride: usize,
    /// Distance between slice starts (`>= (height - 1) * row_stride + width`).
    pub slice_stride: usize,
}

impl VolumeLayout {
    /// A tightly packed volume.
    pub const fn new(width: usize, height: usize, depth: usize) -> Self {
        VolumeLayout {
            width,
            height,
            depth,
            row_stride: width,
            slice_stride: width * height,
        }
    }

    /// The dimensions as `[x, y, z]`.
    pub const fn dims(&self) -> [usize; 3] {
        [self.width, self.height, self.depth]
    }

    /// Checks the layout against a buffer length.
    pub fn validate(&self, buffer_len: usize) -> Result<(), DwtError> {
        if self.depth == 0 {
            return Err(DwtError::EmptyDimension);
        }
        let plane = ImageLayout::with_stride(self.width, self.height, self.row_stride);
        plane.validate(usize::MAX)?;
        if self.slice_stride < plane.required_len() {
            return Err(DwtError::BadStride);
        }
        let needed = (self.depth - 1)
            .checked_mul(self.slice_stride)
            .and_then(|v| v.checked_add(plane.required_len()))
            .ok_or(DwtError::BufferTooSmall)?;
        if buffer_len < needed {
            return Err(DwtError::BufferTooSmall);
        }
        Ok(())
    }
}

/// Scratch samples the 3-D transforms need: `max(width, height, depth)`.
/// More scratch lets the Y and Z passes do several columns at once.
pub const fn scratch_len_3d(width: usize, height: usize, depth: usize) -> usize {
    let m = if width > height { width } else { height };
    if m > depth {
        m
    } else {
        depth
    }
}

/// Number of levels of a per-axis level count: `max(lx, ly, lz)`.
pub fn total_levels(levels: [u32; 3]) -> u32 {
    levels[0].max(levels[1]).max(levels[2])
}

/// Which axes level `level` transforms: `[x, y, z]`.
pub fn axes_at(levels: [u32; 3], level: u32) -> [bool; 3] {
    [level < levels[0], level < levels[1], level < levels[2]]
}

/// Size `[x, y, z]` of the region level `level` transforms (with
/// `level == total_levels(levels)`: the final low band).
pub fn region_at(dims: [usize; 3], levels: [u32; 3], level: u32) -> [usize; 3] {
    let mut out = dims;
    for (a, size) in out.iter_mut().enumerate() {
        for _ in 0..level.min(levels[a]) {
            *size = size.div_ceil(2);
        }
    }
    out
}

/// The region and axes level `level` transforms when the finest
/// `reduce[a]` levels of axis `a` are left out (a reduced-resolution
/// decode, [`inverse_3d_reduced`]): an axis is transformed at the levels
/// it has from `reduce[a]` up, and below that its extent stays the low
/// band's after `reduce[a]` levels.
pub fn level_region_reduced(
    dims: [usize; 3],
    levels: [u32; 3],
    reduce: [u32; 3],
    level: u32,
) -> ([usize; 3], [bool; 3]) {
    let full = region_at(dims, levels, level);
    let mut region = full;
    let mut axes = axes_at(levels, level);
    for a in 0..3 {
        if level < reduce[a] {
            region[a] = region_at(dims, levels, reduce[a])[a];
            axes[a] = false;
        }
    }
    (region, axes)
}

/// Whether the decomposition holds the volume reduced by `reduce[a]`
/// levels along axis `a` without new analysis: `reduce[a] <= levels[a]`,
/// and no level synthesizes one axis while it leaves out another (there
/// the detail subbands would need analysing again along the reduced axis:
/// they were filtered along it fewer times than the result needs). The
/// same count on every axis, limited to each axis' levels
/// ([`uniform_reduction`]), is always held.
pub fn reduction_is_held(levels: [u32; 3], reduce: [u32; 3]) -> bool {
    (0..3).all(|a| reduce[a] <= levels[a])
        && (0..total_levels(levels)).all(|l| {
            let reduced = (0..3).any(|a| l < reduce[a]);
            let synthesized = (0..3).any(|a| l >= reduce[a] && l < levels[a]);
            !(reduced && synthesized)
        })
}

/// `n` levels left out on every axis, or as many as the axis has.
pub fn uniform_reduction(levels: [u32; 3], n: u32) -> [u32; 3] {
    levels.map(|l| l.min(n))
}

/// Size `[x, y, z]` of the volume a reduced decode gives.
pub fn reduced_dims(dims: [usize; 3], levels: [u32; 3], reduce: [u32; 3]) -> [usize; 3] {
    let mut out = dims;
    for (a, v) in out.iter_mut().enumerate() {
        *v = region_at(dims, levels, reduce[a])[a];
    }
    out
}

/// Checks per-axis level counts: none may exceed
/// [`max_levels`] of the largest dimension (as in 2-D, an
/// axis that has reached length 1 is simply left alone by further levels).
pub fn check_levels(dims: [usize; 3], levels: [u32; 3]) -> Result<(), DwtError> {
    let largest = dims[0].max(dims[1]).max(dims[2]);
    if levels.iter().any(|&l| l > max_levels(largest, 1)) {
        return Err(DwtError::TooManyLevels);
    }
    Ok(())
}

fn check(l: VolumeLayout, len: usize, scratch: usize, levels: [u32; 3]) -> Result<(), DwtError> {
    l.validate(len)?;
    check_levels(l.dims(), levels)?;
    if scratch < scratch_len_3d(l.width, l.height, l.depth) {
        return Err(DwtError::ScratchTooSmall);
    }
    Ok(())
}

/// Forward 3-D transform in place.
pub fn forward_3d<W: Lifting>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), levels)?;
    for level in 0..total_levels(levels) {
        let (region, axes) = (
            region_at(layout.dims(), levels, level),
            axes_at(levels, level),
        );
        level_3d::<W>(data, layout, region, axes, scratch, true)?;
    }
    Ok(())
}

/// Inverse of [`forward_3d`] with the same arguments.
pub fn inverse_3d<W: Lifting>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    inverse_3d_reduced::<W>(data, layout, levels, [0; 3], scratch)
}

/// Inverse of [`forward_3d`] that leaves out the finest `reduce[a]` levels
/// of axis `a`: afterwards the [`reduced_dims`] corner at the origin holds
/// exactly the low band of a forward transform of `reduce` levels, the
/// volume at that resolution. `reduce` must be one the decomposition holds
/// ([`reduction_is_held`]), else [`DwtError::BadReduction`].
pub fn inverse_3d_reduced<W: Lifting>(
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
    reduce: [u32; 3],
    scratch: &mut [W::Sample],
) -> Result<(), DwtError> {
    check(layout, data.len(), scratch.len(), levels)?;
    if !reduction_is_held(levels, reduce) {
        return Err(DwtError::BadReduction);
    }
    for level in (0..total_levels(levels)).rev() {
        let (region, axes) = level_region_reduced(layout.dims(), levels, reduce, level);
        level_3d::<W>(data, layout, region, axes, scratch, false)?;
    }
    Ok(())
}

fn level_3d<W: Lifting>(
    data: &mut [W::Sample],
    l: VolumeLayout,
    [w, h, d]: [usize; 3],
    [tx, ty, tz]: [bool; 3],
    scratch: &mut [W::Sample],
    forward: bool,
) -> Result<(), DwtError> {
    // Z lines of row y: a "2-D image" of width w and height d whose rows are
    // slices apart.
    let z_pass = |data: &mut [W::Sample], scratch: &mut [W::Sample]| -> Result<(), DwtError> {
        if tz {
            for y in 0..h {
                let rows = ImageLayout::with_stride(w, d, l.slice_stride);
                vertical::<W>(&mut data[y * l.row_stride..], rows, scratch, forward)?;
            }
        }
        Ok(())
    };
    let plane = ImageLayout::with_stride(w, h, l.row_stride);
    if !forward {
        for z in 0..d {
            let slice = &mut data[z * l.slice_stride..];
            if tx {
                horizontal::<W>(slice, plane, scratch, false)?;
            }
            if ty {
                vertical::<W>(slice, plane, scratch, false)?;
            }
        }
        return z_pass(data, scratch);
    }
    z_pass(data, scratch)?;
    for z in 0..d {
        let slice = &mut data[z * l.slice_stride..];
        if ty {
            vertical::<W>(slice, plane, scratch, true)?;
        }
        if tx {
            horizontal::<W>(slice, plane, scratch, true)?;
        }
    }
    Ok(())
}

/// One subband of a 3-D decomposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VolumeSubband {
    /// Level (0 = finest); for the final low band, the number of levels.
    pub level: u8,
    /// High-pass axes: bit 0 = X, bit 1 = Y, bit 2 = Z; 0 for the final low
    /// band. For masks 1..=3 (`lz` exhausted) `mask - 1` is the 2-D
    /// [`Orientation`](super::Orientation) number (HL, LH, HH).
    pub mask: u8,
    /// First sample `[x, y, z]`.
    pub origin: [usize; 3],
    /// Extent `[x, y, z]` (a component may be 0).
    pub size: [usize; 3],
}

/// Every subband of a 3-D decomposition: the final low band first, then each
/// level from the coarsest to the finest with its masks in increasing order
/// (only masks whose high axes are transformed at that level).
pub fn volume_subbands(
    dims: [usize; 3],
    levels: [u32; 3],
) -> Result<impl Iterator<Item = VolumeSubband>, DwtError> {
    if dims.contains(&0) {
        return Err(DwtError::EmptyDimension);
    }
    check_levels(dims, levels)?;
    let total = total_levels(levels);
    let low = VolumeSubband {
        level: total as u8,
        mask: 0,
        origin: [0; 3],
        size: region_at(dims, levels, total),
    };
    let details = (0..total).rev().flat_map(move |level| {
        let region = region_at(dims, levels, level);
        let axes = axes_at(levels, level);
        (1u8..8).filter_map(move |mask| {
            let mut origin = [0; 3];
            let mut size = region;
            for a in 0..3 {
                let high = mask & (1 << a) != 0;
                if high && !axes[a] {
                    return None;
                }
                if axes[a] {
                    let lo = region[a].div_ceil(2);
                    if high {
                        origin[a] = lo;
                        size[a] = region[a] - lo;
                    } else {
                        size[a] = lo;
                    }
                }
            }
            Some(VolumeSubband {
                level: level as u8,
                mask,
                origin,
                size,
            })
        })
    });
    Ok(core::iter::once(low).chain(details))
}
