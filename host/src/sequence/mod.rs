//! Video and image sequences: Y4M and raw planar video in ([`y4m`],
//! [`raw`]), read and written one frame at a time; the `.wls` sequence
//! container ([`container`], docs/format.md "Sequence files"), which holds
//! one image codestream per component of every frame, each at the
//! component's own size, and a frame index so that decoding frame k reads
//! only frame k; encoding and decoding of frames ([`code`]).
//!
//! ```
//! use std::io::Cursor;
//! use wavelane::backend::Backend;
//! use wavelane::codec::EncodeOptions;
//! use wavelane::sequence::{self, ChromaLayout, Frame, FrameFormat, SequenceHeader};
//! use wavelane::sequence::container::{SequenceFile, SequenceLimits, SequenceWriter};
//!
//! let format = FrameFormat { width: 16, height: 8, layout: ChromaLayout::C420, bit_depth: 8 };
//! let frame = Frame::from_fn(&format, |x, y, c| (x * 9 + y * 5 + c * 40) as i32 % 256);
//! let header = SequenceHeader::new(format, Default::default(), &EncodeOptions::lossless());
//! let mut w = SequenceWriter::new(Vec::new(), &header)?;
//! let streams = sequence::encode_frame(&frame, &format, &EncodeOptions::lossless(), &Backend::Cpu)?;
//! w.write_frame(&streams)?;
//! let bytes = w.finish()?;
//! let mut file = SequenceFile::open(Cursor::new(&bytes), SequenceLimits::default())?;
//! let back = sequence::decode_frame(&file.read_frame(0)?, &format, &Backend::Cpu)?;
//! assert_eq!(back, frame);
//! # Ok::<(), wavelane::sequence::SequenceError>(())
//! ```

pub mod code;
pub mod container;
pub mod frame;
mod header;
pub mod raw;
mod reader;
pub mod rgb;
pub mod verify;
pub mod y4m;

#[cfg(test)]
mod tests;

pub use code::{component_options, decode_frame, encode_frame};
pub use container::SequenceHeader;
pub use frame::{ChromaLayout, Frame, FrameFormat};
pub use y4m::VideoParams;

use crate::codec::CodecError;

/// Errors of sequence input, the container and frame coding.
#[derive(Debug, thiserror::Error)]
pub enum SequenceError {
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A malformed Y4M stream.
    #[error("y4m: {0}")]
    Y4m(String),
    /// A frame format that cannot be coded (size, layout, depth, samples).
    #[error("frame format: {0}")]
    Format(String),
    /// The input ends inside a frame.
    #[error("frame {frame} is truncated: {have} of its {need} bytes")]
    TruncatedFrame {
        /// The frame (from 0).
        frame: u64,
        /// Bytes present.
        have: u64,
        /// Bytes a frame takes.
        need: u64,
    },
    /// Not a `.wls` file.
    #[error("not a wavelane sequence file (bad magic bytes)")]
    BadMagic,
    /// A container field outside its documented range.
    #[error("sequence field `{field}` = {value} is invalid: {rule}")]
    BadField {
        /// Field name as in docs/format.md.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The sequence header's CRC-32 does not match.
    #[error("sequence header CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    HeaderCrc {
        /// CRC in the file.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// The file ends before the structure being read.
    #[error("truncated: the {what} needs {needed} bytes, only {available} present")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// No frame index at the end: the file was cut (or its end damaged).
    #[error("truncated or damaged at the end: no frame index ({0}); decode the whole frames that are there with --partial")]
    NoIndex(String),
    /// The frame index's CRC-32 does not match.
    #[error("frame index CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    IndexCrc {
        /// CRC in the file.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// A malformed frame index.
    #[error("frame index: {0}")]
    Index(String),
    /// A frame whose record or data fails its checks.
    #[error("frame {frame} (bytes {offset}..{end}) is damaged: {reason}")]
    DamagedFrame {
        /// The frame (from 0).
        frame: u64,
        /// Offset of its record.
        offset: u64,
        /// End of its record.
        end: u64,
        /// What is wrong.
        reason: String,
    },
    /// A frame beyond the last.
    #[error("frame {frame} asked for; the sequence has {frames}")]
    NoSuchFrame {
        /// The frame asked for.
        frame: u64,
        /// Frames in the sequence.
        frames: u64,
    },
    /// More than the reader's memory budget.
    #[error("{what} of {value} exceeds the reader's limit of {limit}")]
    TooLarge {
        /// What is counted.
        what: &'static str,
        /// The count in the file.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// Coding a component failed (for a decoder: the codestream is bad).
    #[error("component {component}: {source}")]
    Codec {
        /// The component (0 = luma).
        component: usize,
        /// The codec's error.
        #[source]
        source: CodecError,
    },
}
