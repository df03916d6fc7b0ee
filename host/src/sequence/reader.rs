//! Reading `.wls` files ([`SequenceFile`]): the header, then the index
//! through the trailer (or, for a cut file, a scan of the whole records),
//! then any frame alone, each checked against its CRCs and the index.
//! Layout and rules: [`super::container`], docs/format.md "Sequence files".

use std::io::{Read, Seek, SeekFrom};

use super::container::{
    record_header_len, FrameEntry, SequenceLimits, END_MAGIC, ENTRY_BYTES, FRAME_MAGIC,
    INDEX_MAGIC, SEQUENCE_MAGIC, TRAILER_BYTES,
};
use super::header::SequenceHeader;
use super::SequenceError;

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
