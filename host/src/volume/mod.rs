//! Volumes end to end: NIfTI-1, multi-page TIFF and raw volumes in
//! ([`io`]), the 3-D DWT with a level count per axis, BPC-PaCo on the 2-D
//! codeblocks of the subbands' slices, PCRD-Opt over the whole volume, in
//! a versioned volume container ([`format`](mod@format), docs/format.md "Volume
//! files"); decoding of any range of slices reading only the codeblocks
//! it needs. docs/volumes.md is the user's guide.
//!
//! ```
//! use wavelane::backend::Backend;
//! use wavelane::volume::{self, SampleType, Volume, VolumeOptions, VolumeDecodeOptions};
//!
//! let v = Volume::from_fn(20, 12, 9, SampleType::I16, |x, y, z| (x * y) as i32 - 40 * z as i32);
//! let encoded = volume::encode_volume(&v, &VolumeOptions::lossless(), &Backend::Cpu)?;
//! let decoded = volume::decode_volume(&encoded.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)?;
//! assert_eq!(decoded.volume, v);
//! # Ok::<(), wavelane::volume::VolumeError>(())
//! ```

mod decode;
mod encode;
pub mod format;
pub mod geometry;
pub mod io;
mod plan;
mod types;

pub use decode::{decode_volume, VolumeDecodeOptions, VolumeDecodeReport, VolumeDecoded};
pub use encode::{encode_volume, VolumeEncodeReport, VolumeEncoded, VolumeStageTimes};
pub use plan::{default_levels, subband_energy_3d, VolumeOptions, VolumeTarget};
pub use types::{SampleType, Volume, VolumeError};

#[cfg(test)]
mod partial_tests;
#[cfg(test)]
mod tests;
