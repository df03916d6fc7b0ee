//! Views of a codeblock inside a larger coefficient array (row stride), with
//! the geometry checked once at construction so the coders can index freely.

use super::{GeometryError, MAX_HEIGHT, MAX_WIDTH};

/// Checks `1 <= width <= 64`, `1 <= height <= 256`, `stride >= width` and
/// that a slice of `len` elements holds the last row.
fn check_geometry(
    len: usize,
    stride: usize,
    width: usize,
    height: usize,
) -> Result<(), GeometryError> {
    if width == 0 || width > MAX_WIDTH || height == 0 || height > MAX_HEIGHT {
        return Err(GeometryError::BadGeometry);
    }
    if stride < width {
        return Err(GeometryError::BadGeometry);
    }
    let needed = (height - 1)
        .checked_mul(stride)
        .and_then(|n| n.checked_add(width))
        .ok_or(GeometryError::BadGeometry)?;
    if len < needed {
        return Err(GeometryError::SliceTooShort);
    }
    Ok(())
}

/// A read-only codeblock: `height` rows of `width` coefficients, row `y`
/// starting at `y * stride` in the slice.
#[derive(Debug, Clone, Copy)]
pub struct Codeblock<'a> {
    data: &'a [i32],
    stride: usize,
    width: usize,
    height: usize,
}

impl<'a> Codeblock<'a> {
    /// A view of `data`; errors if the geometry is out of range or the slice
    /// is too short.
    pub fn new(
        data: &'a [i32],
        stride: usize,
        width: usize,
        height: usize,
    ) -> Result<Self, GeometryError> {
        check_geometry(data.len(), stride, width, height)?;
        Ok(Codeblock {
            data,
            stride,
            width,
            height,
        })
    }

    /// Columns (1..=64).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows (1..=256).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Row `y` (`y < height`).
    #[inline]
    pub fn row(&self, y: usize) -> &'a [i32] {
        &self.data[y * self.stride..y * self.stride + self.width]
    }

    /// The coefficient at row `y`, column `x`.
    #[inline]
    pub fn get(&self, y: usize, x: usize) -> i32 {
        self.data[y * self.stride + x]
    }
}

/// A writable codeblock (decoder output), same layout as [`Codeblock`].
#[derive(Debug)]
pub struct CodeblockMut<'a> {
    data: &'a mut [i32],
    stride: usize,
    width: usize,
    height: usize,
}

impl<'a> CodeblockMut<'a> {
    /// A view of `data`; errors if the geometry is out of range or the slice
    /// is too short.
    pub fn new(
        data: &'a mut [i32],
        stride: usize,
        width: usize,
        height: usize,
    ) -> Result<Self, GeometryError> {
        check_geometry(data.len(), stride, width, height)?;
        Ok(CodeblockMut {
            data,
            stride,
            width,
            height,
        })
    }

    /// Columns (1..=64).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows (1..=256).
    pub fn height(&self) -> usize {
        self.height
    }

    /// The coefficient at row `y`, column `x`.
    #[inline]
    pub fn get(&self, y: usize, x: usize) -> i32 {
        self.data[y * self.stride + x]
    }

    /// Sets the coefficient at row `y`, column `x`.
    #[inline]
    pub fn set(&mut self, y: usize, x: usize, v: i32) {
        self.data[y * self.stride + x] = v;
    }

    /// Row `y` (`y < height`), writable.
    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [i32] {
        &mut self.data[y * self.stride..y * self.stride + self.width]
    }

    /// Sets every coefficient of the codeblock to 0.
    pub fn clear(&mut self) {
        for y in 0..self.height {
            self.data[y * self.stride..y * self.stride + self.width].fill(0);
        }
    }

    /// A read-only view of the same coefficients.
    pub fn as_codeblock(&self) -> Codeblock<'_> {
        Codeblock {
            data: self.data,
            stride: self.stride,
            width: self.width,
            height: self.height,
        }
    }
}
