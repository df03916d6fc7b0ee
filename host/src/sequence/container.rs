//! The `.wls` container (docs/format.md "Sequence files"): the sequence
//! header ([`SequenceHeader`]), then one record per frame, then the frame
//! index and a 16-byte trailer that points at it.
//!
//! A frame record is a small header (its number, one length per
//! component, the CRC-32 of its data and its own CRC-32) followed by one
//! 1-component `.wl` codestream per component. The index lists every
//! record's offset, length and data CRC under one CRC-32, so that reading
//! frame k seeks to it and reads it alone. Records describe themselves, so
//! a file cut before its index still yields its whole frames
//! ([`SequenceFile::open_partial`]).
//!
//! Sizes are checked before anything is allocated: the frame samples and
//! frame count against [`SequenceLimits`], every length against the file.

use std::io::Write;

pub use super::header::{SequenceHeader, SEQUENCE_MAGIC, SEQUENCE_VERSION};
pub use super::reader::SequenceFile;
use super::SequenceError;

/// The first 4 bytes of a frame record.
pub const FRAME_MAGIC: [u8; 4] = *b"WLSF";
/// The first 4 bytes of the frame index.
pub const INDEX_MAGIC: [u8; 4] = *b"WLSI";
/// The last 8 bytes of a complete file.
pub const END_MAGIC: [u8; 8] = *b"WLSEND\r\n";
/// Bytes of the trailer: the index offset and [`END_MAGIC`].
pub const TRAILER_BYTES: u64 = 16;
/// Bytes of one index entry.
pub const ENTRY_BYTES: u64 = 16;

/// Bytes of a frame record's header for `components` components.
pub fn record_header_len(components: usize) -> u64 {
    17 + 4 * components as u64
}

/// What a reader accepts: the decoder's memory bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceLimits {
    /// Most samples of one frame, all components (default: the image
    /// decoder's budget, 2^28).
    pub max_frame_samples: u64,
    /// Most frames (default 2^24: an index of 256 MiB at most).
    pub max_frames: u64,
}

impl Default for SequenceLimits {
    fn default() -> Self {
        SequenceLimits {
            max_frame_samples: crate::codec::format::DEFAULT_MAX_SAMPLES,
            max_frames: 1 << 24,
        }
    }
}

/// Where a frame lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FrameEntry {
    /// Offset of its record.
    pub offset: u64,
    /// Bytes of its record (header and data).
    pub len: u64,
    /// CRC-32 of its data (the codestreams).
    pub crc: u32,
}

impl FrameEntry {
    pub(crate) fn damaged(&self, frame: u64, reason: impl Into<String>) -> SequenceError {
        SequenceError::DamagedFrame {
            frame,
            offset: self.offset,
            end: self.offset + self.len,
            reason: reason.into(),
        }
    }
}

/// Writes a `.wls` file frame by frame; nothing but the index is kept.
#[derive(Debug)]
pub struct SequenceWriter<W> {
    writer: W,
    components: usize,
    offset: u64,
    entries: Vec<FrameEntry>,
}

impl<W: Write> SequenceWriter<W> {
    /// Writes the sequence header.
    pub fn new(mut writer: W, header: &SequenceHeader) -> Result<Self, SequenceError> {
        let bytes = header.to_bytes()?;
        writer.write_all(&bytes)?;
        Ok(SequenceWriter {
            writer,
            components: header.format.components(),
            offset: bytes.len() as u64,
            entries: Vec::new(),
        })
    }

    /// Appends a frame: one codestream per component.
    pub fn write_frame(&mut self, codestreams: &[Vec<u8>]) -> Result<(), SequenceError> {
        assert_eq!(
            codestreams.len(),
            self.components,
            "one codestream per component"
        );
        let mut crc = crc32fast::Hasher::new();
        let mut head = Vec::with_capacity(record_header_len(self.components) as usize);
        head.extend_from_slice(&FRAME_MAGIC);
        head.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        head.push(self.components as u8);
        for c in codestreams {
            let len = u32::try_from(c.len()).map_err(|_| {
                SequenceError::Format(format!("a codestream of {} bytes (at most 4 GiB)", c.len()))
            })?;
            head.extend_from_slice(&len.to_le_bytes());
            crc.update(c);
        }
        let crc = crc.finalize();
        head.extend_from_slice(&crc.to_le_bytes());
        let head_crc = crc32fast::hash(&head);
        head.extend_from_slice(&head_crc.to_le_bytes());
        let len = head.len() as u64 + codestreams.iter().map(|c| c.len() as u64).sum::<u64>();
        if len > u32::MAX as u64 {
            return Err(SequenceError::Format(format!(
                "a frame of {len} bytes (the index holds at most 4 GiB per frame)"
            )));
        }
        self.writer.write_all(&head)?;
        for c in codestreams {
            self.writer.write_all(c)?;
        }
        self.entries.push(FrameEntry {
            offset: self.offset,
            len,
            crc,
        });
        self.offset += len;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.entries.len()
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// Writes the index and trailer; the writer back.
    pub fn finish(mut self) -> Result<W, SequenceError> {
        let mut index = Vec::with_capacity(12 + self.entries.len() * ENTRY_BYTES as usize);
        index.extend_from_slice(&INDEX_MAGIC);
        index.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&(e.len as u32).to_le_bytes());
            index.extend_from_slice(&e.crc.to_le_bytes());
        }
        let crc = crc32fast::hash(&index);
        index.extend_from_slice(&crc.to_le_bytes());
        index.extend_from_slice(&self.offset.to_le_bytes());
        index.extend_from_slice(&END_MAGIC);
        self.writer.write_all(&index)?;
        Ok(self.writer)
    }
}
