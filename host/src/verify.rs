//! Integrity checks of `.wl` and `.wlv` files without decoding the image
//! (`wavelane verify`; docs/format.md, "Checking files").
//!
//! A `.wl` file is checked as the decoder's own parser sees it
//! ([`Container::parse`]: every header field, the header CRC, the
//! codeblock index), then for completeness (the bytes its index promises)
//! and every data segment's CRC-32. No codeword is decoded, so the cost is
//! reading the bytes and one CRC pass over them. A version 2 `.wlv` file
//! is checked the same way: its parser checks the structure, the index CRC
//! and completeness, then every chunk's CRC ([`vle::partial`]). A version
//! 1 `.wlv` file records only the CRC-32 of the original data, so checking
//! it means Huffman decoding it on the CPU ([`vle::decompress`]).

use std::fmt;
use std::path::Path;

use crate::backend::Backend;
use crate::codec::file::{Container, ReadOptions};
use crate::codec::format::{FormatError, MAGIC as WL_MAGIC};
use crate::vle::{self, format::MAGIC as WLV_MAGIC};
use crate::volume::format::{is_volume, VolumeContainer};

/// The file kinds `verify` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A `.wl` image file.
    Wl,
    /// A `.wlv` VLE file.
    Wlv,
    /// A volume `.wl` file (docs/format.md, "Volume `.wl` files").
    Volume,
    /// A `.wls` sequence file (docs/format.md, "Sequence files").
    Sequence,
    /// Neither magic matched (or the file is shorter than a magic).
    Unknown,
}

/// A data segment of a `.wl` file whose CRC-32 does not match its bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DamagedSegment {
    /// Index of the segment in file order ([`Container::segments`]).
    pub segment: usize,
    /// Its resolution (0 = LL).
    pub resolution: usize,
    /// Its quality layer.
    pub layer: usize,
    /// Offset of its first byte.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The first and last codeblock (file order) with codewords in it: a
    /// segment CRC cannot tell which of them holds the changed byte.
    pub codeblocks: (usize, usize),
}

impl fmt::Display for DamagedSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = self.codeblocks;
        write!(
            f,
            "segment {} (resolution {}, layer {}, bytes {}..{}, codeblocks {a}..={b}): CRC mismatch",
            self.segment,
            self.resolution,
            self.layer,
            self.offset,
            self.offset + self.len
        )
    }
}

/// What [`verify_bytes`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// The kind of file, by its magic.
    pub kind: Kind,
    /// Bytes present.
    pub bytes: u64,
    /// Bytes the file's own header and index promise (`None` where its
    /// structure could not be read that far).
    pub expected_bytes: Option<u64>,
    /// Segments whose CRC fails (`.wl` and volume files).
    pub damaged: Vec<DamagedSegment>,
    /// Everything wrong, one message each; empty for a good file.
    pub problems: Vec<String>,
}

