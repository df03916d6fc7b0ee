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

/// A writable codeblock given as its rows, each a slice of its own of
/// `width` coefficients: the decoder output for a codeblock whose rows lie
/// between other codeblocks' rows in a shared array (a subband of an
/// image), where no strided slice is the codeblock's alone. The host
/// decodes every codeblock of an image in parallel straight into the
/// image's array this way ([`decode_phases_rows`](super::decode_phases_rows)).
#[derive(Debug)]
pub struct CodeblockRows<'r, 'a> {
    rows: &'r mut [&'a mut [i32]],
    width: usize,
}

impl<'r, 'a> CodeblockRows<'r, 'a> {
    /// A view of `rows`; errors unless there are 1..=256 rows, all of one
    /// length in 1..=64 ([`GeometryError::BadGeometry`]).
    pub fn new(rows: &'r mut [&'a mut [i32]]) -> Result<Self, GeometryError> {
        let width = rows.first().map_or(0, |r| r.len());
        let ok = (1..=MAX_HEIGHT).contains(&rows.len())
            && (1..=MAX_WIDTH).contains(&width)
            && rows.iter().all(|r| r.len() == width);
        if !ok {
            return Err(GeometryError::BadGeometry);
        }
        Ok(CodeblockRows { rows, width })
    }

    /// Columns (1..=64).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows (1..=256).
    pub fn height(&self) -> usize {
        self.rows.len()
    }
}

/// What a decoder writes: `height` rows of `width` coefficients, as a
/// strided slice ([`CodeblockMut`]) or as separate rows
/// ([`CodeblockRows`]).
pub(crate) trait BlockOut {
    fn width(&self) -> usize;
    fn height(&self) -> usize;
    /// Row `y` (`y < height`), `width` long.
    fn row_mut(&mut self, y: usize) -> &mut [i32];
    /// Sets every coefficient to 0.
    fn clear(&mut self) {
        for y in 0..self.height() {
            self.row_mut(y).fill(0);
        }
    }
}

impl BlockOut for CodeblockMut<'_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    #[inline]
    fn row_mut(&mut self, y: usize) -> &mut [i32] {
        CodeblockMut::row_mut(self, y)
    }
}

impl BlockOut for CodeblockRows<'_, '_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.rows.len()
    }
    #[inline]
    fn row_mut(&mut self, y: usize) -> &mut [i32] {
        &mut *self.rows[y]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_must_be_one_width_within_the_limits() {
        let mut data = [0i32; 2 * 65];
        let (a, b) = data.split_at_mut(65);
        let mut rows = [&mut a[..3], &mut b[..3]];
        assert_eq!(CodeblockRows::new(&mut rows).unwrap().height(), 2);
        let mut rows = [&mut a[..3], &mut b[..4]];
        assert_eq!(
            CodeblockRows::new(&mut rows).unwrap_err(),
            GeometryError::BadGeometry
        );
        let mut rows = [&mut a[..65]];
        assert!(CodeblockRows::new(&mut rows).is_err());
        let mut rows: [&mut [i32]; 0] = [];
        assert!(CodeblockRows::new(&mut rows).is_err());
        let mut empty = [&mut b[..0]];
        assert!(CodeblockRows::new(&mut empty).is_err());
    }
}
