//! An H.264 intra encoder whose residuals are entropy coded with the CAVLC
//! of [`wavelane_core::cavlc`], on the CPU or on the GPU.
//!
//! It writes Annex B Baseline-profile streams: one SPS and PPS, then one IDR
//! picture per input frame, each a single I slice of Intra4x4 and
//! Intra16x16 macroblocks (4:2:0, flat quantisation at one QP, deblocking
//! off). Pictures whose size is not a multiple of 16 are padded by edge
//! replication and cropped in the SPS; odd sizes are first padded to even
//! (4:2:0 crops in 2-sample units), so the stream and the reconstruction
//! carry the even size. See `docs/h264.md`.

pub mod decode;
pub mod encode;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod input;
pub mod macroblock;
pub mod nal;
pub mod params;
pub mod picture;
pub mod predict;
pub mod transform;

pub use encode::{encode_sequence, CpuEntropy, EncodeOptions, Encoded, EntropyCoder};
pub use macroblock::MbModes;
pub use picture::{Picture, Plane};

use wavelane_core::bits::BitError;
use wavelane_core::cavlc::CavlcError;

/// Errors of the H.264 encoder, its input readers and its stream decoder.
#[derive(Debug, thiserror::Error)]
pub enum H264Error {
    /// Reading or writing a file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An image file could not be decoded.
    #[error("cannot read image: {0}")]
    Image(#[from] image::ImageError),
    /// A y4m file is malformed or uses an unsupported format.
    #[error("y4m: {0}")]
    Y4m(String),
    /// The input holds no frames.
    #[error("the input has no frames")]
    NoFrames,
    /// Frames must have an even, nonzero size (the readers pad odd sizes).
    #[error("frame size {width}x{height} is not even and nonzero")]
    OddSize {
        /// Width.
        width: usize,
        /// Height.
        height: usize,
    },
    /// All frames of a sequence must have the same size.
    #[error("frames of different sizes in one sequence")]
    SizeChange,
    /// QP outside 0..=51.
    #[error("QP {0} is outside 0..=51")]
    BadQp(u8),
    /// CAVLC failed.
    #[error("CAVLC: {0}")]
    Cavlc(#[from] CavlcError),
    /// Bit I/O failed.
    #[error("bitstream: {0}")]
    Bits(#[from] BitError),
    /// A stream given to the decoder is not one this crate can read.
    #[error("unsupported or invalid stream: {0}")]
    Stream(String),
    /// The GPU backend failed.
    #[cfg(feature = "gpu")]
    #[error("GPU: {0}")]
    Gpu(String),
}