impl Verified {
    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Describes segment `k` of a parsed file as damaged.
pub fn damaged_segment(c: &Container<'_>, k: usize) -> DamagedSegment {
    let s = c.segments[k];
    let (first, last) =
        c.index
            .segment_codeblocks(|i| c.blocks[i].resolution as usize, s.resolution, s.layer);
    DamagedSegment {
        segment: k,
        resolution: s.resolution,
        layer: s.layer,
        offset: s.offset,
        len: s.len,
        codeblocks: (first, last),
    }
}

/// The complete length of a `.wl` file from its main header, or why it
/// cannot be read (`wavelane decode` uses it to tell truncation).
pub fn wl_expected_len(bytes: &[u8]) -> Result<u64, FormatError> {
    Container::parse(bytes, ReadOptions::default()).map(|c| c.full_len)
}

/// Records the length a `.wl` or volume file's index promises, and a
/// problem where the file is shorter.
fn note_length(v: &mut Verified, present: usize, promised: u64) {
    v.expected_bytes = Some(promised);
    if (present as u64) < promised {
        v.problems.push(format!(
            "truncated: {present} of the {promised} bytes its index promises"
        ));
    }
}

fn verify_wl(bytes: &[u8], v: &mut Verified) {
    // Trailing data after a complete file is reported by the parser; a
    // cut file parses as the prefix it is.
    let c = match Container::parse(bytes, ReadOptions::default()) {
        Ok(c) => c,
        Err(e) => {
            v.problems.push(e.to_string());
            return;
        }
    };
    note_length(v, bytes.len(), c.full_len);
    for (k, s) in c.segments.iter().enumerate() {
        if s.len == 0 {
            continue;
        }
        match c.check_segment(k) {
            Ok(_) => {}
            Err(FormatError::SegmentCrc { .. }) => {
                let d = damaged_segment(&c, k);
                v.problems.push(d.to_string());
                v.damaged.push(d);
            }
            Err(e) => v.problems.push(e.to_string()),
        }
    }
}

fn verify_wlv(bytes: &[u8], v: &mut Verified) {
    // A cut file is read as far as it goes, so that its promised length
    // and its intact chunks are known; the cut is reported first.
    let f = match vle::format::VleFile::parse_prefix(bytes) {
        Ok(f) => f,
        Err(e) => {
            v.problems.push(e.to_string());
            return;
        }
    };
    v.expected_bytes = Some(f.byte_len() as u64);
    if (bytes.len() as u64) < f.byte_len() as u64 {
        v.problems.push(format!(
            "truncated: {} of the {} bytes its header promises",
            bytes.len(),
            f.byte_len()
        ));
    }
    if f.version >= vle::format::VERSION_CHUNK_CRCS {
        for c in vle::partial::damaged_chunks(&f) {
            v.problems.push(format!("chunk {c}: CRC mismatch"));
        }
    } else if v.problems.is_empty() {
        if let Err(e) = vle::decompress(bytes, &Backend::Cpu) {
            v.problems.push(e.to_string());
        }
    }
}

/// A volume file: its header and index as the decoder parses them (the
/// header CRC among them), its length, and every segment's CRC. The voxel
/// budget is not applied: checking allocates only the codeblock list,
/// which the parser bounds by the file's own index bytes. A cut file is
/// read as far as it goes, so that the segments before the cut are
/// checked too.
fn verify_volume(bytes: &[u8], v: &mut Verified) {
    let c = match VolumeContainer::parse_prefix(bytes, u64::MAX) {
        Ok(c) => c,
        Err(e) => {
            v.problems.push(e.to_string());
            return;
        }
    };
    note_length(v, bytes.len(), c.full_len);
    for k in 0..c.segments.len() {
        if let Err(FormatError::SegmentCrc { .. }) = c.check_segment(k) {
            let d = volume_damaged_segment(&c, k);
            v.problems.push(d.to_string());
            v.damaged.push(d);
        }
    }
}

/// Describes segment `k` of a parsed volume file as damaged.
pub fn volume_damaged_segment(c: &VolumeContainer<'_>, k: usize) -> DamagedSegment {
    let s = c.segments[k];
    DamagedSegment {
        segment: k,
        resolution: s.resolution,
        layer: s.layer,
        offset: s.offset as u64,
        len: s.len as u64,
        codeblocks: c.segment_codeblocks(k),
    }
}

/// Checks the bytes of one file.
pub fn verify_bytes(bytes: &[u8]) -> Verified {
    let kind = if bytes.starts_with(&WL_MAGIC) {
        Kind::Wl
    } else if bytes.starts_with(&WLV_MAGIC) {
        Kind::Wlv
    } else if is_volume(bytes) {
        Kind::Volume
    } else if bytes.starts_with(&crate::sequence::container::SEQUENCE_MAGIC) {
        Kind::Sequence
    } else {
        Kind::Unknown
    };
    let mut v = Verified {
        kind,
        bytes: bytes.len() as u64,
        expected_bytes: None,
        damaged: Vec::new(),
        problems: Vec::new(),
    };
    match kind {
        Kind::Wl => verify_wl(bytes, &mut v),
        Kind::Wlv => verify_wlv(bytes, &mut v),
        Kind::Volume => verify_volume(bytes, &mut v),
        Kind::Sequence => {
            let c = crate::sequence::verify::verify_sequence(bytes);
            v.expected_bytes = c.expected_bytes;
            v.problems = c.problems;
        }
        Kind::Unknown => v
            .problems
            .push("not a wavelane file (no .wl, .wlv, volume or sequence magic)".into()),
    }
    v
}

/// Reads and checks one file.
pub fn verify_file(path: &Path) -> std::io::Result<Verified> {
    Ok(verify_bytes(&std::fs::read(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{self, EncodeOptions, Image};

    fn sample_wl() -> Vec<u8> {
        let (w, h) = (96, 80);
        let plane: Vec<i32> = (0..w * h)
            .map(|i| ((i % w) * 3 + (i / w) * 5) as i32 % 256)
            .collect();
        let image = Image {
            width: w,
            height: h,
            bit_depth: 8,
            signed: false,
            planes: vec![plane],
        };
        let opts = EncodeOptions {
            levels: Some(2),
            layers: 2,
            ..EncodeOptions::default()
        };
        codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes
    }

    #[test]
    fn good_cut_and_damaged_wl_files() {
        let bytes = sample_wl();
        let good = verify_bytes(&bytes);
        assert!(good.ok(), "{:?}", good.problems);
        assert_eq!(good.expected_bytes, Some(bytes.len() as u64));
        let cut = verify_bytes(&bytes[..bytes.len() - 1]);
        assert!(!cut.ok() && cut.problems[0].starts_with("truncated"));
        let c = Container::parse(&bytes, ReadOptions::default()).unwrap();
        let k = c.segments.iter().rposition(|s| s.len > 0).unwrap();
        let mut bad = bytes.clone();
        bad[c.segments[k].offset as usize] ^= 1;
        let v = verify_bytes(&bad);
        assert_eq!(v.damaged.len(), 1);
        assert_eq!(v.damaged[0].segment, k);
        assert!(v.problems[0].contains("codeblocks"), "{}", v.problems[0]);
        assert_eq!(verify_bytes(b"hello").kind, Kind::Unknown);
    }

    #[test]
    fn good_cut_and_damaged_volume_files() {
        use crate::volume::{self, SampleType, Volume, VolumeOptions};
        let vol = Volume::from_fn(20, 12, 9, SampleType::I16, |x, y, z| {
            (x * y) as i32 - 40 * z as i32
        });
        let bytes = volume::encode_volume(&vol, &VolumeOptions::lossless(), &Backend::Cpu)
            .unwrap()
            .bytes;
        let good = verify_bytes(&bytes);
        assert_eq!(good.kind, Kind::Volume);
        assert!(good.ok(), "{:?}", good.problems);
        let cut = verify_bytes(&bytes[..bytes.len() - 3]);
        assert!(
            !cut.ok() && cut.problems[0].starts_with("truncated"),
            "{:?}",
            cut.problems
        );
        assert_eq!(cut.expected_bytes, Some(bytes.len() as u64));
        let mut bad = bytes.clone();
        let last = bad.len() - 2;
        bad[last] ^= 0x10;
        let v = verify_bytes(&bad);
        assert!(
            v.problems.iter().any(|p| p.contains("CRC mismatch")),
            "{:?}",
            v.problems
        );
    }
}
