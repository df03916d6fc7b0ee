//! The codec's input and output: a planar image of 1..=4 components.

use super::colour;
use super::error::CodecError;
use super::format;

/// What the encoder plans by: an image's size and sample type, whatever
/// its layout ([`Image`] or [`super::interleaved::Interleaved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub width: usize,
    pub height: usize,
    pub components: usize,
    pub bit_depth: u8,
    pub signed: bool,
}

impl Shape {
    /// Samples over all components.
    pub fn samples(&self) -> usize {
        self.width * self.height * self.components
    }

    /// Checks the size, the component count and the bit depth.
    pub fn validate(&self) -> Result<(), CodecError> {
        let max = format::MAX_DIMENSION as usize;
        if self.width == 0 || self.height == 0 || self.width > max || self.height > max {
            return Err(CodecError::Image(format!(
                "size {}x{} outside 1..=65535",
                self.width, self.height
            )));
        }
        if !(1..=format::MAX_COMPONENTS as usize).contains(&self.components) {
            return Err(CodecError::Image(format!(
                "{} components (1..=4)",
                self.components
            )));
        }
        if !(1..=format::MAX_BIT_DEPTH).contains(&self.bit_depth) {
            return Err(CodecError::Image(format!(
                "bit depth {} (1..=16)",
                self.bit_depth
            )));
        }
        Ok(())
    }
}

/// A planar image of 1..=4 components, all of one bit depth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Bits per sample, 1..=16.
    pub bit_depth: u8,
    /// Samples are signed (`-2^(b-1)..2^(b-1)`) rather than `0..2^b`.
    pub signed: bool,
    /// One row-major plane of `width * height` samples per component.
    pub planes: Vec<Vec<i32>>,
}

/// Smallest and largest sample of a plane (`(i32::MAX, i32::MIN)` when
/// empty), in parallel chunks: it runs before any other stage, so on one
/// core it would be serial time (it is memory-bound on large images).
pub(super) fn sample_range_of<T: Copy + Into<i32> + Sync>(plane: &[T]) -> (i32, i32) {
    use rayon::prelude::*;
    plane
        .par_chunks(1 << 16)
        .map(|chunk| {
            chunk.iter().fold((i32::MAX, i32::MIN), |(a, b), &v| {
                (a.min(v.into()), b.max(v.into()))
            })
        })
        .reduce(|| (i32::MAX, i32::MIN), |x, y| (x.0.min(y.0), x.1.max(y.1)))
}

impl Image {
    /// An unsigned image whose sample of component `c` at `(x, y)` is
    /// `f(x, y, c)`.
    pub fn from_fn(
        width: usize,
        height: usize,
        components: usize,
        bit_depth: u8,
        f: impl Fn(usize, usize, usize) -> i32,
    ) -> Self {
        let planes = (0..components)
            .map(|c| {
                (0..width * height)
                    .map(|i| f(i % width, i / width, c))
                    .collect()
            })
            .collect();
        Image {
            width,
            height,
            bit_depth,
            signed: false,
            planes,
        }
    }

    /// Number of components.
    pub fn components(&self) -> usize {
        self.planes.len()
    }

    /// Samples over all components.
    pub fn samples(&self) -> usize {
        self.width * self.height * self.planes.len()
    }

    /// Its size and sample type.
    pub(crate) fn shape(&self) -> Shape {
        Shape {
            width: self.width,
            height: self.height,
            components: self.planes.len(),
            bit_depth: self.bit_depth,
            signed: self.signed,
        }
    }

    /// Checks sizes, bit depth and that every sample is in range.
    pub fn validate(&self) -> Result<(), CodecError> {
        self.shape().validate()?;
        let (lo, hi) = colour::sample_range(self.bit_depth, self.signed);
        for (c, p) in self.planes.iter().enumerate() {
            if p.len() != self.width * self.height {
                return Err(CodecError::Image(format!(
                    "plane {c} has {} samples",
                    p.len()
                )));
            }
            // Range first with a branch-free min/max (it vectorizes) on all
            // cores, the search only to report the offending sample.
            let (min, max) = sample_range_of(p);
            if min >= lo && max <= hi {
                continue;
            }
            if let Some(v) = p.iter().find(|&&v| v < lo || v > hi) {
                return Err(CodecError::Image(format!(
                    "sample {v} of plane {c} outside {lo}..={hi} ({}-bit)",
                    self.bit_depth
                )));
            }
        }
        Ok(())
    }
}
