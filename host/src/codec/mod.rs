//! The wavelane image codec: DWT + dead-zone quantization + BPC-PaCo +
//! PCRD-Opt rate control, in the `.wl` container (docs/format.md,
//! docs/codec.md).
//!
//! Encoder: samples → level shift and fractional bits → colour transform
//! ([`colour`]) → DWT ([`crate::dwt`]) → quantization ([`quant`]) →
//! codeblocks ([`codeblocks`]) → BPC-PaCo ([`crate::bpc`]) → PCRD-Opt
//! ([`rate`]) → quality layers → file ([`file`]). Decoder: the reverse, at
//! full or reduced resolution, through any number of layers, from a whole
//! file or any prefix of one ([`progressive`]).
//!
//! Both run on the CPU (rayon) or the GPU ([`crate::backend::Backend`]);
//! for the 5/3 and fixed-point 9/7 wavelets the bytes are identical.
//!
//! ```
//! use wavelane::backend::Backend;
//! use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, RateTarget};
//!
//! let image = Image::from_fn(37, 21, 1, 8, |x, y, _| ((x * 7 + y * 3) % 256) as i32);
//! let encoded = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu)?;
//! let decoded = codec::decode(&encoded.bytes, &DecodeOptions::default(), &Backend::Cpu)?;
//! assert_eq!(decoded.image, image);
//!
//! let lossy = EncodeOptions { target: RateTarget::Bpp(1.0), ..EncodeOptions::default() };
//! let encoded = codec::encode(&image, &lossy, &Backend::Cpu)?;
//! assert!(encoded.bytes.len() as f64 <= 37.0 * 21.0 / 8.0 + 1.0);
//! # Ok::<(), wavelane::codec::CodecError>(())
//! ```

pub mod adapt;
pub mod codeblocks;
pub mod colour;
mod decode;
mod distortion;
mod early;
mod encode;
mod entropy;
pub mod file;
pub mod format;
pub mod header;
pub mod index;
mod metrics;
mod points;
pub mod progressive;
pub mod quant;
pub mod rate;
pub mod tables;
mod transform;

pub use decode::{decode, decode_skipping_damaged, DecodeOptions, DecodeReport, Decoded};
pub use encode::{
    encode, encode_owned, EncodeOptions, EncodeReport, Encoded, RateTarget, TableChoice,
    LOSSLESS_CODEBLOCK_HEIGHT, LOSSY_CODEBLOCK_HEIGHT,
};
pub use format::{ColourTransform, FormatError};
pub use metrics::{mse, psnr};

use crate::bpc::BpcError;
use crate::dwt::DwtHostError;

/// Errors of the codec.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The input image is not codable.
    #[error("invalid image: {0}")]
    Image(String),
    /// Options that contradict each other or the image.
    #[error("invalid options: {0}")]
    Options(String),
    /// The file is malformed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The wavelet transform failed.
    #[error(transparent)]
    Dwt(#[from] DwtHostError),
    /// The bitplane coder failed (for a decoder: the data is corrupt).
    #[error(transparent)]
    Bpc(#[from] BpcError),
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
fn sample_range_of(plane: &[i32]) -> (i32, i32) {
    use rayon::prelude::*;
    plane
        .par_chunks(1 << 16)
        .map(|chunk| {
            chunk
                .iter()
                .fold((i32::MAX, i32::MIN), |(a, b), &v| (a.min(v), b.max(v)))
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

    /// Checks sizes, bit depth and that every sample is in range.
    pub fn validate(&self) -> Result<(), CodecError> {
        let max = format::MAX_DIMENSION as usize;
        if self.width == 0 || self.height == 0 || self.width > max || self.height > max {
            return Err(CodecError::Image(format!(
                "size {}x{} outside 1..=65535",
                self.width, self.height
            )));
        }
        if !(1..=format::MAX_COMPONENTS as usize).contains(&self.planes.len()) {
            return Err(CodecError::Image(format!(
                "{} components (1..=4)",
                self.planes.len()
            )));
        }
        if !(1..=format::MAX_BIT_DEPTH).contains(&self.bit_depth) {
            return Err(CodecError::Image(format!(
                "bit depth {} (1..=16)",
                self.bit_depth
            )));
        }
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
