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

use std::io::{Read, Seek, SeekFrom, Write};

pub use super::header::{SequenceHeader, SEQUENCE_MAGIC, SEQUENCE_VERSION};
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
    fn damaged(&self, frame: u64, reason: impl Into<String>) -> SequenceError {
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

/// An open `.wls` file: the header and where every frame lies.
#[derive(Debug)]
pub struct SequenceFile<R> {
    reader: R,
    /// The sequence header.
    pub header: SequenceHeader,
    /// Every frame (from the index, or from a scan of the records).
    pub frames: Vec<FrameEntry>,
    /// Bytes of the header.
    pub header_len: u64,
    /// Bytes of the file.
    pub file_len: u64,
    /// Offset of the index (`None` when it could not be read).
    pub index_offset: Option<u64>,
}

fn read_at<R: Read + Seek>(r: &mut R, offset: u64, len: u64) -> Result<Vec<u8>, SequenceError> {
    r.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

impl<R: Read + Seek> SequenceFile<R> {
    /// Opens a complete file: header, trailer and index, all checked
    /// (every later frame read is bounded by them). A file without its
    /// index is [`SequenceError::NoIndex`].
    pub fn open(reader: R, limits: SequenceLimits) -> Result<Self, SequenceError> {
        let mut f = Self::open_header(reader, limits)?;
        f.frames = f.read_index(limits)?;
        Ok(f)
    }

    /// Opens a file that may be cut or damaged at its end: from its index
    /// where that reads, else from a scan of the whole records before the
    /// cut. The error says why the index was not used.
    pub fn open_partial(
        reader: R,
        limits: SequenceLimits,
    ) -> Result<(Self, Option<SequenceError>), SequenceError> {
        let mut f = Self::open_header(reader, limits)?;
        match f.read_index(limits) {
            Ok(frames) => {
                f.frames = frames;
                Ok((f, None))
            }
            Err(e) => {
                f.index_offset = None;
                f.frames = f.scan(limits)?;
                Ok((f, Some(e)))
            }
        }
    }

    fn open_header(mut reader: R, limits: SequenceLimits) -> Result<Self, SequenceError> {
        let file_len = reader.seek(SeekFrom::End(0))?;
        let first = read_at(&mut reader, 0, file_len.min(14))?;
        if first.len() < 8 || first[..8] != SEQUENCE_MAGIC {
            return Err(SequenceError::BadMagic);
        }
        let header_len = SequenceHeader::announced_len(&first).ok_or(SequenceError::Truncated {
            what: "sequence header",
            needed: 14,
            available: file_len,
        })? as u64;
        if !(super::header::MIN_HEADER_BYTES as u64..=4096).contains(&header_len) {
            return Err(SequenceError::BadField {
                field: "header length",
                value: header_len,
                rule: "58..=4096",
            });
        }
        if header_len > file_len {
            return Err(SequenceError::Truncated {
                what: "sequence header",
                needed: header_len,
                available: file_len,
            });
        }
        let header = SequenceHeader::parse(&read_at(&mut reader, 0, header_len)?)?;
        let samples = header.format.samples();
        if samples > limits.max_frame_samples {
            return Err(SequenceError::TooLarge {
                what: "frame samples",
                value: samples,
                limit: limits.max_frame_samples,
            });
        }
        Ok(SequenceFile {
            reader,
            header,
            frames: Vec::new(),
            header_len,
            file_len,
            index_offset: None,
        })
    }

    fn read_index(&mut self, limits: SequenceLimits) -> Result<Vec<FrameEntry>, SequenceError> {
        let no_index = |m: String| SequenceError::NoIndex(m);
        if self.file_len < self.header_len + 12 + TRAILER_BYTES {
            return Err(no_index(format!(
                "{} bytes after the header",
                self.file_len - self.header_len
            )));
        }
        let trailer = read_at(
            &mut self.reader,
            self.file_len - TRAILER_BYTES,
            TRAILER_BYTES,
        )?;
        if trailer[8..] != END_MAGIC {
            return Err(no_index("the file does not end with the trailer".into()));
        }
        let at = u64::from_le_bytes(trailer[..8].try_into().expect("8 bytes"));
        if at < self.header_len || at > self.file_len - TRAILER_BYTES - 12 {
            return Err(SequenceError::Index(format!(
                "index offset {at} outside the file"
            )));
        }
        let index_len = self.file_len - TRAILER_BYTES - at;
        let head = read_at(&mut self.reader, at, 8)?;
        let count = u32_at(&head, 4) as u64;
        if head[..4] != INDEX_MAGIC {
            return Err(SequenceError::Index(format!(
                "no index magic at offset {at}"
            )));
        }
        if count > limits.max_frames {
            return Err(SequenceError::TooLarge {
                what: "frame count",
                value: count,
                limit: limits.max_frames,
            });
        }
        if index_len != 12 + count * ENTRY_BYTES {
            return Err(SequenceError::Index(format!(
                "{count} frames need an index of {} bytes, the file has {index_len}",
                12 + count * ENTRY_BYTES
            )));
        }
        let bytes = read_at(&mut self.reader, at, index_len)?;
        let body = &bytes[..bytes.len() - 4];
        let stored = u32_at(&bytes, bytes.len() - 4);
        let computed = crc32fast::hash(body);
        if stored != computed {
            return Err(SequenceError::IndexCrc { stored, computed });
        }
        let min = record_header_len(self.header.format.components());
        let mut next = self.header_len;
        let mut frames = Vec::with_capacity(count as usize);
        for e in body[8..].chunks_exact(ENTRY_BYTES as usize) {
            let entry = FrameEntry {
                offset: u64::from_le_bytes(e[..8].try_into().expect("8 bytes")),
                len: u32_at(e, 8) as u64,
                crc: u32_at(e, 12),
            };
            if entry.offset != next || entry.len < min {
                return Err(SequenceError::Index(format!(
                    "frame {} at {}+{}: records must follow one another from the header, each at least {min} bytes",
                    frames.len(),
                    entry.offset,
                    entry.len
                )));
            }
            next += entry.len;
            frames.push(entry);
        }
        if next != at {
            return Err(SequenceError::Index(format!(
                "the records end at {next}, the index starts at {at}"
            )));
        }
        self.index_offset = Some(at);
        Ok(frames)
    }

    /// The whole records from the header on, up to the first one that is
    /// cut or whose record header fails its checks.
    fn scan(&mut self, limits: SequenceLimits) -> Result<Vec<FrameEntry>, SequenceError> {
        let n = self.header.format.components();
        let head_len = record_header_len(n);
        let mut frames = Vec::new();
        let mut at = self.header_len;
        while at + head_len <= self.file_len && (frames.len() as u64) < limits.max_frames {
            let head = read_at(&mut self.reader, at, head_len)?;
            let Ok(lens) = check_record_header(&head, frames.len() as u64, n) else {
                break;
            };
            let len = head_len + lens.iter().sum::<u64>();
            if at + len > self.file_len {
                break;
            }
            frames.push(FrameEntry {
                offset: at,
                len,
                crc: u32_at(&head, head.len() - 8),
            });
            at += len;
        }
        Ok(frames)
    }

    /// The reader back.
    pub fn into_reader(self) -> R {
        self.reader
    }

    /// The frames (0 when none).
    pub fn frame_count(&self) -> u64 {
        self.frames.len() as u64
    }

    /// Reads frame `k` alone and checks it: its record header against
    /// the index, its data against its CRC. One codestream per component.
    pub fn read_frame(&mut self, k: u64) -> Result<Vec<Vec<u8>>, SequenceError> {
        let entry = *self
            .frames
            .get(k as usize)
            .ok_or(SequenceError::NoSuchFrame {
                frame: k,
                frames: self.frame_count(),
            })?;
        let n = self.header.format.components();
        let head_len = record_header_len(n);
        if entry.offset + entry.len > self.file_len {
            return Err(entry.damaged(k, "beyond the end of the file"));
        }
        let record = read_at(&mut self.reader, entry.offset, entry.len)?;
        let (head, data) = record.split_at(head_len as usize);
        let lens = check_record_header(head, k, n).map_err(|m| entry.damaged(k, m))?;
        if head_len + lens.iter().sum::<u64>() != entry.len {
            return Err(entry.damaged(k, "its lengths disagree with the index"));
        }
        let stored = u32_at(head, head.len() - 8);
        if stored != entry.crc {
            return Err(entry.damaged(k, "its data CRC disagrees with the index"));
        }
        let computed = crc32fast::hash(data);
        if computed != stored {
            return Err(entry.damaged(
                k,
                format!("data CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        let mut out = Vec::with_capacity(n);
        let mut at = 0usize;
        for len in lens {
            out.push(data[at..at + len as usize].to_vec());
            at += len as usize;
        }
        Ok(out)
    }
}

/// Checks a frame record's header (magic, number, component count, its
/// CRC); the codestream lengths.
fn check_record_header(head: &[u8], frame: u64, components: usize) -> Result<Vec<u64>, String> {
    if head[..4] != FRAME_MAGIC {
        return Err("no frame record magic".into());
    }
    let stored = u32_at(head, head.len() - 4);
    let computed = crc32fast::hash(&head[..head.len() - 4]);
    if stored != computed {
        return Err(format!(
            "record header CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"
        ));
    }
    if u32_at(head, 4) as u64 != frame {
        return Err(format!("the record says frame {}", u32_at(head, 4)));
    }
    if head[8] as usize != components {
        return Err(format!(
            "{} components, the header says {components}",
            head[8]
        ));
    }
    Ok((0..components)
        .map(|c| u32_at(head, 9 + 4 * c) as u64)
        .collect())
}
