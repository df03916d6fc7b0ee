//! Discrete wavelet transforms by lifting: CDF 5/3 (reversible integer), CDF
//! 9/7 (f32, JPEG 2000 normalization) and a fixed-point integer CDF 9/7, in
//! 1-D, 2-D and 3-D, forward and inverse, any number of levels, in place in a
//! caller buffer with caller-provided scratch.
//!
//! # Wavelets
//!
//! | type | samples | what it is |
//! |------|---------|------------|
//! | [`Cdf53`] | `i32` | JPEG 2000 Part 1 reversible 5/3: `d = x1 - ((x0 + x2) >> 1)`, `s = x0 + ((d0 + d1 + 2) >> 2)`. Lossless; bit-identical to OpenJPEG and OpenJPH. |
//! | [`Cdf97`] | `f32` | JPEG 2000 Part 1 irreversible 9/7 lifting (α, β, γ, δ), then low band `× 1/K`, high band `× K`. |
//! | [`Fixed97`] | `i32` | The same four 9/7 lifting steps in Q16 fixed point, each step rounded to an integer ([`fixed97`] documents the precision). Integer arithmetic only, so it is bit-identical on CPU, GPU and MCU, and exactly reversible. The K scaling is left out (no integer scaling is reversible): its low band is `K ×` and its high band `1/K ×` the [`Cdf97`] bands; [`gains`] accounts for that. |
//!
//! Integer arithmetic wraps (two's complement), as it does in the shaders, so
//! untrusted coefficients never panic; [`fixed97`] and [`lift53`] state the
//! input ranges within which nothing wraps.
//!
//! # Conventions
//!
//! - Boundaries use whole-sample symmetric extension (`x[-i] = x[i]`,
//!   `x[n-1+i] = x[n-1-i]`), the JPEG 2000 rule. Samples at even positions
//!   become low-pass coefficients, odd positions high-pass: a line of `n`
//!   samples has `ceil(n/2)` low and `floor(n/2)` high coefficients.
//! - A line of one sample is left unchanged (JPEG 2000: a lone sample at an
//!   even position is its own low-pass coefficient). So once a dimension has
//!   reached 1, further levels do not touch that axis and the subbands that
//!   would be high-pass along it are empty (zero width or height).
//! - 2-D levels run the **vertical pass before the horizontal pass**; inverse
//!   levels undo them in reverse order. This is the order of OpenJPEG and
//!   OpenJPH, and 5/3 results are bit-identical to theirs.
//! - Mallat layout: after each level the region `(w, h)` holds
//!   `LL | HL` over `LH | HH`, LL being `ceil(w/2) x ceil(h/2)`; the next
//!   level transforms LL. [`subbands`] gives every rectangle.
//! - Level 0 is the finest level. Orientation numbers are HL = 0, LH = 1,
//!   HH = 2 (LL = 3), as in the BPC-PaCo specification's table groups
//!   (detail group `3 * level + orientation`).
//! - 3-D ([`volume`]) runs Z, then Y, then X at each level, with per-axis
//!   level counts; an axis is transformed at level `i` when `i` is below its
//!   count.
//!
//! # Scratch
//!
//! Scratch is caller-provided and small: [`scratch_len_2d`] is
//! `max(width, height)` samples, [`volume::scratch_len_3d`] is
//! `max(width, height, depth)`. A larger scratch is used to run the vertical
//! (and Z) pass on several columns at once, which is much faster on a cache
//! CPU; results do not depend on the scratch size.
//!
//! # Example
//!
//! ```
//! use wavelane_core::dwt::{self, Cdf53, ImageLayout};
//!
//! let (w, h) = (13, 7);
//! let original: Vec<i32> = (0..w * h).map(|i| (i as i32 * 37) % 255 - 128).collect();
//! let mut image = original.clone();
//! let layout = ImageLayout::new(w, h);
//! let mut scratch = vec![0i32; dwt::scratch_len_2d(w, h)];
//! dwt::forward_2d::<Cdf53>(&mut image, layout, 2, &mut scratch).unwrap();
//! for band in dwt::subbands(w, h, 2).unwrap() {
//!     // band.rect is where band.level / band.orientation lives in `image`.
//!     assert!(band.rect.x + band.rect.width <= w);
//! }
//! dwt::inverse_2d::<Cdf53>(&mut image, layout, 2, &mut scratch).unwrap();
//! assert_eq!(image, original);
//! ```

pub mod block;
pub mod fixed97;
pub mod gains;
pub mod lift53;
pub mod lift97;
mod lines;
pub mod shift;
mod subbands;
mod two_d;
pub mod volume;

pub use fixed97::Fixed97;
pub use lift53::Cdf53;
pub use lift97::Cdf97;
pub use lines::mirror;
pub use subbands::{
    level_size, max_levels, subband_rect, subbands, Orientation, Rect, Subband, Subbands,
};
pub use two_d::{
    forward_2d, forward_level_2d, inverse_2d, inverse_level_2d, mallat_index, scratch_len_2d,
};

