//! The wavelane image codec: DWT + dead-zone quantization + BPC-PaCo +
//! PCRD-Opt rate control, in the `.wl` container (docs/format.md,
//! docs/codec.md).
//!
//! Encoder: options → coding parameters (`plan`) → level shift and colour
//! transform → DWT → quantization → codeblock formation → (early
//! termination) → BPC-PaCo coding (and the table fit) → PCRD-Opt rate
//! control → packing into the file ([`mod@file`]). Decoder: the reverse, at
//! full or reduced resolution, through any number of layers, from a whole
//! file or any prefix of one ([`progressive`]).
//!
//! Every stage is a module of `stages` with one entry point that takes the
//! [`Backend`](crate::backend::Backend) and runs the stage on the CPU
//! (rayon) or the GPU; for the 5/3 and fixed-point 9/7 wavelets the bytes
//! are identical. docs/codec.md has the module map.
//!
//! The modules import one another without cycles (the `acyclic` test
//! checks it): this file only declares and re-exports, and no module
//! imports from it.
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

// The file format.
pub mod adapt;
pub mod file;
pub mod format;
pub mod header;
pub mod index;
pub mod progressive;

// Algorithms the stages apply.
pub mod codeblocks;
pub mod colour;
pub mod quant;
pub mod rate;

// What the caller gives and gets.
mod error;
mod image;
mod input;
mod interleaved;
mod metrics;
mod options;
mod report;

// Planning, the models rate control decides by, and the table fit.
mod distortion;
mod early;
mod plan;
mod planes;
mod points;
pub(crate) mod presets;
mod psnr_search;
mod table_fit;
pub mod tables;
mod weights;

// The pipeline.
mod decode;
mod encode;
pub(crate) mod stages;

#[cfg(test)]
mod acyclic;

pub use decode::{decode, decode_interleaved, decode_skipping_damaged};
pub use encode::{encode, encode_interleaved, encode_owned};
pub use error::{CodecError, OptionsError};
pub use format::{ColourTransform, FormatError};
pub use image::Image;
pub use interleaved::{Interleaved, SampleBuf};
pub use metrics::{mse, psnr};
pub use options::{
    DecodeOptions, EncodeOptions, RateTarget, TableChoice, LOSSLESS_CODEBLOCK_HEIGHT,
    LOSSY_CODEBLOCK_HEIGHT,
};
pub use report::{
    DecodeReport, Decoded, EncodeReport, Encoded, Stage, StageDevice, StageTimes, Transfers,
};