/// The wavelets, as a value (for CLIs, file headers, gain tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Wavelet {
    /// Reversible CDF 5/3 on `i32` ([`Cdf53`]).
    Cdf53,
    /// Irreversible CDF 9/7 on `f32` ([`Cdf97`]).
    Cdf97,
    /// Fixed-point CDF 9/7 on `i32` ([`Fixed97`]).
    Fixed97,
}

impl Wavelet {
    /// Lifting pairs each side of an output pair that a block-based
    /// implementation must load as halo (1 for 5/3, 2 for 9/7).
    pub const fn halo_pairs(self) -> usize {
        match self {
            Wavelet::Cdf53 => 1,
            Wavelet::Cdf97 | Wavelet::Fixed97 => 2,
        }
    }
}

/// A lifting wavelet: the 1-D transform of interleaved lines.
///
/// `data` holds `cols` independent lines of `n` samples, sample `i` of line
/// `c` at `data[i * cols + c]` (so `cols == 1` is one contiguous line, and a
/// row-major block of `n` rows by `cols` columns is `cols` vertical lines).
/// Forward leaves the result interleaved: low-pass coefficients at even `i`,
/// high-pass at odd `i`; inverse takes that form back. Lines of `n < 2` are
/// left unchanged.
pub trait Lifting {
    /// Sample type (`i32` or `f32`).
    type Sample: Copy + Default + PartialEq + core::fmt::Debug;
    /// The wavelet as a value.
    const WAVELET: Wavelet;
    /// Forward lifting of `cols` interleaved lines of `n` samples.
    fn forward_lines(data: &mut [Self::Sample], n: usize, cols: usize) -> Result<(), DwtError>;
    /// Inverse of [`Lifting::forward_lines`].
    fn inverse_lines(data: &mut [Self::Sample], n: usize, cols: usize) -> Result<(), DwtError>;
}

/// Errors of the transforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DwtError {
    /// A width, height or depth is zero.
    EmptyDimension,
    /// The row stride is smaller than the width, or the slice stride smaller
    /// than a slice.
    BadStride,
    /// The buffer is shorter than the layout needs.
    BufferTooSmall,
    /// The scratch buffer is shorter than the `scratch_len_*` function says.
    ScratchTooSmall,
    /// More levels than the size allows (see [`max_levels`]).
    TooManyLevels,
    /// A sample depth outside 1..=16 bits.
    BadBitDepth,
    /// Block geometry without room for output (halo fills the block).
    BadBlockGeometry,
    /// A reduced 3-D inverse the decomposition does not hold (see
    /// [`volume::reduction_is_held`]).
    BadReduction,
}

impl core::fmt::Display for DwtError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            DwtError::EmptyDimension => "image dimension is zero",
            DwtError::BadStride => "stride smaller than the row or slice it steps over",
            DwtError::BufferTooSmall => "buffer smaller than the image layout",
            DwtError::ScratchTooSmall => "scratch buffer too small",
            DwtError::TooManyLevels => "more decomposition levels than the image size allows",
            DwtError::BadBitDepth => "sample bit depth outside 1..=16",
            DwtError::BadBlockGeometry => "block too small for its halo",
            DwtError::BadReduction => {
                "a reduction the decomposition does not hold (more levels than an axis has, or one axis reduced where another is not)"
            }
        })
    }
}

impl core::error::Error for DwtError {}

/// Where a 2-D image lives in a buffer: `width x height` samples, row `y`
/// starting at `y * stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ImageLayout {
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Distance between row starts, in samples (`>= width`).
    pub stride: usize,
}

impl ImageLayout {
    /// A tightly packed image (`stride == width`).
    pub const fn new(width: usize, height: usize) -> Self {
        ImageLayout {
            width,
            height,
            stride: width,
        }
    }

    /// An image whose rows are `stride` samples apart.
    pub const fn with_stride(width: usize, height: usize, stride: usize) -> Self {
        ImageLayout {
            width,
            height,
            stride,
        }
    }

    /// Samples a buffer must hold: `(height - 1) * stride + width`.
    pub fn required_len(&self) -> usize {
        if self.width == 0 || self.height == 0 {
            0
        } else {
            (self.height - 1) * self.stride + self.width
        }
    }

    /// Checks the layout against a buffer length.
    pub fn validate(&self, buffer_len: usize) -> Result<(), DwtError> {
        if self.width == 0 || self.height == 0 {
            return Err(DwtError::EmptyDimension);
        }
        if self.stride < self.width {
            return Err(DwtError::BadStride);
        }
        let needed = (self.height - 1)
            .checked_mul(self.stride)
            .and_then(|v| v.checked_add(self.width))
            .ok_or(DwtError::BufferTooSmall)?;
        if buffer_len < needed {
            return Err(DwtError::BufferTooSmall);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_reduced;
